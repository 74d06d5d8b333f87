package program

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	cairn "cairn.invalid/sdk"
)

// engine plays the host's monitor for a program natively: a registration completes on the
// next wait with its inputs (and `id`, `out`) as outputs, unknown in a preview; names listed
// in failures fail.
type engine struct {
	dryRun     bool
	settings   []configEntry
	failures   map[string]string
	handles    uint32
	queued     []completion
	registered []*registerRequest
	reads      []*readRequest
	invokes    []string
	outputs    map[string]*cairn.PropertyMap
	waits      int
}

func newEngine() *engine {
	return &engine{failures: map[string]string{}, outputs: map[string]*cairn.PropertyMap{}}
}

func (e *engine) deployment() deployment {
	return deployment{project: "proj", stack: "dev", organization: "org", dryRun: e.dryRun, rootURN: "urn:pulumi:dev::proj::pulumi:pulumi:Stack::proj-dev"}
}

func (e *engine) config() []configEntry { return e.settings }

func (e *engine) answer(o outcome) uint32 {
	e.handles++
	e.queued = append(e.queued, completion{handle: e.handles, outcome: o})
	return e.handles
}

func (e *engine) register(r *registerRequest) uint32 {
	e.registered = append(e.registered, r)
	if message, ok := e.failures[r.name]; ok {
		return e.answer(outcome{err: message})
	}
	urn := "urn:pulumi:dev::proj::" + r.typ + "::" + r.name
	outputs := r.inputs.Clone()
	id := r.name + "-id"
	if e.dryRun {
		outputs.Set("out", cairn.Unknown())
		return e.answer(outcome{isState: true, urn: urn, outputs: outputs})
	}
	outputs.Set("out", r.name+"-out")
	return e.answer(outcome{isState: true, urn: urn, id: &id, outputs: outputs})
}

func (e *engine) read(r *readRequest) uint32 {
	e.reads = append(e.reads, r)
	urn := "urn:pulumi:dev::proj::" + r.typ + "::" + r.name
	return e.answer(outcome{isState: true, urn: urn, id: &r.id, outputs: cairn.Props("outputs", cairn.Props("x", cairn.Secret("s")))})
}

func (e *engine) invoke(token string, args *cairn.PropertyMap, provider, version *string) uint32 {
	e.invokes = append(e.invokes, token)
	return e.answer(outcome{outputs: cairn.Props("echo", cairn.Object(args))})
}

func (e *engine) call(token string, args *cairn.PropertyMap, deps map[string][]string, provider, version *string) uint32 {
	return e.invoke(token, args, provider, version)
}

func (e *engine) wait() []completion {
	e.waits++
	done := e.queued
	e.queued = nil
	return done
}

func (e *engine) registerOutputs(urn string, outputs *cairn.PropertyMap) error {
	e.outputs[urn] = outputs
	return nil
}

func (e *engine) named(name string) *registerRequest {
	for _, r := range e.registered {
		if r.name == name {
			return r
		}
	}
	return nil
}

func runProgram(t *testing.T, e *engine, main func(*Context) error) error {
	t.Helper()
	Export(main)
	return run(e)
}

const root = "urn:pulumi:dev::proj::pulumi:pulumi:Stack::proj-dev"

func TestResourcesRegisterWhenTheirInputsAreKnown(t *testing.T) {
	e := newEngine()
	err := runProgram(t, e, func(ctx *Context) error {
		group := ctx.Component("proj:index:Group", "group")
		a := ctx.Custom("test:index:R", "a", Args{"size": 1}, Parent(group))
		b := ctx.Custom("test:index:R", "b", Args{"from": a.Output("out"), "plain": "x"}, Parent(group), DependsOn(a))
		group.RegisterOutputs(Args{"b": b.Output("out")})
		ctx.Export("a", a.Output("out"))
		ctx.Export("secret", Secret("s3"))
		ctx.Export("joined", Apply2(a.OutputString("out"), b.OutputString("out"), func(x, y string) string { return x + "+" + y }))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, r := range e.registered {
		order = append(order, r.name)
	}
	// b waits for a's output: it is registered on a later turn of the loop.
	if strings.Join(order, ",") != "group,a,b" {
		t.Errorf("order: %v", order)
	}
	b := e.named("b")
	if v, _ := b.inputs.Get("from"); !v.Equal(cairn.String("a-out")) {
		t.Errorf("b's input: %v", b.inputs)
	}
	aURN := "urn:pulumi:dev::proj::test:index:R::a"
	if len(b.propertyDependencies) != 1 || b.propertyDependencies[0].property != "from" || !slices.Equal(b.propertyDependencies[0].urns, []string{aURN}) {
		t.Errorf("property dependencies: %+v", b.propertyDependencies)
	}
	if !slices.Equal(b.dependsOn, []string{aURN}) || *b.parent != "urn:pulumi:dev::proj::proj:index:Group::group" {
		t.Errorf("options: %v %v", b.dependsOn, b.parent)
	}
	stack := e.outputs[root]
	if v, _ := stack.Get("joined"); !v.Equal(cairn.String("a-out+b-out")) {
		t.Errorf("stack outputs: %v", stack)
	}
	if v, _ := stack.Get("secret"); !v.IsSecret() {
		t.Errorf("a secret output stays secret: %v", stack)
	}
	if group := e.outputs["urn:pulumi:dev::proj::proj:index:Group::group"]; group.Len() != 1 {
		t.Errorf("component outputs: %v", group)
	}
}

func TestAPreviewDoesNotRunCallbacksOnUnknowns(t *testing.T) {
	e := newEngine()
	e.dryRun = true
	ran := false
	var id Output[string]
	err := runProgram(t, e, func(ctx *Context) error {
		a := ctx.Custom("test:index:R", "a", Args{"size": 1})
		id = a.ID
		derived := Apply(a.OutputString("out"), func(s string) string { ran = true; return s })
		ctx.Export("derived", derived)
		ctx.Export("size", a.Output("size"))
		ctx.Invoke("test:index:fn", Args{"x": a.Output("out")}, nil)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if ran {
		t.Error("a callback ran on an unknown value")
	}
	if !id.IsUnknown() {
		t.Error("a new resource's ID is unknown in a preview")
	}
	if len(e.invokes) != 0 {
		t.Error("an invoke with unknown arguments reached the provider")
	}
	stack := e.outputs[root]
	if v, _ := stack.Get("derived"); !v.IsUnknown() {
		t.Errorf("derived: %v", v)
	}
	if v, _ := stack.Get("size"); !v.Equal(cairn.Int(1)) {
		t.Errorf("known inputs are known outputs: %v", v)
	}
}

func TestAFailedRegistrationFailsWhatDependsOnItAndTheProgramAfterTheRest(t *testing.T) {
	e := newEngine()
	e.failures["a"] = "the provider said no"
	err := runProgram(t, e, func(ctx *Context) error {
		a := ctx.Custom("test:index:R", "a", nil)
		ctx.Custom("test:index:R", "b", Args{"from": a.Output("out")})
		ctx.Custom("test:index:R", "c", nil)
		return nil
	})
	if err == nil || err.Error() != "test:index:R a: the provider said no" {
		t.Fatalf("%v", err)
	}
	if e.named("b") != nil {
		t.Error("b was registered with an input that failed")
	}
	if e.named("c") == nil {
		t.Error("an independent resource was not registered")
	}
}

func TestCallbackErrorsAndPanicsFailTheProgram(t *testing.T) {
	for _, c := range []struct {
		name string
		f    func(string) (string, error)
		want string
	}{
		{"error", func(string) (string, error) { return "", errors.New("bad value") }, "apply failed: bad value"},
		{"panic", func(string) (string, error) { panic("boom") }, "apply failed: panic: boom"},
	} {
		e := newEngine()
		err := runProgram(t, e, func(ctx *Context) error {
			a := ctx.Custom("test:index:R", "a", nil)
			b := ApplyErr(a.OutputString("out"), c.f)
			ctx.Custom("test:index:R", "b", Args{"x": b})
			ctx.Custom("test:index:R", "c", nil)
			return nil
		})
		if err == nil || err.Error() != c.want {
			t.Errorf("%s: %v", c.name, err)
		}
		if e.named("c") == nil || e.named("b") != nil {
			t.Errorf("%s: registered %d", c.name, len(e.registered))
		}
	}
	e := newEngine()
	if err := runProgram(t, e, func(*Context) error { return errors.New("main failed") }); err == nil || err.Error() != "main failed" {
		t.Errorf("%v", err)
	}
}

func TestTransformationsAndInheritedProviders(t *testing.T) {
	e := newEngine()
	err := runProgram(t, e, func(ctx *Context) error {
		ctx.RegisterStackTransformation(func(a *TransformArgs) {
			a.Args["tagged"] = true
		})
		p := ctx.Provider("test", "explicit", nil)
		parent := ctx.Component("proj:index:Group", "group", Providers(p), Transformations(func(a *TransformArgs) {
			if a.Name == "renamed-by-parent" {
				a.Name = "child"
			}
		}))
		ctx.Custom("test:index:R", "renamed-by-parent", Args{}, Parent(parent))
		ctx.Custom("other:index:R", "other", nil, Parent(parent))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	child := e.named("child")
	if child == nil {
		t.Fatal("the parent's transformation did not rename the child")
	}
	if v, _ := child.inputs.Get("tagged"); !v.Equal(cairn.Bool(true)) {
		t.Errorf("the stack transformation: %v", child.inputs)
	}
	ref := "urn:pulumi:dev::proj::pulumi:providers:test::explicit::explicit-id"
	if child.provider == nil || *child.provider != ref {
		t.Errorf("the child's provider: %v", child.provider)
	}
	if other := e.named("other"); other.provider != nil {
		t.Errorf("a provider of another package: %v", *other.provider)
	}
}

func TestAProviderCreatedInAPreviewIsReferencedByTheUnknownID(t *testing.T) {
	e := newEngine()
	e.dryRun = true
	err := runProgram(t, e, func(ctx *Context) error {
		p := ctx.Provider("test", "explicit", nil)
		ctx.Custom("test:index:R", "r", nil, Provider(p))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if r := e.named("r"); r.provider == nil || !strings.HasSuffix(*r.provider, "::"+UnknownID) {
		t.Errorf("%v", r.provider)
	}
}

func TestReadsInvokesAndStackReferences(t *testing.T) {
	e := newEngine()
	err := runProgram(t, e, func(ctx *Context) error {
		ref := ctx.StackReference("other")
		ctx.Export("x", ref.StackOutput("x"))
		ctx.Export("missing", ref.RequireStackOutput("nope"))
		result := ctx.Invoke("test:index:fn", Args{"a": Secret(1)}, nil)
		ctx.Export("invoked", Apply(result, func(m *cairn.PropertyMap) cairn.Value { return cairn.Object(m) }))
		return nil
	})
	if err == nil || !strings.Contains(err.Error(), `stack other has no output "nope"`) {
		t.Fatalf("%v", err)
	}
	if len(e.reads) != 1 || e.reads[0].id != "other" || e.reads[0].typ != "pulumi:pulumi:StackReference" {
		t.Errorf("reads: %+v", e.reads)
	}
	if !slices.Equal(e.invokes, []string{"test:index:fn"}) {
		t.Errorf("invokes: %v", e.invokes)
	}
}

func TestConfig(t *testing.T) {
	e := newEngine()
	e.settings = []configEntry{
		{"proj:name", cairn.String("Ada")},
		{"proj:count", cairn.String("3")},
		{"proj:bad", cairn.String("three")},
		{"proj:password", cairn.Secret("hunter2")},
		{"proj:tags", cairn.Object(cairn.Props("env", "dev"))},
		{"aws:region", cairn.String("eu")},
	}
	err := runProgram(t, e, func(ctx *Context) error {
		c := ctx.Config()
		if v, ok := c.Get("name"); !ok || v != "Ada" {
			return fmt.Errorf("name: %q", v)
		}
		if n, err := c.GetInt("count", 0); err != nil || n != 3 {
			return fmt.Errorf("count: %d %v", n, err)
		}
		if n, err := c.GetInt("absent", 7); err != nil || n != 7 {
			return fmt.Errorf("absent: %d %v", n, err)
		}
		if _, err := c.GetInt("bad", 0); err == nil || !strings.Contains(err.Error(), "'proj:bad' is not a whole number") {
			return fmt.Errorf("bad: %v", err)
		}
		if _, err := c.Require("missing"); err == nil || !strings.Contains(err.Error(), "cairn config set proj:missing <value>") {
			return fmt.Errorf("missing: %v", err)
		}
		if _, err := c.RequireSecret("missing"); err == nil || !strings.Contains(err.Error(), "cairn config set --secret proj:missing") {
			return fmt.Errorf("missing secret: %v", err)
		}
		if pw, ok := c.GetSecret("password"); !ok || !pw.IsSecret() {
			return fmt.Errorf("password")
		}
		var tags map[string]string
		if ok, err := c.GetObject("tags", &tags); !ok || err != nil || tags["env"] != "dev" {
			return fmt.Errorf("tags: %v %v", tags, err)
		}
		if v, ok := ctx.ConfigNamespace("aws").Get("region"); !ok || v != "eu" {
			return fmt.Errorf("namespace")
		}
		if ctx.Project() != "proj" || ctx.Stack() != "dev" || ctx.Organization() != "org" || ctx.DryRun() {
			return fmt.Errorf("deployment")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestOutputs(t *testing.T) {
	a, b := Val(1).WithDependencies("urn:a"), Secret(2).WithDependencies("urn:b")
	all := All(a, b)
	if v, ok, _ := all.TryGet(); !ok || !slices.Equal(v, []int{1, 2}) || !all.IsSecret() || !slices.Equal(all.Dependencies(), []string{"urn:a", "urn:b"}) {
		t.Errorf("All: %v %v %v", v, all.IsSecret(), all.Dependencies())
	}
	if !All(a, Unknown[int]()).IsUnknown() {
		t.Error("All of an unknown")
	}
	if _, _, err := All(Fail[int](errors.New("x")), Unknown[int]()).TryGet(); err == nil {
		t.Error("All of a failure")
	}
	flat := ApplyOutput(Secret("k"), func(s string) Output[string] { return Val(s + "!").WithDependencies("urn:c") })
	if v, _, _ := flat.TryGet(); v != "k!" || !flat.IsSecret() || !slices.Equal(flat.Dependencies(), []string{"urn:c"}) {
		t.Errorf("ApplyOutput: %v", v)
	}
	if Secret(1).Unsecret().IsSecret() || !Val(1).AsSecret().IsSecret() {
		t.Error("secret marks")
	}
	m := AllMap(map[string]Output[string]{"x": Val("1"), "y": Val("2")})
	if v, _, _ := m.TryGet(); v["x"] != "1" || v["y"] != "2" {
		t.Errorf("AllMap: %v", v)
	}
	// Lifted access: a secret or unknown property makes the output so.
	obj := Val(cairn.Object(cairn.Props("s", cairn.Secret("x"), "u", cairn.Unknown(), "list", cairn.Array(cairn.Int(7)))))
	if s := Get(obj, "s"); !s.IsSecret() {
		t.Error("Get of a secret")
	}
	if !Get(obj, "u").IsUnknown() {
		t.Error("Get of an unknown")
	}
	if v, _, _ := As[int64](Index(Get(obj, "list"), 0)).TryGet(); v != 7 {
		t.Errorf("Index: %v", v)
	}
	if _, _, err := As[bool](Get(obj, "list")).TryGet(); err == nil || !strings.Contains(err.Error(), "expected a bool, found a array") {
		t.Errorf("As: %v", err)
	}
	if _, _, err := ToValue(make(chan int)).TryGet(); err == nil {
		t.Error("a value the engine cannot take")
	}
}

// A zero Output (one nothing will ever resolve) fails what uses it, naming the mistake,
// rather than leaving a resource unregistered.
func TestTheZeroOutputFails(t *testing.T) {
	e := newEngine()
	err := runProgram(t, e, func(ctx *Context) error {
		var never Output[string]
		ctx.Custom("test:index:R", "a", Args{"x": never})
		return nil
	})
	if err == nil || !strings.Contains(err.Error(), "the zero Output") {
		t.Fatalf("%v", err)
	}
	if e.named("a") != nil {
		t.Error("a was registered with a zero Output")
	}
}
