package cairn

import (
	"math"

	"cairn.invalid/sdk/internal/wire"
)

// Table is a value as it crosses the component boundary: the WIT `value` node table (see
// wit/provider.wit). Encode and Decode convert; providers and programs rarely need them.
type Table = wire.Table

// Encode makes the table of a value. Encoding never fails; it is iterative, so any depth
// encodes (the host refuses what is deeper than it reads).
func Encode(v Value) Table {
	e := encoder{}
	e.reserve(1)
	e.fill(0, v)
	return e.finish()
}

// EncodeMap makes the table of a property map: an object root (also for an empty map).
func EncodeMap(m *PropertyMap) Table {
	e := encoder{nodes: make([]uint32, 0, (m.Len()+1)*wire.Words)}
	e.reserve(1)
	e.object(0, m)
	return e.finish()
}

// Decode validates a table (every rule of the format; see wire.Validate) and decodes its
// value. A table with no nodes is an error here: a single value was expected.
func Decode(t Table) (Value, error) {
	if err := wire.Validate(&t); err != nil {
		return Value{}, err
	}
	if t.Empty() {
		return Value{}, wire.Errorf("the value has no nodes")
	}
	return decodeNode(&t, 0), nil
}

// DecodeMap validates a table meant as a property map (an object root, or no nodes or a null
// root for an empty map) and decodes it.
func DecodeMap(t Table) (*PropertyMap, error) {
	if err := wire.ValidateMap(&t); err != nil {
		return nil, err
	}
	return decodeRoot(&t), nil
}

// decodeRoot decodes a table that passed wire.ValidateMap.
func decodeRoot(t *Table) *PropertyMap {
	if t.Empty() || t.Kind(0) == wire.KindNull {
		return NewPropertyMap()
	}
	return decodeObject(t, 0)
}

// decodeNode decodes a node of a validated table; it recurses at most wire.MaxDepth levels.
func decodeNode(t *Table, i uint32) Value {
	a, b := t.Operands(i)
	switch t.Kind(i) {
	case wire.KindBool:
		return Bool(a != 0)
	case wire.KindNumber:
		return Number(math.Float64frombits(uint64(a) | uint64(b)<<32))
	case wire.KindText:
		return String(t.Text(i))
	case wire.KindArray:
		items := make([]Value, b)
		for k := range items {
			items[k] = decodeNode(t, a+uint32(k))
		}
		return Array(items...)
	case wire.KindObject:
		return Object(decodeObject(t, i))
	case wire.KindSecret:
		inner := decodeNode(t, a)
		return Value{kind: KindSecret, ref: &inner}
	case wire.KindUnknown:
		return Unknown()
	case wire.KindAsset:
		return AssetValue(decodeAsset(&t.Extras[a]))
	case wire.KindArchive:
		return ArchiveValue(decodeArchive(t, &t.Extras[a]))
	case wire.KindReference:
		x := &t.Extras[a]
		r := ResourceReference{URN: x.URN, PackageVersion: x.PackageVersion}
		if x.ID != nil {
			id := decodeNode(t, *x.ID)
			r.ID = &id
		}
		return Reference(r)
	case wire.KindOutput:
		x := &t.Extras[a]
		o := OutputValue{Secret: x.Secret, Dependencies: x.Dependencies}
		if x.Value != nil {
			inner := decodeNode(t, *x.Value)
			o.Value = &inner
		}
		return Output(o)
	}
	return Null()
}

func decodeObject(t *Table, i uint32) *PropertyMap {
	a, b := t.Operands(i)
	m := &PropertyMap{keys: make([]string, b), values: make([]Value, b)}
	for k := uint32(0); k < b; k++ {
		m.keys[k] = t.Key(a + k)
		m.values[k] = decodeNode(t, a+k)
	}
	if b > indexAbove {
		m.reindex()
	}
	return m
}

func decodeAsset(x *wire.Extra) Asset {
	return Asset{Hash: x.Hash, Source: AssetSource(x.Source), Value: x.Text}
}

func decodeArchive(t *Table, x *wire.Extra) Archive {
	a := Archive{Hash: x.Hash, Source: ArchiveSource(x.Source), Value: x.Text}
	if a.Source == ArchiveAssets {
		a.Members = make([]ArchiveMember, len(x.Members))
		for k, m := range x.Members {
			a.Members[k].Name = m.Name
			// Validation admits only assets and archives as members.
			switch member := t.Extras[t.Nodes[int(m.Node)*wire.Words+1]]; member.Kind {
			case wire.KindAsset:
				asset := decodeAsset(&member)
				a.Members[k].Asset = &asset
			default:
				archive := decodeArchive(t, &member)
				a.Members[k].Archive = &archive
			}
		}
	}
	return a
}

// encoder gives every container a block of consecutive nodes at the end of the table for its
// children (so children always come after their parent), writes scalars at once and queues
// containers: no recursion, whatever the depth.
type encoder struct {
	nodes   []uint32
	strings []byte
	extras  []wire.Extra
	pending []pending
}

type pending struct {
	at     uint32
	value  Value
	member *ArchiveMember
}

func (e *encoder) finish() Table {
	for len(e.pending) > 0 {
		p := e.pending[len(e.pending)-1]
		e.pending = e.pending[:len(e.pending)-1]
		switch {
		case p.member == nil:
			e.fill(p.at, p.value)
		case p.member.Asset != nil:
			e.set(p.at, wire.KindAsset, e.extra(assetExtra(p.member.Asset)), 0)
		case p.member.Archive != nil:
			e.archive(p.at, p.member.Archive)
		default:
			// A member that is neither: an empty, hash-only asset keeps the table valid.
			e.set(p.at, wire.KindAsset, e.extra(wire.Extra{Kind: wire.KindAsset, Source: wire.SourceHashOnly}), 0)
		}
	}
	return Table{Nodes: e.nodes, Strings: e.strings, Extras: e.extras}
}

// reserve appends count null nodes and returns the first one's index.
func (e *encoder) reserve(count int) uint32 {
	first := len(e.nodes) / wire.Words
	e.nodes = append(e.nodes, make([]uint32, count*wire.Words)...)
	return uint32(first)
}

func (e *encoder) set(at, kind, a, b uint32) {
	i := int(at) * wire.Words
	e.nodes[i], e.nodes[i+1], e.nodes[i+2] = kind, a, b
}

func (e *encoder) span(s string) (uint32, uint32) {
	offset := uint32(len(e.strings))
	e.strings = append(e.strings, s...)
	return offset, uint32(len(s))
}

func (e *encoder) extra(x wire.Extra) uint32 {
	e.extras = append(e.extras, x)
	return uint32(len(e.extras) - 1)
}

// scalarOrLater writes scalars at once (the common case) and queues containers.
func (e *encoder) scalarOrLater(at uint32, v Value) {
	switch v.kind {
	case KindNull, KindBool, KindNumber, KindString, KindUnknown:
		e.fill(at, v)
	default:
		e.pending = append(e.pending, pending{at: at, value: v})
	}
}

func (e *encoder) fill(at uint32, v Value) {
	switch v.kind {
	case KindNull:
		e.set(at, wire.KindNull, 0, 0)
	case KindBool:
		var b uint32
		if v.num != 0 {
			b = 1
		}
		e.set(at, wire.KindBool, b, 0)
	case KindNumber:
		bits := math.Float64bits(v.num)
		e.set(at, wire.KindNumber, uint32(bits), uint32(bits>>32))
	case KindString:
		offset, n := e.span(v.str)
		e.set(at, wire.KindText, offset, n)
	case KindUnknown:
		e.set(at, wire.KindUnknown, 0, 0)
	case KindArray:
		items := v.ref.([]Value)
		first := e.reserve(len(items))
		e.set(at, wire.KindArray, first, uint32(len(items)))
		for k, item := range items {
			e.scalarOrLater(first+uint32(k), item)
		}
	case KindObject:
		e.object(at, v.ref.(*PropertyMap))
	case KindSecret:
		child := e.reserve(1)
		e.set(at, wire.KindSecret, child, 0)
		e.scalarOrLater(child, *v.ref.(*Value))
	case KindAsset:
		e.set(at, wire.KindAsset, e.extra(assetExtra(v.ref.(*Asset))), 0)
	case KindArchive:
		e.archive(at, v.ref.(*Archive))
	case KindResourceReference:
		r := v.ref.(*ResourceReference)
		x := wire.Extra{Kind: wire.KindReference, URN: r.URN, PackageVersion: r.PackageVersion}
		if r.ID != nil {
			child := e.reserve(1)
			x.ID = &child
			e.scalarOrLater(child, *r.ID)
		}
		e.set(at, wire.KindReference, e.extra(x), 0)
	case KindOutput:
		o := v.ref.(*OutputValue)
		x := wire.Extra{Kind: wire.KindOutput, Secret: o.Secret, Dependencies: o.Dependencies}
		if o.Value != nil {
			child := e.reserve(1)
			x.Value = &child
			e.scalarOrLater(child, *o.Value)
		}
		e.set(at, wire.KindOutput, e.extra(x), 0)
	}
}

func (e *encoder) object(at uint32, m *PropertyMap) {
	n := m.Len()
	first := e.reserve(n)
	e.set(at, wire.KindObject, first, uint32(n))
	for k := 0; k < n; k++ {
		member := first + uint32(k)
		offset, length := e.span(m.keys[k])
		i := int(member) * wire.Words
		e.nodes[i+3], e.nodes[i+4] = offset, length
		e.scalarOrLater(member, m.values[k])
	}
}

func (e *encoder) archive(at uint32, a *Archive) {
	x := wire.Extra{Kind: wire.KindArchive, Hash: a.Hash, Source: uint8(a.Source), Text: a.Value}
	if a.Source == ArchiveAssets {
		first := e.reserve(len(a.Members))
		x.Members = make([]wire.Member, len(a.Members))
		for k := range a.Members {
			x.Members[k] = wire.Member{Name: a.Members[k].Name, Node: first + uint32(k)}
			e.pending = append(e.pending, pending{at: first + uint32(k), member: &a.Members[k]})
		}
		x.Text = ""
	}
	e.set(at, wire.KindArchive, e.extra(x), 0)
}

func assetExtra(a *Asset) wire.Extra {
	x := wire.Extra{Kind: wire.KindAsset, Hash: a.Hash, Source: uint8(a.Source), Text: a.Value}
	if a.Source == AssetHashOnly {
		x.Text = ""
	}
	return x
}
