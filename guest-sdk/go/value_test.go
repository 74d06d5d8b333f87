package cairn

import (
	"math"
	"strings"
	"testing"
)

func TestRevealSeesThroughSecretsAndOutputs(t *testing.T) {
	x := String("x")
	v := Secret(OutputValue{Value: &x})
	if s, ok := v.AsString(); !ok || s != "x" {
		t.Errorf("AsString = %q %v", s, ok)
	}
	if !v.IsSecret() || v.IsUnknown() {
		t.Error("a secret output of a known value")
	}
	u := Output(OutputValue{})
	if !u.IsUnknown() || !u.ContainsUnknowns() {
		t.Error("an output without a value is unknown")
	}
	id := Unknown()
	ref := Reference(ResourceReference{URN: "u", ID: &id})
	if !Array(ref).ContainsUnknowns() {
		t.Error("a reference with an unknown ID")
	}
	if !Object(Props("a", Array(Secret(1)))).ContainsSecrets() || Object(Props("a", 1)).ContainsSecrets() {
		t.Error("ContainsSecrets")
	}
}

func TestIntegersAreChecked(t *testing.T) {
	for _, c := range []struct {
		v  Value
		n  int64
		ok bool
	}{
		{Int(3), 3, true},
		{Number(3.5), 0, false},
		{Number(1e300), 0, false},
		{Int(-1), -1, true},
		{Number(-9223372036854775808), math.MinInt64, true},
		{Number(9223372036854775808), 0, false},
		{Number(math.NaN()), 0, false},
		{String("3"), 0, false},
	} {
		if n, ok := c.v.AsInt(); n != c.n || ok != c.ok {
			t.Errorf("%v: %d %v", c.v, n, ok)
		}
	}
}

func TestSameAsIgnoresSecretsButNotUnknowns(t *testing.T) {
	a := Object(Props("k", Array(Int(1))))
	b := Object(Props("k", Array(Secret(1.0))))
	if !a.SameAs(b) || a.Equal(b) {
		t.Error("the same contents, one secret")
	}
	if Unknown().SameAs(Unknown()) || !Unknown().Equal(Unknown()) {
		t.Error("unknowns are never the same, but are equal")
	}
	if a.SameAs(Object(Props("k", Array(Int(2))))) {
		t.Error("different contents")
	}
	// Objects compare whatever their keys' order.
	if !Object(Props("a", 1, "b", 2)).Equal(Object(Props("b", 2, "a", 1))) {
		t.Error("key order")
	}
}

func TestValueOf(t *testing.T) {
	for _, c := range []struct {
		in   any
		want Value
	}{
		{nil, Null()},
		{int32(7), Int(7)},
		{uint8(7), Int(7)},
		{float32(0.5), Number(0.5)},
		{[]string{"a", "b"}, Array(String("a"), String("b"))},
		{map[string]int{"b": 2, "a": 1}, Object(Props("a", 1, "b", 2))},
		{[]any{1, "x", nil}, Array(Int(1), String("x"), Null())},
		{TextAsset("t"), AssetValue(TextAsset("t"))},
	} {
		if got := ValueOf(c.in); !got.Equal(c.want) {
			t.Errorf("ValueOf(%#v) = %v, want %v", c.in, got, c.want)
		}
	}
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(string), "chan int is not a property value") {
			t.Errorf("recovered %v", r)
		}
	}()
	ValueOf(make(chan int))
}

func TestUnsecretRemovesEveryMarker(t *testing.T) {
	v := Object(Props("a", Secret(Array(Secret("x"))), "o", OutputValue{Secret: true}))
	u := v.Unsecret()
	if u.ContainsSecrets() {
		t.Errorf("%v", u)
	}
	if s, _ := u.AsObject(); !s.Has("a") || !s.Has("o") {
		t.Errorf("%v", u)
	}
	if !v.ContainsSecrets() {
		t.Error("Unsecret changed the original")
	}
}

func TestStringHidesSecrets(t *testing.T) {
	s := Object(Props("password", Secret("hunter2"), "n", 1.5)).String()
	if strings.Contains(s, "hunter2") || s != `{"password": [secret], "n": 1.5}` {
		t.Error(s)
	}
}
