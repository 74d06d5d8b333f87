package cairn

import (
	"iter"

	"cairn.invalid/sdk/internal/wire"
)

// Properties is a property map that stays in its wire form until something reads it: the
// inputs and state in a provider's requests, and what its results return.
//
// Reading it (the readers below) validates and decodes the host's table once; returning it
// unread or unchanged sends the host's own table back without validating or encoding
// anything, and the default Diff compares tables in place. So the calls most providers leave
// to the defaults (Check returning the inputs, Diff of inputs, Read returning the recorded
// state) cost no decoding at all. Map gives the decoded map to change; what is sent back is
// then encoded from it.
//
// The zero Properties is an empty map. Copies share their contents.
type Properties struct{ p *props }

type props struct {
	// The host's table, while the properties still say what it says.
	table     *wire.Table
	validated bool
	m         *PropertyMap
}

// PropertiesOf makes Properties of a map (nil is empty).
func PropertiesOf(m *PropertyMap) Properties {
	if m == nil {
		m = NewPropertyMap()
	}
	return Properties{&props{m: m}}
}

// FromTable makes Properties of a table the host sent; it is validated when first read. The
// host only sends tables it encoded, so a malformed one is a host bug: reading it panics with
// "the host sent a malformed property table", which the SDK reports as the call's failure.
func FromTable(t Table) Properties { return Properties{&props{table: &t}} }

// Table is the wire form to send back: the received table when nothing changed.
func (p Properties) Table() Table {
	if p.p == nil {
		return EncodeMap(nil)
	}
	if p.p.table != nil {
		return *p.p.table
	}
	return EncodeMap(p.p.m)
}

// Received is the host's table while the properties are still exactly that (validated).
func (p Properties) Received() (*Table, bool) {
	if p.p == nil || p.p.table == nil {
		return nil, false
	}
	p.validate()
	return p.p.table, true
}

func (p Properties) validate() {
	if !p.p.validated {
		if err := wire.ValidateMap(p.p.table); err != nil {
			panic("cairn: the host sent a malformed property table: " + err.Error())
		}
		p.p.validated = true
	}
}

// view is the decoded map, for reading.
func (p Properties) view() *PropertyMap {
	if p.p == nil {
		return nil
	}
	if p.p.m == nil {
		p.validate()
		p.p.m = decodeRoot(p.p.table)
	}
	return p.p.m
}

// Map is the decoded map, to read or change; once taken, the properties are encoded from it
// when sent back (the readers below keep the host's table).
func (p *Properties) Map() *PropertyMap {
	if p.p == nil {
		p.p = &props{m: NewPropertyMap()}
	}
	m := p.view()
	p.p.table = nil
	return m
}

// Len is the number of properties.
func (p Properties) Len() int { return p.view().Len() }

// Get is a top-level property.
func (p Properties) Get(key string) (Value, bool) { return p.view().Get(key) }

// Has reports whether a top-level property is present.
func (p Properties) Has(key string) bool { return p.view().Has(key) }

// Keys are the property names, in order.
func (p Properties) Keys() []string { return p.view().Keys() }

// All iterates over the properties in order.
func (p Properties) All() iter.Seq2[string, Value] { return p.view().All() }

// Clone is a copy of the decoded map.
func (p Properties) Clone() *PropertyMap { return p.view().Clone() }

// Lookup reads a property path (see PropertyMap.Lookup).
func (p Properties) Lookup(path string) (Value, Found) { return p.view().Lookup(path) }

// IsUnknown reports whether the property at path is not known yet.
func (p Properties) IsUnknown(path string) bool { return p.view().IsUnknown(path) }

// Value is the property at path when present.
func (p Properties) Value(path string) (Value, bool) { return p.view().Value(path) }

// GetString reads a string (see PropertyMap.GetString).
func (p Properties) GetString(path string) (string, bool) { return p.view().GetString(path) }

// GetNumber reads a number.
func (p Properties) GetNumber(path string) (float64, bool) { return p.view().GetNumber(path) }

// GetInt reads an integer.
func (p Properties) GetInt(path string) (int64, bool) { return p.view().GetInt(path) }

// GetBool reads a boolean.
func (p Properties) GetBool(path string) (bool, bool) { return p.view().GetBool(path) }

// GetArray reads an array.
func (p Properties) GetArray(path string) ([]Value, bool) { return p.view().GetArray(path) }

// GetObject reads an object.
func (p Properties) GetObject(path string) (*PropertyMap, bool) { return p.view().GetObject(path) }

// RequireString reads a string strictly (see PropertyMap.RequireString).
func (p Properties) RequireString(path string) (string, error) {
	return p.view().RequireString(path)
}

// RequireNumber reads a number strictly.
func (p Properties) RequireNumber(path string) (float64, error) {
	return p.view().RequireNumber(path)
}

// RequireInt reads an integer strictly.
func (p Properties) RequireInt(path string) (int64, error) { return p.view().RequireInt(path) }

// RequireBool reads a boolean strictly.
func (p Properties) RequireBool(path string) (bool, error) { return p.view().RequireBool(path) }

// RequireObject reads an object strictly.
func (p Properties) RequireObject(path string) (*PropertyMap, error) {
	return p.view().RequireObject(path)
}

// RequireArray reads an array strictly.
func (p Properties) RequireArray(path string) ([]Value, error) {
	return p.view().RequireArray(path)
}

// Equal compares the decoded maps.
func (p Properties) Equal(o Properties) bool { return p.view().Equal(o.view()) }

// String shows the properties for debugging (secrets hidden).
func (p Properties) String() string { return p.view().String() }
