package cairn

import (
	"strings"
	"testing"
)

func TestPathsParseAndLookUp(t *testing.T) {
	m := Props(
		"tags", Props("a.b", "dotted", "env", "prod"),
		"ports", Array(Int(80), Unknown()),
		"nothing", nil,
		"hidden", Secret(Props("x", 1)),
	)
	for _, c := range []struct {
		path  string
		want  Value
		found Found
	}{
		{"tags.env", String("prod"), Present},
		{`tags["a.b"]`, String("dotted"), Present},
		{"ports[0]", Int(80), Present},
		{"hidden.x", Int(1), Present},
		{"ports[1]", Value{}, NotKnown},
		{"ports[9]", Value{}, Missing},
		{"nothing", Value{}, Missing},
		{"absent.deeper", Value{}, Missing},
		{"ports.x", Value{}, Missing},
	} {
		v, found, err := m.LookupPath(c.path)
		if err != nil || found != c.found || (found == Present && !v.Equal(c.want)) {
			t.Errorf("%s: %v %v %v", c.path, v, found, err)
		}
	}
	for _, bad := range []string{"", "a.", "a..b", "a[", "a[x]", "[0]", `a["x]`, "a[-1]"} {
		if _, _, err := m.LookupPath(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

func TestReadersSeeThroughSecretsAndRequireNamesTheProperty(t *testing.T) {
	m := Props("a", Secret("x"), "n", 2, "f", 2.5, "b", false, "path", 3, "later", Unknown(), "o", Props("k", true))
	if s, ok := m.GetString("a"); !ok || s != "x" {
		t.Error("GetString through a secret")
	}
	if _, ok := m.GetInt("f"); ok {
		t.Error("2.5 is no integer")
	}
	if n, ok := m.GetNumber("f"); !ok || n != 2.5 {
		t.Error("GetNumber")
	}
	for _, c := range []struct {
		err  error
		want string
	}{
		{second(m.RequireString("path")), "path: expected a string, found the number 3"},
		{second(m.RequireString("missing")), "missing: missing required property"},
		{second(m.RequireBool("later")), "later: is not known yet"},
		{second(m.RequireString("o.k")), "o.k: expected a string, found a bool"},
		{second(m.RequireObject("f")), "f: expected an object, found the number 2.5"},
		{second(m.RequireBool("o.k")), ""},
	} {
		got := ""
		if c.err != nil {
			got = c.err.Error()
		}
		if got != c.want {
			t.Errorf("got %q, want %q", got, c.want)
		}
	}
}

func second[T any](_ T, err error) error { return err }

func TestCheckerSkipsUnknownsAndRecordsFailures(t *testing.T) {
	c := NewChecker(Props("known", "x", "unknown", Unknown(), "wrong", true, "nullish", nil))
	if s, ok := c.RequiredString("known"); !ok || s != "x" {
		t.Error("known")
	}
	if _, ok := c.RequiredString("unknown"); ok {
		t.Error("unknown")
	}
	c.String("wrong")
	c.String("absent")
	c.RequiredInt("absent")
	c.Default("nullish", 5)
	c.Default("unknown", 5)
	c.Default("known", "y")
	inputs, failures := c.Finish()
	var got []string
	for _, f := range failures {
		got = append(got, f.Error())
	}
	if want := "wrong: expected a string, found a bool|absent: missing required property"; strings.Join(got, "|") != want {
		t.Errorf("failures: %v", got)
	}
	for key, want := range map[string]Value{"nullish": Int(5), "unknown": Unknown(), "known": String("x")} {
		if v, _ := inputs.Get(key); !v.Equal(want) {
			t.Errorf("%s = %v", key, v)
		}
	}
}

func TestAutoNamesAreStableAndKeepTheOldName(t *testing.T) {
	seed := []byte("urn:pulumi:dev::p::t:m:T::site")
	name := AutoName("site", seed)
	if !strings.HasPrefix(name, "site-") || len(name) != len("site-")+7 || name != AutoName("site", seed) {
		t.Errorf("%q", name)
	}
	if name == AutoName("site", []byte("another seed")) {
		t.Error("the seed decides the name")
	}
	fresh := NewChecker(nil)
	fresh.AutoName("path", "site", nil, seed)
	updated := NewChecker(nil)
	updated.AutoName("path", "site", Props("path", "site-abcdef0"), seed)
	explicit := NewChecker(Props("path", "mine"))
	explicit.AutoName("path", "site", Props("path", "site-abcdef0"), seed)
	for c, want := range map[*Checker]string{fresh: name, updated: "site-abcdef0", explicit: "mine"} {
		if got, _ := c.Inputs().GetString("path"); got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	}
}

func TestURNParts(t *testing.T) {
	urn := "urn:pulumi:dev::proj::my:index:Comp$random:index:RandomPet::pet::one"
	if URNType(urn) != "random:index:RandomPet" || URNName(urn) != "pet::one" || URNStack(urn) != "dev" || URNProject(urn) != "proj" {
		t.Error(URNType(urn), URNName(urn), URNStack(urn), URNProject(urn))
	}
	if URNType("not a urn") != "" || URNName("urn:pulumi:dev::proj") != "" {
		t.Error("malformed URNs have no parts")
	}
}
