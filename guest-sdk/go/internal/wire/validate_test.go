package wire

import (
	"strings"
	"testing"
)

func u32(v uint32) *uint32 { return &v }

// Each malformed table is refused with a message naming the fault; the valid ones pass.
func TestValidate(t *testing.T) {
	text := func(offset, length uint32) []uint32 { return []uint32{KindText, offset, length, 0, 0} }
	member := func(kind, a, b, keyOffset, keyLen uint32) []uint32 { return []uint32{kind, a, b, keyOffset, keyLen} }
	nodes := func(ns ...[]uint32) []uint32 {
		var out []uint32
		for _, n := range ns {
			out = append(out, n...)
		}
		return out
	}
	cases := []struct {
		name  string
		table Table
		want  string // "" for valid
	}{
		{"empty", Table{}, ""},
		{"null root", Table{Nodes: []uint32{KindNull, 0, 0, 0, 0}}, ""},
		{"object", Table{Nodes: nodes(member(KindObject, 1, 2, 0, 0), member(KindBool, 1, 0, 0, 1), member(KindText, 1, 1, 1, 1)), Strings: []byte("ab")}, ""},
		{"partial node", Table{Nodes: []uint32{KindNull, 0, 0}}, "3 words, which is not a whole number"},
		{"extras without nodes", Table{Extras: []Extra{{Kind: KindAsset}}}, "extra 0 is not referenced"},
		{"unknown kind", Table{Nodes: []uint32{42, 0, 0, 0, 0}}, "node 0 has unknown kind 42"},
		{"child out of range", Table{Nodes: []uint32{KindArray, 1, 2, 0, 0, KindNull, 0, 0, 0, 0}}, "refers to node 2, but there are only 2"},
		{"huge count", Table{Nodes: []uint32{KindArray, 1, 0xffffffff, 0, 0}}, "but there are only 1"},
		{"self reference", Table{Nodes: []uint32{KindSecret, 0, 0, 0, 0}}, "refers to node 0, which is not after it"},
		{"cycle", Table{Nodes: nodes(member(KindArray, 1, 1, 0, 0), member(KindSecret, 2, 0, 0, 0), member(KindArray, 1, 1, 0, 0))}, "node 2 refers to node 1, which is not after it"},
		{"shared twice", Table{Nodes: nodes(member(KindArray, 1, 2, 0, 0), member(KindSecret, 2, 0, 0, 0), member(KindNull, 0, 0, 0, 0))}, "node 2 is referenced twice"},
		{"unreferenced", Table{Nodes: []uint32{KindNull, 0, 0, 0, 0, KindNull, 0, 0, 0, 0}}, "node 1 is not referenced"},
		{"span outside", Table{Nodes: text(0, 3), Strings: []byte("ab")}, "outside the 2-byte string buffer"},
		{"span overflows", Table{Nodes: text(0xffffffff, 2), Strings: []byte("ab")}, "outside"},
		{"cut character", Table{Nodes: text(0, 1), Strings: []byte("é")}, "is not valid UTF-8"},
		{"invalid utf8", Table{Nodes: text(0, 1), Strings: []byte{0xff}}, "is not valid UTF-8"},
		{"duplicate key", Table{Nodes: nodes(member(KindObject, 1, 3, 0, 0), member(KindNull, 0, 0, 0, 1), member(KindNull, 0, 0, 1, 1), member(KindNull, 0, 0, 0, 1)), Strings: []byte("ab")}, `has the key "a" twice`},
		{"extra out of range", Table{Nodes: []uint32{KindAsset, 3, 0, 0, 0}}, "refers to extra 3, but there are only 0"},
		{"wrong extra", Table{Nodes: []uint32{KindAsset, 0, 0, 0, 0}, Extras: []Extra{{Kind: KindOutput}}}, "(asset) refers to an extra of kind output"},
		{"shared extra", Table{Nodes: nodes(member(KindArray, 1, 2, 0, 0), member(KindAsset, 0, 0, 0, 0), member(KindAsset, 0, 0, 0, 0)), Extras: []Extra{{Kind: KindAsset}}}, "extra 0 is referenced twice"},
		{"unused extra", Table{Nodes: []uint32{KindNull, 0, 0, 0, 0}, Extras: []Extra{{Kind: KindAsset}}}, "extra 0 is not referenced"},
		{"reference to text", Table{Nodes: nodes(member(KindReference, 0, 0, 0, 0), text(0, 1)), Strings: []byte("i"), Extras: []Extra{{Kind: KindReference, ID: u32(1)}}}, ""},
		{"reference to a number", Table{Nodes: nodes(member(KindReference, 0, 0, 0, 0), member(KindNumber, 0, 0, 0, 0)), Extras: []Extra{{Kind: KindReference, ID: u32(1)}}}, "ID must be text or unknown, found number"},
		{"archive member not a blob", Table{Nodes: nodes(member(KindArchive, 0, 0, 0, 0), member(KindNull, 0, 0, 0, 0)), Extras: []Extra{{Kind: KindArchive, Members: []Member{{"m", 1}}}}}, `member "m" is a null`},
		{"archive duplicate member", Table{Nodes: nodes(member(KindArchive, 0, 0, 0, 0), member(KindAsset, 1, 0, 0, 0), member(KindAsset, 2, 0, 0, 0)), Extras: []Extra{{Kind: KindArchive, Members: []Member{{"m", 1}, {"m", 2}}}, {Kind: KindAsset}, {Kind: KindAsset}}}, `has the key "m" twice`},
		{"output", Table{Nodes: nodes(member(KindOutput, 0, 0, 0, 0), member(KindNull, 0, 0, 0, 0)), Extras: []Extra{{Kind: KindOutput, Value: u32(1)}}}, ""},
	}
	for _, c := range cases {
		err := Validate(&c.table)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: got %v, want %q", c.name, err, c.want)
		}
	}
}

// Depth: MaxDepth levels pass, one more fails.
func TestValidateDepth(t *testing.T) {
	chain := func(depth int) Table {
		var nodes []uint32
		for i := 0; i < depth-1; i++ {
			nodes = append(nodes, KindSecret, uint32(i+1), 0, 0, 0)
		}
		nodes = append(nodes, KindNull, 0, 0, 0, 0)
		return Table{Nodes: nodes}
	}
	ok := chain(MaxDepth)
	if err := Validate(&ok); err != nil {
		t.Fatalf("%d levels: %v", MaxDepth, err)
	}
	deep := chain(MaxDepth + 1)
	if err := Validate(&deep); err == nil || !strings.Contains(err.Error(), "nests deeper than 512 levels") {
		t.Fatalf("%d levels: %v", MaxDepth+1, err)
	}
}

func TestValidateMap(t *testing.T) {
	for _, c := range []struct {
		table Table
		ok    bool
	}{
		{Table{}, true},
		{Table{Nodes: []uint32{KindNull, 0, 0, 0, 0}}, true},
		{Table{Nodes: []uint32{KindObject, 0, 0, 0, 0}}, true},
		{Table{Nodes: []uint32{KindText, 0, 1, 0, 0}, Strings: []byte("x")}, false},
	} {
		if err := ValidateMap(&c.table); (err == nil) != c.ok {
			t.Errorf("%v: %v", c.table.Nodes, err)
		}
	}
}

func TestSameKnown(t *testing.T) {
	a := Table{Nodes: []uint32{KindText, 0, 1, 0, 0}, Strings: []byte("x")}
	b := Table{Nodes: []uint32{KindText, 0, 1, 0, 0}, Strings: []byte("x")}
	if !SameKnown(&a, &b) {
		t.Error("identical tables")
	}
	b.Strings = []byte("y")
	if SameKnown(&a, &b) {
		t.Error("different strings")
	}
	u := Table{Nodes: []uint32{KindUnknown, 0, 0, 0, 0}}
	if SameKnown(&u, &u) {
		t.Error("an unknown is never the same")
	}
	x := Table{Nodes: []uint32{KindAsset, 0, 0, 0, 0}, Extras: []Extra{{Kind: KindAsset}}}
	if SameKnown(&x, &x) {
		t.Error("tables with extras are compared node by node")
	}
}
