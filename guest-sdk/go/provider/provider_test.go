package provider

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	cairn "cairn.invalid/sdk"
)

func mapProps(kv ...any) cairn.Properties { return cairn.PropertiesOf(cairn.Props(kv...)) }

// fromHost is a map as the host sends it: a table, read lazily.
func fromHost(kv ...any) cairn.Properties {
	return cairn.FromTable(cairn.EncodeMap(cairn.Props(kv...)))
}

func TestDiffInputs(t *testing.T) {
	cases := []struct {
		name           string
		old, new       []any
		replace        []string
		ignore         []string
		changed, repl  string
		detailed       string
		changes        DiffChanges
		decodedOnly    bool
		detailedIsNone bool
	}{
		{name: "unchanged", old: []any{"a", 1, "s", cairn.Secret("x")}, new: []any{"a", 1, "s", cairn.Secret("x")}, changes: DiffNone},
		{name: "secretness alone", old: []any{"s", "x"}, new: []any{"s", cairn.Secret("x")}, changes: DiffNone},
		{name: "null is absent", old: []any{"a", nil}, new: []any{}, changes: DiffNone},
		{name: "update", old: []any{"a", 1, "b", 2}, new: []any{"a", 1, "b", 3}, changed: "b", detailed: "b:update", changes: DiffSome},
		{name: "add and delete", old: []any{"a", 1}, new: []any{"b", 1}, changed: "a,b", detailed: "a:delete,b:add", changes: DiffSome},
		{name: "unknown differs", old: []any{"a", 1}, new: []any{"a", cairn.Unknown()}, changed: "a", detailed: "a:update", changes: DiffSome},
		{name: "replace one", old: []any{"size", 1, "name", "a"}, new: []any{"size", 2, "name", "b"}, replace: []string{"size"}, changed: "size,name", repl: "size", detailed: "size:update-replace,name:update", changes: DiffSome},
		{name: "replace all", old: []any{"a", 1}, new: []any{"b", 1}, replace: []string{"*"}, changed: "a,b", repl: "a,b", detailed: "a:delete-replace,b:add-replace", changes: DiffSome},
		{name: "ignored", old: []any{"a", 1, "b", 1}, new: []any{"a", 2, "b", 2}, ignore: []string{"a"}, changed: "b", detailed: "b:update", changes: DiffSome},
	}
	kinds := map[DiffKind]string{Add: "add", AddReplace: "add-replace", Delete: "delete", DeleteReplace: "delete-replace", Update: "update", UpdateReplace: "update-replace"}
	for _, c := range cases {
		// Both ways: maps the provider made, and tables from the host compared in place.
		for _, way := range []string{"decoded", "tables"} {
			old, new := mapProps(c.old...), mapProps(c.new...)
			if way == "tables" {
				old, new = fromHost(c.old...), fromHost(c.new...)
			}
			d := DiffInputs(old, new, c.replace, c.ignore)
			var detailed []string
			for _, e := range d.DetailedDiff {
				if !e.InputDiff {
					t.Errorf("%s (%s): not an input diff", c.name, way)
				}
				detailed = append(detailed, e.Path+":"+kinds[e.Kind])
			}
			got := fmt.Sprintf("%s|%s|%s|%d", strings.Join(d.ChangedKeys, ","), strings.Join(d.ReplaceKeys, ","), strings.Join(detailed, ","), d.Changes)
			want := fmt.Sprintf("%s|%s|%s|%d", c.changed, c.repl, c.detailed, c.changes)
			if got != want {
				t.Errorf("%s (%s): got %s, want %s", c.name, way, got, want)
			}
			if d.DetailedDiff == nil {
				t.Errorf("%s (%s): no detailed diff", c.name, way)
			}
		}
	}
}

func TestDefaultDiffUsesTheHooks(t *testing.T) {
	d := Defaults{
		ReplaceOnChange:     map[string][]string{"p:index:Named": {"name"}},
		DeleteBeforeReplace: map[string]bool{"p:index:Named": true, "p:index:Other": true},
	}
	request := func(ty string) DiffRequest {
		return DiffRequest{URN: "urn:pulumi:dev::proj::" + ty + "::r", OldInputs: mapProps("name", "a", "size", 1), Inputs: mapProps("name", "b", "size", 2)}
	}
	r, _ := d.Diff(request("p:index:Named"))
	if strings.Join(r.ReplaceKeys, ",") != "name" || !r.DeleteBeforeReplace {
		t.Errorf("Named: %+v", r)
	}
	r, _ = d.Diff(request("p:index:Other"))
	if len(r.ReplaceKeys) != 0 || r.DeleteBeforeReplace || strings.Join(r.ChangedKeys, ",") != "name,size" {
		t.Errorf("Other: %+v", r)
	}
}

// A provider whose methods record what ran.
type recorder struct {
	Defaults
	calls []string
}

func (p *recorder) Create(r CreateRequest) (CreateResult, error) {
	p.calls = append(p.calls, "create")
	if r.Inputs.Has("fail") {
		return CreateResult{}, Partial("half done", PartialState{ID: "half"})
	}
	if r.Inputs.Has("panic") {
		var m map[string]int
		m["boom"] = 1
	}
	return CreateResult{ID: "id-1", Outputs: r.Inputs}, nil
}

func (p *recorder) PreviewCreate(r CreateRequest) (CreateResult, error) {
	p.calls = append(p.calls, "preview-create")
	return CreateResult{ID: "ignored", Outputs: r.Inputs}, nil
}

func (p *recorder) Update(r UpdateRequest) (UpdateResult, error) {
	p.calls = append(p.calls, "update")
	return UpdateResult{}, Timeout(2)
}

func (p *recorder) Delete(DeleteRequest) error {
	p.calls = append(p.calls, "delete")
	return ErrCancelled
}

func TestExportedCallsNeverActInAPreview(t *testing.T) {
	p := &recorder{}
	Export(p, `{"name": "echo", "schema": {"resources": {}}}`)
	if r, _ := create(CreateRequest{Inputs: mapProps("a", 1)}, true); r.ID != "" {
		t.Errorf("a preview's ID is always empty: %q", r.ID)
	}
	update(UpdateRequest{}, true)
	if strings.Join(p.calls, ",") != "preview-create" {
		t.Errorf("calls: %v", p.calls)
	}
	if r, _ := create(CreateRequest{Inputs: mapProps("a", 1)}, false); r.ID != "id-1" {
		t.Errorf("create: %+v", r)
	}
}

func TestErrorsBecomeTheWITsCases(t *testing.T) {
	Export(&recorder{}, `{"name": "echo"}`)
	_, createErr := create(CreateRequest{Inputs: mapProps("fail", true)}, false)
	_, panicErr := create(CreateRequest{Inputs: mapProps("panic", true)}, false)
	_, updateErr := update(UpdateRequest{}, false)
	deleteErr := del(DeleteRequest{})
	_, constructErr := construct(ConstructRequest{})
	_, callErr := call(CallRequest{})
	for _, c := range []struct {
		err     error
		kind    uint8
		message string
	}{
		{createErr, 0, "half done"},
		{panicErr, 0, "panic: assignment to entry in nil map"},
		{updateErr, 3, ""},
		{deleteErr, 2, ""},
		{constructErr, 1, "construct"},
		{callErr, 1, "call"},
		{errors.New("plain"), 0, "plain"},
		{&cairn.CheckFailure{Property: "p", Reason: "bad"}, 0, "p: bad"},
		{fmt.Errorf("wrapped: %w", Partial("inner", PartialState{ID: "x"})), 0, "wrapped: inner"},
	} {
		e := classify(c.err)
		if e.kind != c.kind || !strings.HasPrefix(e.message, c.message) {
			t.Errorf("%v: %+v", c.err, e)
		}
	}
	if e := classify(createErr); e.partial == nil || e.partial.ID != "half" {
		t.Errorf("partial state: %+v", e)
	}
	if e := classify(updateErr); e.seconds != 2 {
		t.Errorf("timeout: %+v", e)
	}
	// The panic's message says where it happened.
	if !strings.Contains(panicErr.Error(), "provider_test.go") {
		t.Errorf("%v", panicErr)
	}
}

func TestTheManifestsSchemaIsServedWithNameAndVersion(t *testing.T) {
	for _, c := range []struct {
		manifest string
		want     map[string]any
		err      string
	}{
		{`{"name": "n", "version": "1.2.3", "schema": {"resources": {}}}`, map[string]any{"name": "n", "version": "1.2.3", "resources": map[string]any{}}, ""},
		{`{"name": "n", "schema": {"name": "own"}}`, map[string]any{"name": "own", "version": DefaultVersion}, ""},
		{`{"name": "n"}`, nil, ""},
		{`{"schema": {}}`, nil, "no name"},
		{`{`, nil, "not valid JSON"},
	} {
		served, err := servedSchema(c.manifest)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: %v", c.manifest, err)
			}
			continue
		}
		if c.want == nil {
			if served != "" || err != nil {
				t.Errorf("%s: %q %v", c.manifest, served, err)
			}
			continue
		}
		var got map[string]any
		if err := json.Unmarshal([]byte(served), &got); err != nil || fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("%s: %s %v", c.manifest, served, err)
		}
	}
	Export(&recorder{}, `{"name": "n"}`)
	if _, err := getSchema(); err == nil || !strings.Contains(err.Error(), "get-schema") {
		t.Errorf("no schema: %v", err)
	}
}

func TestNoProviderExported(t *testing.T) {
	exported.provider = nil
	if _, err := check(CheckRequest{}); err == nil || !strings.Contains(err.Error(), "provider.Export") {
		t.Errorf("%v", err)
	}
}

// A provider that builds gocomp:index:Pair through the engine and serves a method.
type builder struct{ Defaults }

func (*builder) Create(CreateRequest) (CreateResult, error) { return CreateResult{}, nil }
func (*builder) Update(UpdateRequest) (UpdateResult, error) { return UpdateResult{}, nil }
func (*builder) Delete(DeleteRequest) error                 { return nil }

func (*builder) Construct(r ConstructRequest) (ConstructResult, error) {
	pair, err := RegisterResource(RegisterResourceRequest{Type: r.Type, Name: r.Name, Parent: r.Parent})
	if err != nil {
		return ConstructResult{}, err
	}
	return ConstructResult{URN: &pair.URN}, nil
}

func (*builder) Call(r CallRequest) (CallResult, error) {
	self, _ := r.Args.Get("__self__")
	ref, ok := self.AsReference()
	if !ok {
		return CallResult{Failures: []cairn.CheckFailure{{Property: "__self__", Reason: "not a resource"}}}, nil
	}
	outputs := cairn.Props("description", cairn.URNName(ref.URN)+" in "+r.Project+"/"+r.Stack)
	return CallResult{Outputs: cairn.PropertiesOf(outputs), OutputDependencies: Dependencies{"description": {ref.URN}}}, nil
}

// Natively there is no engine: a construct that registers fails as any error does (the WIT's
// `failed`), naming what it registered; the error is an *EngineError wrapping ErrNoEngine.
func TestTheEngineIsOnlyReachableInAComponent(t *testing.T) {
	Export(&builder{}, `{"name": "gocomp"}`)
	_, err := construct(ConstructRequest{Type: "gocomp:index:Pair", Name: "pair"})
	var engineErr *EngineError
	if !errors.As(err, &engineErr) || !errors.Is(err, ErrNoEngine) {
		t.Fatalf("%T %v", err, err)
	}
	if e := classify(err); e.kind != 0 || e.message != `registering gocomp:index:Pair "pair": `+ErrNoEngine.Error() {
		t.Errorf("%+v", e)
	}
	err = RegisterResourceOutputs("urn:pulumi:dev::p::gocomp:index:Pair::pair", cairn.NewPropertyMap())
	if !errors.As(err, &engineErr) || engineErr.Op != "registering the outputs of urn:pulumi:dev::p::gocomp:index:Pair::pair" {
		t.Errorf("%v", err)
	}
}

// What the engine answers is checked: a URN that is none, or outputs that are not a
// well-formed object, are an *EngineError naming the registration.
func TestTheEnginesAnswersAreChecked(t *testing.T) {
	r := &RegisterResourceRequest{Type: "gocomp:index:Thing", Name: "left"}
	urn := "urn:pulumi:dev::p::gocomp:index:Pair$gocomp:index:Thing::left"
	id := "left"
	good, err := registered(r, urn, &id, cairn.EncodeMap(cairn.Props("label", "p-left")))
	if err != nil || good.URN != urn || *good.ID != "left" {
		t.Fatalf("%+v %v", good, err)
	}
	if label, _ := good.Outputs.GetString("label"); label != "p-left" {
		t.Errorf("outputs: %v", good.Outputs)
	}
	if empty, err := registered(r, urn, nil, cairn.Table{}); err != nil || empty.Outputs.Len() != 0 {
		t.Errorf("no outputs: %+v %v", empty, err)
	}
	malformed := cairn.EncodeMap(cairn.Props("label", "x"))
	malformed.Nodes[1] = 7 // the object's first member points past the table
	for _, c := range []struct {
		urn     string
		outputs cairn.Table
		reason  string
	}{
		{"left", cairn.Table{}, `the engine answered with "left", which is not a URN`},
		{urn, malformed, "the engine sent malformed outputs: "},
		{urn, cairn.Encode(cairn.String("text")), "the engine sent malformed outputs: "},
	} {
		_, err := registered(r, c.urn, nil, c.outputs)
		var engineErr *EngineError
		if !errors.As(err, &engineErr) || engineErr.Op != `registering gocomp:index:Thing "left"` || !strings.HasPrefix(engineErr.Reason, c.reason) {
			t.Errorf("%s: %v", c.reason, err)
		}
	}
}

// Call gets its arguments as the host sends them (`__self__` a resource reference) and its
// result's dependencies go back.
func TestCallGetsTheComponentAsSelf(t *testing.T) {
	Export(&builder{}, `{"name": "gocomp"}`)
	urn := "urn:pulumi:dev::p::gocomp:index:Pair::pair"
	args := fromHost("__self__", cairn.ResourceReference{URN: urn})
	result, err := call(CallRequest{Token: "gocomp:index:Pair/describe", Args: args, Project: "p", Stack: "dev"})
	if err != nil {
		t.Fatal(err)
	}
	if d, _ := result.Outputs.GetString("description"); d != "pair in p/dev" {
		t.Errorf("%v", result.Outputs.Map())
	}
	if deps := result.OutputDependencies["description"]; len(deps) != 1 || deps[0] != urn {
		t.Errorf("%v", result.OutputDependencies)
	}
	result, err = call(CallRequest{Args: fromHost("__self__", "text")})
	if err != nil || len(result.Failures) != 1 || result.Failures[0].Property != "__self__" {
		t.Errorf("%+v %v", result, err)
	}
}
