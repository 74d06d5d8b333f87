// Command lifecycle-test-go is the lifecycle scenarios' test provider (package `test`) written
// with the Go SDK: the behaviour of cairn-test-provider (host/lifecycle/test-provider), the
// same as the Rust component (tests/guests/lifecycle-test), over the same "cloud" in the
// granted directory /cloud, which the harness fills before and reads back after each
// deployment.
//
// Layout of /cloud:
//   - resources/<id>.json: {name, type, inputs, outputs}, plain JSON values (secrets
//     {"$secret": v}, unknowns "$unknown");
//   - creates/<name>, generated/<name>: counters behind IDs `<name>-<n>` and names
//     `<name>-gen<n>` (one file per name, so concurrent instances never share a counter);
//   - behaviour.json: the deployment's behaviour (the harness's ProviderSpec).
package main

import (
	_ "embed"
	"fmt"
	"math"
	"strconv"
	"strings"

	cairn "cairn.invalid/sdk"
	"cairn.invalid/sdk/provider"
)

//go:embed cairn.json
var manifest string

// testProvider keeps nothing: everything lives in the cloud directory.
type testProvider struct{ provider.Defaults }

func init() { provider.Export(&testProvider{}, manifest) }

func main() {}

// failure is an operation's error, with what it left behind when it acted first.
func failure(message string, id string, inputs, outputs *cairn.PropertyMap) error {
	return provider.Partial(message, provider.PartialState{ID: id, Inputs: inputs, Outputs: outputs})
}

// DiffConfig: the changed keys; those in configReplaceKeys (default `region`) replace.
func (*testProvider) DiffConfig(r provider.DiffRequest) (provider.DiffResult, error) {
	spec, err := loadSpec()
	if err != nil {
		return provider.DiffResult{}, err
	}
	replaceOn := []string{"region"}
	if spec.ConfigReplaceKeys != nil {
		replaceOn = *spec.ConfigReplaceKeys
	}
	olds, news := r.OldInputs.Clone(), r.Inputs.Clone()
	changed := changedKeys(olds, news)
	return provider.DiffResult{
		Changes:     changes(changed),
		ReplaceKeys: among(changed, replaceOn),
		ChangedKeys: changed,
	}, nil
}

// Check: the news and the failures checkFailures lists, or else the news with a generated
// `name` when autoName asks for one (the olds' name, when Check gets one).
func (*testProvider) Check(r provider.CheckRequest) (provider.CheckResult, error) {
	name := nameOf(r.URN)
	b, err := behaviourOf(name)
	if err != nil {
		return provider.CheckResult{}, err
	}
	if b.CheckFailures != nil {
		failures := make([]cairn.CheckFailure, len(*b.CheckFailures))
		for i, f := range *b.CheckFailures {
			failures[i] = cairn.CheckFailure{Property: f.Property, Reason: f.Reason}
		}
		return provider.CheckResult{Inputs: r.Inputs, Failures: failures}, nil
	}
	if b.AutoName != nil && *b.AutoName && !r.Inputs.Has("name") {
		news := r.Inputs.Map()
		if old, ok := r.OldInputs.Get("name"); ok {
			news.Set("name", old)
		} else {
			n, err := next("generated", name)
			if err != nil {
				return provider.CheckResult{}, err
			}
			news.Set("name", fmt.Sprintf("%s-gen%d", name, n))
		}
	}
	return provider.CheckResult{Inputs: r.Inputs}, nil
}

// Diff: the changed keys, those in replaceOn to replace (delete first with
// deleteBeforeReplace), and every changed path; with `diff: unknown` only the replacement.
func (*testProvider) Diff(r provider.DiffRequest) (provider.DiffResult, error) {
	b, err := behaviourOf(nameOf(r.URN))
	if err != nil {
		return provider.DiffResult{}, err
	}
	olds, news := r.OldInputs.Clone(), r.Inputs.Clone()
	changed := changedKeys(olds, news)
	var replaceOn []string
	if b.ReplaceOn != nil {
		replaceOn = *b.ReplaceOn
	}
	replace := among(changed, replaceOn)
	dbr := b.DeleteBeforeReplace != nil && *b.DeleteBeforeReplace && len(replace) > 0
	if b.Diff != nil && *b.Diff == "unknown" {
		return provider.DiffResult{Changes: provider.DiffUnknown, ReplaceKeys: replace, DeleteBeforeReplace: dbr}, nil
	}
	paths := []provider.PropertyDiff{}
	for _, key := range olds.Keys() {
		old, _ := olds.Get(key)
		new, has := news.Get(key)
		changedPaths(key, &old, present(new, has), &paths)
	}
	for _, key := range news.Keys() {
		if !olds.Has(key) {
			new, _ := news.Get(key)
			changedPaths(key, nil, &new, &paths)
		}
	}
	for i := range paths {
		top := paths[i].Path
		if at := strings.IndexAny(top, ".["); at >= 0 {
			top = top[:at]
		}
		for _, k := range replace {
			if k == top {
				paths[i].Kind = paths[i].Kind.WithReplace()
			}
		}
	}
	return provider.DiffResult{
		Changes:             changes(changed),
		ReplaceKeys:         replace,
		ChangedKeys:         changed,
		DetailedDiff:        paths,
		DeleteBeforeReplace: dbr,
	}, nil
}

func present(v cairn.Value, ok bool) *cairn.Value {
	if !ok {
		return nil
	}
	return &v
}

// Create (or in a preview what it would return): the properties without secrets plus `out`
// (`<name>-out-<n>`; unknown in a preview), kept in the cloud as `<name>-<n>`. failCreate
// fails it (after creating, with partial); badOutput adds the output `bad`.
func (p *testProvider) Create(r provider.CreateRequest) (provider.CreateResult, error) {
	return p.create(r, false)
}

// PreviewCreate is Create in a preview.
func (p *testProvider) PreviewCreate(r provider.CreateRequest) (provider.CreateResult, error) {
	return p.create(r, true)
}

func (*testProvider) create(r provider.CreateRequest, preview bool) (provider.CreateResult, error) {
	name := nameOf(r.URN)
	b, err := behaviourOf(name)
	if err != nil {
		return provider.CreateResult{}, err
	}
	properties := r.Inputs.Clone()
	outputs := properties.Unsecret()
	if preview {
		outputs.Set("out", cairn.Unknown())
		return provider.CreateResult{Outputs: cairn.PropertiesOf(outputs)}, nil
	}
	partial := b.Partial != nil && *b.Partial
	if b.FailCreate != nil && !partial {
		return provider.CreateResult{}, fmt.Errorf("%s", *b.FailCreate)
	}
	n, err := next("creates", name)
	if err != nil {
		return provider.CreateResult{}, err
	}
	id := fmt.Sprintf("%s-%d", name, n)
	outputs.Set("out", fmt.Sprintf("%s-out-%d", name, n))
	entry := entry{Name: name, Type: cairn.URNType(r.URN), Inputs: properties.Unsecret(), Outputs: outputs.Clone()}
	if err := put(id, entry); err != nil {
		return provider.CreateResult{}, err
	}
	if b.FailCreate != nil {
		return provider.CreateResult{}, failure(*b.FailCreate, id, properties, outputs)
	}
	withBadOutput(b, outputs)
	return provider.CreateResult{ID: id, Outputs: cairn.PropertiesOf(outputs)}, nil
}

// Read: the resource as the cloud has it (gone when it is not there); failRead fails it.
func (*testProvider) Read(r provider.ReadRequest) (provider.ReadResult, error) {
	b, err := behaviourOf(nameOf(r.URN))
	if err != nil {
		return provider.ReadResult{}, err
	}
	if b.FailRead != nil {
		return provider.ReadResult{}, fmt.Errorf("%s", *b.FailRead)
	}
	e, ok, err := get(r.ID)
	if err != nil || !ok {
		return provider.ReadResult{}, err
	}
	return provider.ReadResult{ID: r.ID, Inputs: cairn.PropertiesOf(e.Inputs), Outputs: cairn.PropertiesOf(e.Outputs)}, nil
}

// Update (or in a preview what it would return): the news without secrets plus the old
// `out`. failUpdate fails it (previews too; after updating, with partial); badOutput adds
// `bad`.
func (p *testProvider) Update(r provider.UpdateRequest) (provider.UpdateResult, error) {
	return p.update(r, false)
}

// PreviewUpdate is Update in a preview: as in process, a failing update fails its preview
// too.
func (p *testProvider) PreviewUpdate(r provider.UpdateRequest) (provider.UpdateResult, error) {
	return p.update(r, true)
}

func (*testProvider) update(r provider.UpdateRequest, preview bool) (provider.UpdateResult, error) {
	name := nameOf(r.URN)
	b, err := behaviourOf(name)
	if err != nil {
		return provider.UpdateResult{}, err
	}
	partial := b.Partial != nil && *b.Partial
	if b.FailUpdate != nil && !partial {
		return provider.UpdateResult{}, fmt.Errorf("%s", *b.FailUpdate)
	}
	news := r.Inputs.Clone()
	outputs := news.Unsecret()
	out := cairn.Unknown()
	if old, ok := r.OldOutputs.Get("out"); ok {
		out = old.Unsecret()
	}
	outputs.Set("out", out)
	if preview {
		return provider.UpdateResult{Outputs: cairn.PropertiesOf(outputs)}, nil
	}
	e, ok, err := get(r.ID)
	if err != nil {
		return provider.UpdateResult{}, err
	}
	if !ok {
		return provider.UpdateResult{}, fmt.Errorf("cannot update %s: no resource with ID %s exists", r.URN, r.ID)
	}
	e.Inputs, e.Outputs = news.Unsecret(), outputs.Clone()
	if err := put(r.ID, e); err != nil {
		return provider.UpdateResult{}, err
	}
	if b.FailUpdate != nil {
		return provider.UpdateResult{}, failure(*b.FailUpdate, r.ID, news, outputs)
	}
	withBadOutput(b, outputs)
	return provider.UpdateResult{Outputs: cairn.PropertiesOf(outputs)}, nil
}

// Delete: the resource leaves the cloud; failDelete fails it.
func (*testProvider) Delete(r provider.DeleteRequest) error {
	b, err := behaviourOf(nameOf(r.URN))
	if err != nil {
		return err
	}
	if b.FailDelete != nil {
		return fmt.Errorf("%s", *b.FailDelete)
	}
	return remove(r.ID)
}

// withBadOutput adds the output `bad` a behaviour asks for (`nan`, `inf`): a number no state
// can store.
func withBadOutput(b behaviour, outputs *cairn.PropertyMap) {
	switch {
	case b.BadOutput == nil:
	case *b.BadOutput == "nan":
		outputs.Set("bad", math.NaN())
	case *b.BadOutput == "inf":
		outputs.Set("bad", math.Inf(1))
	}
}

func nameOf(urn string) string {
	if name := cairn.URNName(urn); name != "" || strings.HasPrefix(urn, "urn:pulumi:") {
		return name
	}
	return urn
}

func changes(changed []string) provider.DiffChanges {
	if len(changed) == 0 {
		return provider.DiffNone
	}
	return provider.DiffSome
}

// among is the keys that wanted lists.
func among(keys, wanted []string) []string {
	out := []string{}
	for _, k := range keys {
		for _, w := range wanted {
			if k == w {
				out = append(out, k)
				break
			}
		}
	}
	return out
}

// differs: an unknown new value always has changed; secrecy alone does not count.
func differs(old, new cairn.Value) bool {
	return new.ContainsUnknowns() || !old.Unsecret().Equal(new.Unsecret())
}

// changedKeys are the top-level keys whose values differ: the news' in order, then those
// only the olds have.
func changedKeys(olds, news *cairn.PropertyMap) []string {
	keys := []string{}
	for key, new := range news.All() {
		if old, ok := olds.Get(key); !ok || differs(old, new) {
			keys = append(keys, key)
		}
	}
	for _, key := range olds.Keys() {
		if !news.Has(key) {
			keys = append(keys, key)
		}
	}
	return keys
}

// changedPaths adds the changed paths between two values, as a detailed diff reports them:
// objects and arrays are compared element by element (`tags.env`, `ports[0]`), anything else
// as a whole.
func changedPaths(prefix string, old, new *cairn.Value, out *[]provider.PropertyDiff) {
	var kind provider.DiffKind
	switch {
	case old == nil && new == nil:
		return
	case old == nil:
		kind = provider.Add
	case new == nil:
		kind = provider.Delete
	default:
		o, oIsObject := old.AsObject()
		n, nIsObject := new.AsObject()
		if oIsObject && nIsObject {
			for _, key := range o.Keys() {
				a, _ := o.Get(key)
				b, has := n.Get(key)
				changedPaths(join(prefix, key), &a, present(b, has), out)
			}
			for _, key := range n.Keys() {
				if !o.Has(key) {
					b, _ := n.Get(key)
					changedPaths(join(prefix, key), nil, &b, out)
				}
			}
			return
		}
		oa, oIsArray := old.AsArray()
		na, nIsArray := new.AsArray()
		if oIsArray && nIsArray {
			for i := 0; i < max(len(oa), len(na)); i++ {
				var a, b *cairn.Value
				if i < len(oa) {
					a = &oa[i]
				}
				if i < len(na) {
					b = &na[i]
				}
				changedPaths(prefix+"["+strconv.Itoa(i)+"]", a, b, out)
			}
			return
		}
		if !differs(*old, *new) {
			return
		}
		kind = provider.Update
	}
	*out = append(*out, provider.PropertyDiff{Path: prefix, Kind: kind, InputDiff: true})
}

func join(prefix, key string) string {
	if prefix == "" {
		return key
	}
	return prefix + "." + key
}
