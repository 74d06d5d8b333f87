//go:build wasip1

package abi

import (
	"unsafe"

	"cairn.invalid/sdk/internal/wire"
)

// Reading: the canonical ABI's memory layout (32-bit addresses, little-endian). Everything
// read out of the host's memory is copied into Go values, which stay valid after the arena is
// reused.

// U8 reads a byte (an enum, a variant's or option's discriminant).
func U8(p uintptr) uint8 { return *(*uint8)(ptr(p)) }

// Bool reads a bool.
func Bool(p uintptr) bool { return U8(p) != 0 }

// U32 reads a u32 (also list and string pointers and lengths).
func U32(p uintptr) uint32 { return *(*uint32)(ptr(p)) }

// F64 reads an f64.
func F64(p uintptr) float64 { return *(*float64)(ptr(p)) }

// StringOf copies the n bytes at address p (a flat parameter) into a string (a large one is
// taken over rather than copied).
func StringOf(p, n uint32) string {
	if n == 0 {
		return ""
	}
	if b := Take(uintptr(p), n); b != nil {
		return unsafe.String(unsafe.SliceData(b), len(b))
	}
	return string(unsafe.Slice((*byte)(ptr(uintptr(p))), n))
}

// String reads a string (pointer, length) at p.
func String(p uintptr) string { return StringOf(U32(p), U32(p+4)) }

// OptString reads an option<string> (12 bytes) at p.
func OptString(p uintptr) *string {
	if U8(p) == 0 {
		return nil
	}
	s := String(p + 4)
	return &s
}

// OptU32 reads an option<u32> (8 bytes) at p.
func OptU32(p uintptr) *uint32 {
	if U8(p) == 0 {
		return nil
	}
	v := U32(p + 4)
	return &v
}

// BytesOf copies the n bytes at address p (a large list is taken over rather than copied).
func BytesOf(p, n uint32) []byte {
	if b := Take(uintptr(p), n); b != nil {
		return b
	}
	out := make([]byte, n)
	if n > 0 {
		copy(out, unsafe.Slice((*byte)(ptr(uintptr(p))), n))
	}
	return out
}

// Bytes reads a list<u8> at p.
func Bytes(p uintptr) []byte { return BytesOf(U32(p), U32(p+4)) }

// Strings reads a list<string> at p.
func Strings(p uintptr) []string {
	base, n := uintptr(U32(p)), U32(p+4)
	out := make([]string, n)
	for i := range out {
		out[i] = String(base + uintptr(i)*8)
	}
	return out
}

// List reads a list at p whose elements are size bytes each, calling read with each
// element's address.
func List(p uintptr, size uintptr, read func(at uintptr)) {
	base, n := uintptr(U32(p)), uintptr(U32(p+4))
	for i := uintptr(0); i < n; i++ {
		read(base + i*size)
	}
}

// Len is the length of the list at p.
func Len(p uintptr) int { return int(U32(p + 4)) }

// Table reads a WIT `value` (24 bytes: nodes, strings, extras) at p.
func Table(p uintptr) wire.Table {
	return TableOf(U32(p), U32(p+4), U32(p+8), U32(p+12), U32(p+16), U32(p+20))
}

// TableOf reads a WIT `value` passed as its six flat words.
func TableOf(nodes, nodesLen, strings, stringsLen, extras, extrasLen uint32) wire.Table {
	t := wire.Table{Strings: BytesOf(strings, stringsLen)}
	if b := Take(uintptr(nodes), nodesLen*4); b != nil {
		t.Nodes = unsafe.Slice((*uint32)(unsafe.Pointer(unsafe.SliceData(b))), nodesLen)
	} else {
		t.Nodes = make([]uint32, nodesLen)
		if nodesLen > 0 {
			copy(t.Nodes, unsafe.Slice((*uint32)(ptr(uintptr(nodes))), nodesLen))
		}
	}
	if extrasLen > 0 {
		t.Extras = make([]wire.Extra, extrasLen)
		for i := range t.Extras {
			t.Extras[i] = extra(uintptr(extras) + uintptr(i)*extraSize)
		}
	}
	return t
}

// An `extra` is a variant: its case at 0, the payload (at most 28 bytes, 4-aligned) at 4.
const extraSize = 32

func extra(p uintptr) wire.Extra {
	var x wire.Extra
	q := p + 4
	switch U8(p) {
	case 0: // asset { hash: option<string>, source: asset-source }
		x.Kind = wire.KindAsset
		x.Hash = OptString(q)
		x.Source, x.Text = source(q + 12)
	case 1: // archive { hash, source: archive-source }
		x.Kind = wire.KindArchive
		x.Hash = OptString(q)
		x.Source = U8(q + 12)
		if x.Source == wire.SourceTextOrAssets {
			// list<tuple<string, u32>>: 12 bytes per member.
			List(q+16, 12, func(at uintptr) {
				x.Members = append(x.Members, wire.Member{Name: String(at), Node: U32(at + 8)})
			})
		} else if x.Source != wire.SourceHashOnly {
			x.Text = String(q + 16)
		}
	case 2: // resource-reference { urn, id: option<u32>, package-version: option<string> }
		x.Kind = wire.KindReference
		x.URN = String(q)
		x.ID = OptU32(q + 8)
		x.PackageVersion = OptString(q + 16)
	default: // output-value { value: option<u32>, secret: bool, dependencies: list<string> }
		x.Kind = wire.KindOutput
		x.Value = OptU32(q)
		x.Secret = Bool(q + 8)
		x.Dependencies = Strings(q + 12)
	}
	return x
}

// source reads an asset-source (or the path / URI case of an archive-source) at p.
func source(p uintptr) (uint8, string) {
	c := U8(p)
	if c == wire.SourceHashOnly {
		return c, ""
	}
	return c, String(p + 4)
}

// Writing: into arena memory the host reads after the call (results) or during it (an
// import's arguments). Strings and slices whose data the host is to read must be on the heap
// (an address on a goroutine's stack would not outlive the frame that returns it): storing
// them in `escape` makes the compiler put them there. They stay alive because collection is
// off until the host has read them (see the package documentation).

var escape struct {
	s string
	b []byte
	u []uint32
}

// SetU8 writes a byte.
func SetU8(p uintptr, v uint8) { *(*uint8)(ptr(p)) = v }

// SetBool writes a bool.
func SetBool(p uintptr, v bool) {
	var b uint8
	if v {
		b = 1
	}
	SetU8(p, b)
}

// SetU32 writes a u32.
func SetU32(p uintptr, v uint32) { *(*uint32)(ptr(p)) = v }

// SetF64 writes an f64.
func SetF64(p uintptr, v float64) { *(*float64)(ptr(p)) = v }

// Addr is the address of a string's bytes, for the host to read.
func Addr(s string) uintptr {
	escape.s = s
	return uintptr(unsafe.Pointer(unsafe.StringData(s)))
}

// SetString writes a string (pointer, length) at p.
func SetString(p uintptr, s string) {
	SetU32(p, uint32(Addr(s)))
	SetU32(p+4, uint32(len(s)))
}

// SetOptString writes an option<string> (12 bytes) at p.
func SetOptString(p uintptr, s *string) {
	if s == nil {
		SetU8(p, 0)
		return
	}
	SetU8(p, 1)
	SetString(p+4, *s)
}

// SetOptU32 writes an option<u32> (8 bytes) at p.
func SetOptU32(p uintptr, v *uint32) {
	if v == nil {
		SetU8(p, 0)
		return
	}
	SetU8(p, 1)
	SetU32(p+4, *v)
}

// SetBytes writes a list<u8> at p.
func SetBytes(p uintptr, b []byte) {
	escape.b = b
	SetU32(p, uint32(uintptr(unsafe.Pointer(unsafe.SliceData(b)))))
	SetU32(p+4, uint32(len(b)))
}

// SetList writes a list of n elements of size bytes (align 4 or 8) at p, calling write with
// each element's address in the arena.
func SetList(p uintptr, n int, size, align uintptr, write func(i int, at uintptr)) {
	base := Alloc(uintptr(n)*size, align)
	for i := 0; i < n; i++ {
		write(i, base+uintptr(i)*size)
	}
	SetU32(p, uint32(base))
	SetU32(p+4, uint32(n))
}

// SetStrings writes a list<string> at p.
func SetStrings(p uintptr, ss []string) {
	SetList(p, len(ss), 8, 4, func(i int, at uintptr) { SetString(at, ss[i]) })
}

// SetTable writes a WIT `value` (24 bytes) at p.
func SetTable(p uintptr, t *wire.Table) {
	escape.u = t.Nodes
	SetU32(p, uint32(uintptr(unsafe.Pointer(unsafe.SliceData(t.Nodes)))))
	SetU32(p+4, uint32(len(t.Nodes)))
	SetBytes(p+8, t.Strings)
	SetList(p+16, len(t.Extras), extraSize, 4, func(i int, at uintptr) { setExtra(at, &t.Extras[i]) })
}

func setExtra(p uintptr, x *wire.Extra) {
	q := p + 4
	switch x.Kind {
	case wire.KindAsset:
		SetU8(p, 0)
		SetOptString(q, x.Hash)
		SetU8(q+12, x.Source)
		if x.Source != wire.SourceHashOnly {
			SetString(q+16, x.Text)
		}
	case wire.KindArchive:
		SetU8(p, 1)
		SetOptString(q, x.Hash)
		SetU8(q+12, x.Source)
		switch x.Source {
		case wire.SourceTextOrAssets:
			SetList(q+16, len(x.Members), 12, 4, func(i int, at uintptr) {
				SetString(at, x.Members[i].Name)
				SetU32(at+8, x.Members[i].Node)
			})
		case wire.SourceHashOnly:
		default:
			SetString(q+16, x.Text)
		}
	case wire.KindReference:
		SetU8(p, 2)
		SetString(q, x.URN)
		SetOptU32(q+8, x.ID)
		SetOptString(q+16, x.PackageVersion)
	default:
		SetU8(p, 3)
		SetOptU32(q, x.Value)
		SetBool(q+8, x.Secret)
		SetStrings(q+12, x.Dependencies)
	}
}

// Area is a return area of size bytes (8-aligned) in the arena: where an export's results
// go, or where the host puts an import's.
func Area(size uintptr) uintptr { return Alloc(size, 8) }
