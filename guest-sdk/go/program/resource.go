package program

import (
	"fmt"
	"slices"
	"strings"

	cairn "cairn.invalid/sdk"
)

// UnknownID is the ID a provider reference uses for a provider not created yet (a preview).
const UnknownID = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"

// Args are a resource's arguments: property names and plain values or outputs.
type Args map[string]Input

// Resource is a declared resource: its URN, its ID (custom resources) and its outputs, as
// outputs. A declaration returns at once; its request reaches the engine as soon as its
// inputs (and parent, dependsOn, provider) are known, so independent resources deploy in
// parallel.
type Resource struct {
	URN Output[string]
	// ID is the provider's ID: unknown in a preview of a create, empty for components.
	ID      Output[string]
	outputs Output[*cairn.PropertyMap]
	typ     string
	name    string
	// What children inherit: transformations, and provider references by package.
	transformations []Transformation
	providers       []packageProvider
}

type packageProvider struct {
	pkg       string
	reference Output[string]
}

// Type is the resource's type token.
func (r *Resource) Type() string { return r.typ }

// Name is the resource's logical name.
func (r *Resource) Name() string { return r.name }

// Outputs are all of the resource's output properties.
func (r *Resource) Outputs() Output[*cairn.PropertyMap] { return r.outputs }

// Output is output property key (lifted: a secret or unknown property makes the output so;
// null when absent).
func (r *Resource) Output(key string) Output[cairn.Value] {
	return lift(Apply(r.outputs, func(m *cairn.PropertyMap) cairn.Value {
		v, _ := m.Get(key)
		return v
	}))
}

// OutputString is output property key as a string (a value of another type fails it).
func (r *Resource) OutputString(key string) Output[string] { return As[string](r.Output(key)) }

// OutputInt is output property key as an integer.
func (r *Resource) OutputInt(key string) Output[int64] { return As[int64](r.Output(key)) }

// RegisterOutputs sets a component's outputs once they are known (secrets stay secret).
func (r *Resource) RegisterOutputs(outputs Args) {
	keys := sortedArgKeys(outputs)
	items := make([]Output[cairn.Value], 0, len(keys)+1)
	for _, k := range keys {
		items = append(items, ToValue(outputs[k]))
	}
	items = append(items, ToValue(r.URN))
	whenAll(items, func(rs []resolved[cairn.Value]) {
		urnR := rs[len(rs)-1]
		urn, ok := urnR.value.AsString()
		if urnR.state != known || !ok {
			return // the registration's failure is recorded already
		}
		m := cairn.NewPropertyMap()
		for i, k := range keys {
			v, err := propertyValue(rs[i])
			if err != nil {
				return // so is the output's
			}
			m.Set(k, v)
		}
		if err := rt.host.registerOutputs(urn, m); err != nil {
			recordError(fmt.Sprintf("registering the outputs of %s: %s", urn, err))
		}
	})
}

// ProviderResource is an explicit provider (`pulumi:providers:<package>`), for the Provider
// and Providers options.
type ProviderResource struct {
	*Resource
	pkg string
}

// Package is the package the provider serves.
func (p *ProviderResource) Package() string { return p.pkg }

// Reference is the reference the engine takes: `<urn>::<id>` (UnknownID in a preview of the
// provider's creation, so the engine can still resolve it).
func (p *ProviderResource) Reference() Output[string] {
	out, resolve := pending[string]()
	urn := p.URN
	All(urn, p.ID).then(func(r resolved[[]string]) {
		next := resolved[string]{state: r.state, err: r.err, deps: r.deps}
		switch r.state {
		case known:
			next.value = r.value[0] + "::" + r.value[1]
		case unknown:
			if u, ok := urn.peek(); ok && u.state == known {
				next.state, next.value = known, u.value+"::"+UnknownID
			}
		}
		resolve(next)
	})
	return out
}

// Transformation may change a resource's type, name, arguments and options before it is
// registered; it applies to the resource it is given to and every descendant.
type Transformation func(*TransformArgs)

// TransformArgs is what a Transformation may change.
type TransformArgs struct {
	Type    string
	Name    string
	Args    Args
	Options *ResourceOptions
}

// Alias is a previous identity of a resource: a full URN, or parts that default to the
// resource's current ones (NoParent: it had no parent then).
type Alias struct {
	URN       *string
	Name      *string
	Type      *string
	ParentURN *string
	NoParent  bool
	Stack     *string
	Project   *string
}

// AliasName says the resource used to be called name.
func AliasName(name string) Alias { return Alias{Name: &name} }

// AliasURN says the resource used to have this URN.
func AliasURN(urn string) Alias { return Alias{URN: &urn} }

// AliasType says the resource used to have this type.
func AliasType(t string) Alias { return Alias{Type: &t} }

// AliasNoParent says the resource used to have no parent.
func AliasNoParent() Alias { return Alias{NoParent: true} }

// CustomTimeouts are seconds a create, update or delete may take (0: the provider's
// default).
type CustomTimeouts struct{ Create, Update, Delete float64 }

// ResourceOptions are the programming model's resource options; set them with the
// ResourceOption functions.
type ResourceOptions struct {
	Parent                  *Resource
	DependsOn               []*Resource
	Protect                 bool
	RetainOnDelete          bool
	DeletedWith             *Resource
	Provider                *ProviderResource
	Providers               []*ProviderResource
	Aliases                 []Alias
	IgnoreChanges           []string
	ReplaceOnChanges        []string
	DeleteBeforeReplace     *bool
	AdditionalSecretOutputs []string
	CustomTimeouts          *CustomTimeouts
	Import                  *string
	Version                 *string
	Transformations         []Transformation
}

// ResourceOption sets a resource option.
type ResourceOption func(*ResourceOptions)

// Parent makes the resource a child of parent (its URN includes the parent's type; children
// inherit the parent's providers and transformations).
func Parent(parent *Resource) ResourceOption {
	return func(o *ResourceOptions) { o.Parent = parent }
}

// DependsOn makes the resource depend on these beyond what its inputs say.
func DependsOn(resources ...*Resource) ResourceOption {
	return func(o *ResourceOptions) { o.DependsOn = append(o.DependsOn, resources...) }
}

// Protect refuses to delete the resource.
func Protect(protect bool) ResourceOption { return func(o *ResourceOptions) { o.Protect = protect } }

// RetainOnDelete drops the resource from the stack on delete but leaves it in the cloud.
func RetainOnDelete(retain bool) ResourceOption {
	return func(o *ResourceOptions) { o.RetainOnDelete = retain }
}

// DeletedWith skips deleting the resource when r is deleted too.
func DeletedWith(r *Resource) ResourceOption { return func(o *ResourceOptions) { o.DeletedWith = r } }

// Provider manages the resource with p instead of its package's default provider.
func Provider(p *ProviderResource) ResourceOption {
	return func(o *ResourceOptions) { o.Provider = p }
}

// Providers gives a component's children these providers, by package.
func Providers(ps ...*ProviderResource) ResourceOption {
	return func(o *ResourceOptions) { o.Providers = append(o.Providers, ps...) }
}

// Aliases are previous identities of the resource.
func Aliases(aliases ...Alias) ResourceOption {
	return func(o *ResourceOptions) { o.Aliases = append(o.Aliases, aliases...) }
}

// IgnoreChanges ignores changes to these property paths.
func IgnoreChanges(paths ...string) ResourceOption {
	return func(o *ResourceOptions) { o.IgnoreChanges = append(o.IgnoreChanges, paths...) }
}

// ReplaceOnChanges replaces the resource when these property paths change.
func ReplaceOnChanges(paths ...string) ResourceOption {
	return func(o *ResourceOptions) { o.ReplaceOnChanges = append(o.ReplaceOnChanges, paths...) }
}

// DeleteBeforeReplace deletes the old resource before creating its replacement.
func DeleteBeforeReplace(yes bool) ResourceOption {
	return func(o *ResourceOptions) { o.DeleteBeforeReplace = &yes }
}

// AdditionalSecretOutputs marks these output properties secret.
func AdditionalSecretOutputs(keys ...string) ResourceOption {
	return func(o *ResourceOptions) {
		o.AdditionalSecretOutputs = append(o.AdditionalSecretOutputs, keys...)
	}
}

// Timeouts sets how long a create, update or delete may take.
func Timeouts(t CustomTimeouts) ResourceOption {
	return func(o *ResourceOptions) { o.CustomTimeouts = &t }
}

// Import adopts the existing resource with this ID instead of creating one.
func Import(id string) ResourceOption { return func(o *ResourceOptions) { o.Import = &id } }

// Version uses this version of the resource's provider package.
func Version(version string) ResourceOption {
	return func(o *ResourceOptions) { o.Version = &version }
}

// Transformations apply to the resource and its descendants.
func Transformations(ts ...Transformation) ResourceOption {
	return func(o *ResourceOptions) { o.Transformations = append(o.Transformations, ts...) }
}

// kind of declaration.
type kind uint8

const (
	kindCustom kind = iota
	kindComponent
	kindRemote
	kindRead
)

// Custom declares a custom resource managed by its package's provider.
func (*Context) Custom(t, name string, args Args, opts ...ResourceOption) *Resource {
	return declare(kindCustom, t, name, args, nil, opts)
}

// Component declares a local component resource; declare its children with Parent(it), then
// call RegisterOutputs.
func (*Context) Component(t, name string, opts ...ResourceOption) *Resource {
	return declare(kindComponent, t, name, nil, nil, opts)
}

// RemoteComponent declares a component built by its provider (`construct`).
func (*Context) RemoteComponent(t, name string, args Args, opts ...ResourceOption) *Resource {
	return declare(kindRemote, t, name, args, nil, opts)
}

// Provider declares an explicit provider of pkg, configured by args.
func (*Context) Provider(pkg, name string, args Args, opts ...ResourceOption) *ProviderResource {
	r := declare(kindCustom, "pulumi:providers:"+pkg, name, args, nil, opts)
	return &ProviderResource{Resource: r, pkg: pkg}
}

// Read reads an existing resource the stack does not manage, by ID (a string or an output).
func (*Context) Read(t, name string, id Input, args Args, opts ...ResourceOption) *Resource {
	readID := ToValue(id)
	return declare(kindRead, t, name, args, &readID, opts)
}

// Invoke calls a provider function once args are known; unknown arguments (a preview) give
// an unknown result, without calling the provider.
func (*Context) Invoke(token string, args Args, provider *ProviderResource) Output[*cairn.PropertyMap] {
	return request(token, args, provider, func(a *cairn.PropertyMap, _ map[string][]string, p *string) uint32 {
		return rt.host.invoke(token, a, p, nil)
	}, "invoking")
}

// Call calls a component method once args are known (see Invoke).
func (*Context) Call(token string, args Args, provider *ProviderResource) Output[*cairn.PropertyMap] {
	return request(token, args, provider, func(a *cairn.PropertyMap, deps map[string][]string, p *string) uint32 {
		return rt.host.call(token, a, deps, p, nil)
	}, "calling")
}

func request(token string, args Args, provider *ProviderResource,
	send func(*cairn.PropertyMap, map[string][]string, *string) uint32, verb string) Output[*cairn.PropertyMap] {
	out, resolve := pending[*cairn.PropertyMap]()
	keys := sortedArgKeys(args)
	items := make([]Output[cairn.Value], 0, len(keys)+1)
	for _, k := range keys {
		items = append(items, ToValue(args[k]))
	}
	if provider != nil {
		items = append(items, ToValue(provider.Reference()))
	}
	whenAll(items, func(rs []resolved[cairn.Value]) {
		deps := dependencies(rs)
		if e, ok := firstFailure(rs); ok {
			resolve(resolved[*cairn.PropertyMap]{state: failed, err: e, deps: deps})
			return
		}
		for _, r := range rs {
			if r.state == unknown {
				resolve(resolved[*cairn.PropertyMap]{state: unknown, deps: deps})
				return
			}
		}
		var ref *string
		if provider != nil {
			s, _ := rs[len(rs)-1].value.AsString()
			ref = &s
			rs = rs[:len(rs)-1]
		}
		secret := false
		m := cairn.NewPropertyMap()
		argDeps := map[string][]string{}
		for i, k := range keys {
			secret = secret || rs[i].secret
			v, _ := propertyValue(rs[i])
			m.Set(k, v)
			if len(rs[i].deps) > 0 {
				argDeps[k] = rs[i].deps
			}
		}
		handle := send(m, argDeps, ref)
		onComplete(handle, func(o outcome) {
			if o.err != "" {
				message := fmt.Sprintf("%s %s: %s", verb, token, o.err)
				recordError(message)
				resolve(resolved[*cairn.PropertyMap]{state: failed, err: message, deps: deps})
				return
			}
			outputs := o.outputs
			if outputs == nil {
				outputs = cairn.NewPropertyMap()
			}
			resolve(resolved[*cairn.PropertyMap]{value: outputs, secret: secret, deps: deps})
		})
	})
	return out
}

func sortedArgKeys(args Args) []string { return sortedKeys(args) }

// registerRequest is a registration ready for the host.
type registerRequest struct {
	typ, name            string
	custom, remote       bool
	inputs               *cairn.PropertyMap
	propertyDependencies []propertyDeps
	parent               *string
	dependsOn            []string
	deletedWith          *string
	provider             *string
	providers            [][2]string
	options              *ResourceOptions
}

type propertyDeps struct {
	property string
	urns     []string
}

// readRequest is a read ready for the host.
type readRequest struct {
	typ, name, id string
	parent        *string
	properties    *cairn.PropertyMap
	dependencies  []string
	provider      *string
	version       *string
	secrets       []string
}

func declare(k kind, t, name string, args Args, readID *Output[cairn.Value], opts []ResourceOption) *Resource {
	options := &ResourceOptions{}
	for _, opt := range opts {
		opt(options)
	}
	if args == nil {
		args = Args{}
	}
	// Transformations: the resource's own, then its ancestors' (nearest first), then the
	// stack's. Children inherit the first two.
	inherited := slices.Clone(options.Transformations)
	if options.Parent != nil {
		inherited = append(inherited, options.Parent.transformations...)
	}
	ta := &TransformArgs{Type: t, Name: name, Args: args, Options: options}
	for _, f := range append(slices.Clone(inherited), rt.stackTransformations...) {
		f(ta)
	}
	t, name, args, options = ta.Type, ta.Name, ta.Args, ta.Options

	urn, resolveURN := pending[string]()
	id, resolveID := pending[string]()
	outputs, resolveOutputs := pending[*cairn.PropertyMap]()
	fail := func(message string, deps []string) {
		resolveURN(resolved[string]{state: failed, err: message, deps: deps})
		resolveID(resolved[string]{state: failed, err: message, deps: deps})
		resolveOutputs(resolved[*cairn.PropertyMap]{state: failed, err: message, deps: deps})
	}

	// Providers children inherit: the parent's, overridden by this resource's own.
	var providers []packageProvider
	if options.Parent != nil {
		providers = slices.Clone(options.Parent.providers)
	}
	for _, p := range options.Providers {
		providers = slices.DeleteFunc(providers, func(q packageProvider) bool { return q.pkg == p.pkg })
		providers = append(providers, packageProvider{p.pkg, p.Reference()})
	}
	pkg := ""
	if !strings.HasPrefix(t, "pulumi:providers:") {
		pkg, _, _ = strings.Cut(t, ":")
	}
	// The provider: explicit, else the one the parent passes down for this package.
	var provider *Output[string]
	if options.Provider != nil {
		ref := options.Provider.Reference()
		provider = &ref
	} else {
		for _, p := range providers {
			if p.pkg == pkg {
				ref := p.reference
				provider = &ref
			}
		}
	}
	resource := &Resource{
		URN: urn, ID: id, outputs: outputs, typ: t, name: name,
		transformations: inherited, providers: providers,
	}

	// Everything the request needs, in a fixed order after the inputs.
	keys := sortedArgKeys(args)
	items := make([]Output[cairn.Value], 0, len(keys)+8)
	for _, key := range keys {
		items = append(items, ToValue(args[key]))
	}
	at := func(o Output[string]) int {
		items = append(items, ToValue(o))
		return len(items) - 1
	}
	parentAt, deletedWithAt, providerAt, readAt := -1, -1, -1, -1
	if options.Parent != nil {
		parentAt = at(options.Parent.URN)
	}
	if options.DeletedWith != nil {
		deletedWithAt = at(options.DeletedWith.URN)
	}
	if provider != nil {
		providerAt = at(*provider)
	}
	dependsFrom := len(items)
	for _, d := range options.DependsOn {
		at(d.URN)
	}
	providersFrom := len(items)
	for _, p := range providers {
		at(p.reference)
	}
	if readID != nil {
		items = append(items, *readID)
		readAt = len(items) - 1
	}
	dryRun := rt.deployment.dryRun
	what := t + " " + name

	whenAll(items, func(rs []resolved[cairn.Value]) {
		if e, ok := firstFailure(rs); ok {
			fail(e, nil)
			return
		}
		str := func(i int) *string {
			if i < 0 {
				return nil
			}
			s, ok := rs[i].value.AsString()
			if rs[i].state != known || !ok {
				return nil
			}
			return &s
		}
		inputs := cairn.NewPropertyMap()
		var deps []propertyDeps
		for i, key := range keys {
			if len(rs[i].deps) > 0 {
				deps = append(deps, propertyDeps{key, rs[i].deps})
			}
			if v, err := propertyValue(rs[i]); err == nil {
				inputs.Set(key, v)
			}
		}
		var dependsOn []string
		for i := dependsFrom; i < providersFrom; i++ {
			if s := str(i); s != nil && !slices.Contains(dependsOn, *s) {
				dependsOn = append(dependsOn, *s)
			}
		}
		var refs [][2]string
		for i, p := range providers {
			if s := str(providersFrom + i); s != nil {
				refs = append(refs, [2]string{p.pkg, *s})
			}
		}
		finish := func(o outcome) {
			switch {
			case o.err != "":
				message := o.err
				if !strings.Contains(message, what) {
					message = what + ": " + message
				}
				recordError(message)
				fail(message, nil)
			case !o.isState:
				fail(what+": the host answered with function outputs", nil)
			default:
				deps := []string{o.urn}
				idR := resolved[string]{deps: deps}
				switch {
				case o.id != nil && *o.id != "":
					idR.value = *o.id
				case dryRun:
					idR.state = unknown
				}
				resolveID(idR)
				outputs := o.outputs
				if outputs == nil {
					outputs = cairn.NewPropertyMap()
				}
				resolveOutputs(resolved[*cairn.PropertyMap]{value: outputs, deps: deps})
				resolveURN(resolved[string]{value: o.urn, deps: deps})
			}
		}
		if k == kindRead {
			readID := str(readAt)
			if readID == nil {
				finish(outcome{err: "the ID to read is not known"})
				return
			}
			handle := rt.host.read(&readRequest{
				typ: t, name: name, id: *readID, parent: str(parentAt), properties: inputs,
				dependencies: dependsOn, provider: str(providerAt), version: options.Version,
				secrets: options.AdditionalSecretOutputs,
			})
			onComplete(handle, finish)
			return
		}
		handle := rt.host.register(&registerRequest{
			typ: t, name: name, custom: k == kindCustom, remote: k == kindRemote,
			inputs: inputs, propertyDependencies: deps, parent: str(parentAt),
			dependsOn: dependsOn, deletedWith: str(deletedWithAt), provider: str(providerAt),
			providers: refs, options: options,
		})
		onComplete(handle, finish)
	})
	return resource
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
