package cairn

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"cairn.invalid/sdk/internal/wire"
)

func str(s string) *string { return &s }

// everyKind is an object holding a value of every kind, nested ones included.
func everyKind() Value {
	asset := Asset{Hash: str(strings.Repeat("ab", 32)), Source: AssetText, Value: "hello"}
	inner := FileAsset("./inner.txt")
	nested := AssetArchive(ArchiveMember{Name: "inner.txt", Asset: &inner})
	archive := Archive{Hash: str(strings.Repeat("cd", 32)), Source: ArchiveAssets, Members: []ArchiveMember{
		{Name: "z.txt", Asset: &asset},
		{Name: "a", Archive: &nested},
	}}
	id := String("brave-ant")
	unknownID := Unknown()
	three := Secret(3)
	return Object(Props(
		"null", nil,
		"bool", true,
		"number", 1.5,
		"negative", -0.25,
		"string", "héllo",
		"array", []Value{Int(1), String("two"), Array()},
		"object", Props("z", 1, "a", 2, "m", NewPropertyMap()),
		"asset", asset,
		"uri asset", RemoteAsset("https://x/y"),
		"hash-only asset", Asset{Hash: str("00"), Source: AssetHashOnly},
		"archive", archive,
		"path archive", FileArchive("dir"),
		"uri archive", RemoteArchive("file:///a.tgz"),
		"hash-only archive", Archive{Hash: str("11"), Source: ArchiveHashOnly},
		"reference", ResourceReference{URN: "urn:pulumi:s::p::random:index:RandomPet::pet", ID: &id, PackageVersion: str("1.2.3")},
		"component reference", ResourceReference{URN: "urn:pulumi:s::p::my:index:Comp::c"},
		"unknown-id reference", ResourceReference{URN: "urn:pulumi:s::p::a:b:C::c", ID: &unknownID},
		"secret", Secret(Props("password", "hunter2")),
		"unknown", Unknown(),
		"output", OutputValue{Value: &three, Secret: true, Dependencies: []string{"urn:a", "urn:b"}},
		"unknown output", OutputValue{},
	))
}

func TestEveryKindRoundTrips(t *testing.T) {
	v := everyKind()
	table := Encode(v)
	back, err := Decode(table)
	if err != nil {
		t.Fatal(err)
	}
	if !back.Equal(v) {
		t.Fatalf("round trip:\n%v\n%v", v, back)
	}
	m, _ := v.AsObject()
	backMap, err := DecodeMap(EncodeMap(m))
	if err != nil || !backMap.Equal(m) {
		t.Fatalf("map round trip: %v", err)
	}
	// Order is kept, key by key.
	if strings.Join(backMap.Keys(), ",") != strings.Join(m.Keys(), ",") {
		t.Fatalf("order: %v", backMap.Keys())
	}
}

func TestScalarsRoundTripAtTheRoot(t *testing.T) {
	for _, v := range []Value{Null(), Bool(false), Number(math.MaxFloat64), Number(math.Copysign(0, -1)),
		String(""), Unknown(), Secret(Unknown()), Number(math.NaN())} {
		back, err := Decode(Encode(v))
		if err != nil || !back.Equal(v) {
			t.Errorf("%v: %v %v", v, back, err)
		}
	}
	if _, err := Decode(Table{}); err == nil || !strings.Contains(err.Error(), "no nodes") {
		t.Errorf("an empty table is no value: %v", err)
	}
}

// The encoder puts every child after the node that refers to it (the format's rule, which
// validation checks), with large objects and arrays in order.
func TestEncodingKeepsOrderAndPutsChildrenAfterParents(t *testing.T) {
	m := NewPropertyMap()
	for i := 199; i >= 0; i-- {
		m.Set(fmt.Sprintf("k%d", i), i)
	}
	back, err := DecodeMap(EncodeMap(m))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(back.Keys()[:3], ","); got != "k199,k198,k197" {
		t.Fatalf("order: %s", got)
	}
	if v, _ := back.Get("k5"); !v.Equal(Int(5)) {
		t.Fatalf("k5 = %v (the index of a large map)", v)
	}
	table := Encode(everyKind())
	if err := wire.Validate(&table); err != nil {
		t.Fatal(err)
	}
}

func TestDeepValuesEncodeWithoutRecursionAndAreRefusedPastTheLimit(t *testing.T) {
	v := String("leaf")
	for i := 0; i < wire.MaxDepth-1; i++ {
		switch i % 3 {
		case 0:
			v = Array(v)
		case 1:
			v = Object(Props("k", v))
		default:
			v = Secret(v)
		}
	}
	back, err := Decode(Encode(v))
	if err != nil || !back.Equal(v) {
		t.Fatalf("%d levels: %v", wire.MaxDepth, err)
	}
	if _, err := Decode(Encode(Array(v))); err == nil || !strings.Contains(err.Error(), "deeper than 512") {
		t.Fatalf("%d levels: %v", wire.MaxDepth+1, err)
	}
	// A million levels: encoding is iterative (decoding refuses it).
	deep := Null()
	for i := 0; i < 1_000_000; i++ {
		deep = Array(deep)
	}
	if table := Encode(deep); table.Len() != 1_000_001 {
		t.Fatalf("%d nodes", table.Len())
	}
}

func TestPropertyMapsNeedAnObjectRoot(t *testing.T) {
	for _, c := range []struct {
		table Table
		want  string
	}{
		{Table{}, ""},
		{Table{Nodes: []uint32{wire.KindNull, 0, 0, 0, 0}}, ""},
		{Table{Nodes: []uint32{wire.KindText, 0, 1, 0, 0}, Strings: []byte("x")}, "expected an object of properties, found a string"},
	} {
		m, err := DecodeMap(c.table)
		switch {
		case c.want == "" && (err != nil || m.Len() != 0):
			t.Errorf("%v: %v %v", c.table.Nodes, m, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%v: %v", c.table.Nodes, err)
		}
	}
}

func TestPropertiesGoBackAsTheyCameUnlessChanged(t *testing.T) {
	sent := EncodeMap(Props("a", 1, "s", Secret("x")))
	p := FromTable(sent)
	if got := p.Table(); &got.Nodes[0] != &sent.Nodes[0] {
		t.Error("unread properties were re-encoded")
	}
	// Reading keeps the table.
	if v, ok := p.Get("a"); !ok || !v.Equal(Int(1)) {
		t.Errorf("a = %v", v)
	}
	if got := p.Table(); &got.Nodes[0] != &sent.Nodes[0] {
		t.Error("read properties were re-encoded")
	}
	// Changing encodes afresh.
	p.Map().Set("b", true)
	back, err := DecodeMap(p.Table())
	if err != nil || !back.Equal(Props("a", 1, "s", Secret("x"), "b", true)) {
		t.Errorf("changed: %v %v", back, err)
	}
	var empty Properties
	if back, err := DecodeMap(empty.Table()); err != nil || back.Len() != 0 {
		t.Errorf("zero properties: %v %v", back, err)
	}
}

func TestAMalformedTableStopsTheProviderWhenRead(t *testing.T) {
	bad := EncodeMap(Props("a", "b"))
	bad.Strings = bad.Strings[:1]
	p := FromTable(bad)
	if got := p.Table(); len(got.Strings) != 1 {
		t.Fatal("an unread table goes back untouched")
	}
	defer func() {
		if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), "the host sent a malformed property table") {
			t.Fatalf("recovered %v", r)
		}
	}()
	p.Len()
}
