package cairn

import (
	"fmt"
	"iter"
	"slices"
	"strconv"
)

// PropertyMap is an object's properties, in insertion order (the order they cross the
// boundary and are stored in). The zero value is an empty map ready to use; a nil
// *PropertyMap reads as empty.
type PropertyMap struct {
	keys   []string
	values []Value
	// index finds keys in larger maps; nil while the map is small enough to scan.
	index map[string]int
}

// indexAbove is the size from which a map keeps an index of its keys.
const indexAbove = 16

// NewPropertyMap is an empty map.
func NewPropertyMap() *PropertyMap { return &PropertyMap{} }

// Props builds a map from key, value pairs; values go through ValueOf:
//
//	cairn.Props("length", 16, "special", false, "result", cairn.Secret("s3cr3t"))
//
// It panics on an odd number of arguments or a key that is not a string (a program error).
func Props(kv ...any) *PropertyMap {
	if len(kv)%2 != 0 {
		panic("cairn.Props: an odd number of arguments (want key, value pairs)")
	}
	m := &PropertyMap{keys: make([]string, 0, len(kv)/2), values: make([]Value, 0, len(kv)/2)}
	for i := 0; i < len(kv); i += 2 {
		key, ok := kv[i].(string)
		if !ok {
			panic(fmt.Sprintf("cairn.Props: key %d is a %T, not a string", i/2, kv[i]))
		}
		m.Set(key, kv[i+1])
	}
	return m
}

// Len is the number of properties.
func (m *PropertyMap) Len() int {
	if m == nil {
		return 0
	}
	return len(m.keys)
}

func (m *PropertyMap) find(key string) int {
	if m == nil {
		return -1
	}
	if m.index != nil {
		if i, ok := m.index[key]; ok {
			return i
		}
		return -1
	}
	for i, k := range m.keys {
		if k == key {
			return i
		}
	}
	return -1
}

// Get is the value of a top-level property (for paths, see Lookup and the typed readers).
func (m *PropertyMap) Get(key string) (Value, bool) {
	if i := m.find(key); i >= 0 {
		return m.values[i], true
	}
	return Value{}, false
}

// Has reports whether the property is present.
func (m *PropertyMap) Has(key string) bool { return m.find(key) >= 0 }

// Set sets a top-level property (through ValueOf), keeping its place when it exists, and
// returns the map for chaining.
func (m *PropertyMap) Set(key string, value any) *PropertyMap {
	v := ValueOf(value)
	if i := m.find(key); i >= 0 {
		m.values[i] = v
		return m
	}
	m.keys = append(m.keys, key)
	m.values = append(m.values, v)
	if m.index != nil {
		m.index[key] = len(m.keys) - 1
	} else if len(m.keys) > indexAbove {
		m.reindex()
	}
	return m
}

func (m *PropertyMap) reindex() {
	m.index = make(map[string]int, len(m.keys))
	for i, k := range m.keys {
		m.index[k] = i
	}
}

// Delete removes a property; it reports whether there was one.
func (m *PropertyMap) Delete(key string) bool {
	i := m.find(key)
	if i < 0 {
		return false
	}
	m.keys = slices.Delete(m.keys, i, i+1)
	m.values = slices.Delete(m.values, i, i+1)
	if m.index != nil {
		m.reindex()
	}
	return true
}

// Keys are the property names, in order.
func (m *PropertyMap) Keys() []string {
	if m == nil {
		return nil
	}
	return slices.Clone(m.keys)
}

// All iterates over the properties in order: `for key, value := range m.All()`.
func (m *PropertyMap) All() iter.Seq2[string, Value] {
	return func(yield func(string, Value) bool) {
		if m == nil {
			return
		}
		for i, k := range m.keys {
			if !yield(k, m.values[i]) {
				return
			}
		}
	}
}

// Clone is a copy of the map (values are immutable and shared).
func (m *PropertyMap) Clone() *PropertyMap {
	out := &PropertyMap{}
	if m != nil {
		out.keys, out.values = slices.Clone(m.keys), slices.Clone(m.values)
		if m.index != nil {
			out.reindex()
		}
	}
	return out
}

// Equal is deep, structural equality of the properties, whatever their order (as maps of the
// host compare).
func (m *PropertyMap) Equal(o *PropertyMap) bool {
	if m.Len() != o.Len() {
		return false
	}
	for i := 0; i < m.Len(); i++ {
		v, ok := o.Get(m.keys[i])
		if !ok || !m.values[i].Equal(v) {
			return false
		}
	}
	return true
}

// Unsecret is a copy with every secret marker removed.
func (m *PropertyMap) Unsecret() *PropertyMap {
	out, _ := Object(m).Unsecret().AsObject()
	return out
}

// String shows the map for debugging (secrets hidden).
func (m *PropertyMap) String() string {
	s := "{"
	for i := 0; i < m.Len(); i++ {
		if i > 0 {
			s += ", "
		}
		s += strconv.Quote(m.keys[i]) + ": " + m.values[i].String()
	}
	return s + "}"
}
