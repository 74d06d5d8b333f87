package wire

import (
	"fmt"
	"sort"
	"unicode/utf8"
)

// Error is why a table is not a valid value; its message names the node or extra at fault, in
// the words the Rust SDK uses for the same fault.
type Error struct{ msg string }

func (e *Error) Error() string { return e.msg }

func fail(format string, args ...any) error { return &Error{fmt.Sprintf(format, args...)} }

// Errorf is an Error with this message (for readers of tables that find them wanting).
func Errorf(format string, args ...any) error { return fail(format, args...) }

// Validate checks every rule of the format in one forward pass (parents come before their
// children, so when the pass reaches a node it already knows its depth and whether something
// refers to it): whole nodes, known kinds, indices in range and after their parent (which rules
// out cycles), no node or extra shared or unused, spans inside the buffer and valid UTF-8, no
// duplicate keys, archive members that are assets or archives, reference IDs that are text or
// unknown, at most MaxDepth levels. A table that passes can be read without further checks.
// No nodes is a valid, empty table (with no extras).
func Validate(t *Table) error {
	if len(t.Nodes)%Words != 0 {
		return fail("the value has %d words, which is not a whole number of nodes (%d words each)", len(t.Nodes), Words)
	}
	n := len(t.Nodes) / Words
	if n == 0 {
		if len(t.Extras) != 0 {
			return fail("extra 0 is not referenced")
		}
		return nil
	}
	v := validator{
		t:         t,
		depth:     make([]uint16, n),
		extraUsed: make([]bool, len(t.Extras)),
		utf8:      utf8.Valid(t.Strings),
	}
	v.depth[0] = 1
	for i := 0; i < n; i++ {
		if err := v.node(uint32(i)); err != nil {
			return err
		}
	}
	for i, used := range v.extraUsed {
		if !used {
			return fail("extra %d is not referenced", i)
		}
	}
	return nil
}

// ValidateMap validates a table meant as a property map: an object root, or no nodes or a
// null root (an empty map).
func ValidateMap(t *Table) error {
	if err := Validate(t); err != nil {
		return err
	}
	if t.Empty() {
		return nil
	}
	switch k := t.Kind(0); k {
	case KindObject, KindNull:
		return nil
	default:
		return fail("expected an object of properties, found a %s", KindName(k))
	}
}

type validator struct {
	t         *Table
	depth     []uint16
	extraUsed []bool
	// The whole buffer is valid UTF-8 (the usual case): then a span is valid when it starts
	// and ends on character boundaries, and no span needs decoding.
	utf8 bool
}

func (v *validator) refer(parent, child uint32) error {
	n := len(v.depth)
	if int(child) >= n {
		return fail("node %d refers to node %d, but there are only %d", parent, child, n)
	}
	if child <= parent {
		return fail("node %d refers to node %d, which is not after it", parent, child)
	}
	if v.depth[child] != 0 {
		return fail("node %d is referenced twice", child)
	}
	d := v.depth[parent]
	if d < ^uint16(0) {
		d++
	}
	v.depth[child] = d
	return nil
}

func (v *validator) span(node, offset, length uint32) error {
	s := v.t.Strings
	end := uint64(offset) + uint64(length)
	if end > uint64(len(s)) {
		return fail("node %d: text span (offset %d, length %d) is outside the %d-byte string buffer", node, offset, length, len(s))
	}
	var ok bool
	if v.utf8 {
		boundary := func(at uint64) bool { return at >= uint64(len(s)) || !isContinuation(s[at]) }
		ok = boundary(uint64(offset)) && boundary(end)
	} else {
		ok = utf8.Valid(s[offset:end])
	}
	if !ok {
		return fail("node %d: text span (offset %d, length %d) is not valid UTF-8", node, offset, length)
	}
	return nil
}

func isContinuation(b byte) bool { return b&0xC0 == 0x80 }

func (v *validator) node(i uint32) error {
	t := v.t
	depth := v.depth[i]
	if depth == 0 {
		return fail("node %d is not referenced", i)
	}
	if int(depth) > MaxDepth {
		return fail("node %d nests deeper than %d levels", i, MaxDepth)
	}
	a, b := t.Operands(i)
	switch k := t.Kind(i); k {
	case KindNull, KindBool, KindNumber, KindUnknown:
	case KindText:
		return v.span(i, a, b)
	case KindArray, KindObject:
		n := uint64(len(v.depth))
		if b > 0 && uint64(a)+uint64(b) > n {
			last := uint64(a) + uint64(b) - 1
			if last > uint64(^uint32(0)) {
				last = uint64(^uint32(0))
			}
			return fail("node %d refers to node %d, but there are only %d", i, last, n)
		}
		for c := uint64(a); c < uint64(a)+uint64(b); c++ {
			if err := v.refer(i, uint32(c)); err != nil {
				return err
			}
		}
		if k == KindObject {
			return v.keys(i, a, b)
		}
	case KindSecret:
		return v.refer(i, a)
	case KindAsset, KindArchive, KindReference, KindOutput:
		if int(a) >= len(t.Extras) {
			return fail("node %d refers to extra %d, but there are only %d", i, a, len(t.Extras))
		}
		if v.extraUsed[a] {
			return fail("extra %d is referenced twice", a)
		}
		v.extraUsed[a] = true
		return v.extra(i, k, &t.Extras[a])
	default:
		return fail("node %d has unknown kind %d", i, k)
	}
	return nil
}

func (v *validator) keys(i, first, count uint32) error {
	keys := make([]string, 0, count)
	for c := first; c < first+count; c++ {
		at := int(c) * Words
		offset, length := v.t.Nodes[at+3], v.t.Nodes[at+4]
		if err := v.span(c, offset, length); err != nil {
			return err
		}
		keys = append(keys, string(v.t.Strings[offset:offset+length]))
	}
	return duplicate(i, keys)
}

func (v *validator) extra(i, k uint32, x *Extra) error {
	if x.Kind != k {
		return fail("node %d (%s) refers to an extra of kind %s", i, KindName(k), KindName(x.Kind))
	}
	switch k {
	case KindArchive:
		if x.Source != SourceTextOrAssets {
			return nil
		}
		names := make([]string, 0, len(x.Members))
		for _, m := range x.Members {
			if err := v.refer(i, m.Node); err != nil {
				return err
			}
			if mk := v.t.Kind(m.Node); mk != KindAsset && mk != KindArchive {
				return fail("archive node %d: member %q is a %s, not an asset or archive", i, m.Name, KindName(mk))
			}
			names = append(names, m.Name)
		}
		return duplicate(i, names)
	case KindReference:
		if x.ID != nil {
			if err := v.refer(i, *x.ID); err != nil {
				return err
			}
			if idk := v.t.Kind(*x.ID); idk != KindText && idk != KindUnknown {
				return fail("node %d: a resource reference's ID must be text or unknown, found %s", i, KindName(idk))
			}
		}
	case KindOutput:
		if x.Value != nil {
			return v.refer(i, *x.Value)
		}
	}
	return nil
}

// duplicate fails on the first key, in member order, that repeats an earlier one. Sorting
// positions by key finds repeats in O(n log n) without hashing keys an untrusted party chose.
func duplicate(node uint32, keys []string) error {
	if len(keys) < 2 {
		return nil
	}
	order := make([]int, len(keys))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(x, y int) bool { return keys[order[x]] < keys[order[y]] })
	first := -1
	for j := 1; j < len(order); j++ {
		// Stable: within a run of equal keys, positions ascend; the second of a run repeats.
		if keys[order[j]] == keys[order[j-1]] && (first < 0 || order[j] < first) {
			first = order[j]
		}
	}
	if first < 0 {
		return nil
	}
	return fail("node %d has the key %q twice", node, keys[first])
}
