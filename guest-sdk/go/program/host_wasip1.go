//go:build wasip1

package program

// The program world's imports (`monitor`, `context`) and its `run` export, in the canonical
// ABI (see the provider package's glue for the conventions). Every import whose results the
// host writes into the guest runs through abi.HostCall.

import (
	"runtime"

	cairn "cairn.invalid/sdk"
	"cairn.invalid/sdk/internal/abi"
)

//go:wasmimport cairn:deploy/monitor@0.3.0 register-resource
func wasmRegister(request uint32) uint32

//go:wasmimport cairn:deploy/monitor@0.3.0 read-resource
func wasmRead(request uint32) uint32

//go:wasmimport cairn:deploy/monitor@0.3.0 invoke
func wasmInvoke(token, tokenLen, a0, a1, a2, a3, a4, a5, hasProvider, provider, providerLen, hasVersion, version, versionLen uint32) uint32

//go:wasmimport cairn:deploy/monitor@0.3.0 call
func wasmCall(token, tokenLen, a0, a1, a2, a3, a4, a5, deps, depsLen, hasProvider, provider, providerLen, hasVersion, version, versionLen uint32) uint32

//go:wasmimport cairn:deploy/monitor@0.3.0 wait
func wasmWait(ret uint32)

//go:wasmimport cairn:deploy/monitor@0.3.0 register-resource-outputs
func wasmRegisterOutputs(urn, urnLen, o0, o1, o2, o3, o4, o5, ret uint32)

//go:wasmimport cairn:deploy/context@0.3.0 deployment
func wasmDeployment(ret uint32)

//go:wasmimport cairn:deploy/context@0.3.0 config
func wasmConfig(ret uint32)

// `run: func() -> result<_, string>`: the case at 0, the message at 4.
//
//go:wasmexport run
func exportRun() uint32 {
	abi.BeginCall()
	err := run(wasiHost{})
	ret := abi.Area(12)
	if err == nil {
		abi.SetU8(ret, 0)
	} else {
		abi.SetU8(ret, 1)
		abi.SetString(ret+4, err.Error())
	}
	abi.EndCall()
	return uint32(ret)
}

type wasiHost struct{}

// deployment-info: project 0, stack 8, organization 16, dry-run 24, root-urn 28.
func (wasiHost) deployment() (d deployment) {
	abi.HostCall(func() {
		ret := abi.Area(36)
		wasmDeployment(uint32(ret))
		d = deployment{
			project:      abi.String(ret),
			stack:        abi.String(ret + 8),
			organization: abi.String(ret + 16),
			dryRun:       abi.Bool(ret + 24),
			rootURN:      abi.String(ret + 28),
		}
	})
	return d
}

// list<tuple<string, value>>: the key at 0, the value at 8 (32 bytes each). A value the
// engine sent malformed is left out.
func (wasiHost) config() (entries []configEntry) {
	abi.HostCall(func() {
		ret := abi.Area(8)
		wasmConfig(uint32(ret))
		abi.List(ret, 32, func(at uintptr) {
			if v, err := cairn.Decode(abi.Table(at + 8)); err == nil {
				entries = append(entries, configEntry{key: abi.String(at), value: v})
			}
		})
	})
	return entries
}

// register-resource-request: resource-type 0, name 8, custom 16, remote 17, inputs 20,
// property-dependencies 44, options 56 (resource-options, 8-aligned):
// parent 0, depends-on 12, protect 20, retain-on-delete 21, deleted-with 24, provider 36,
// providers 48, aliases 56, ignore-changes 64, replace-on-changes 72,
// delete-before-replace 80 (option<bool>), additional-secret-outputs 84,
// custom-timeouts 96 (option, its record at 104), import-id 128, version 140.
func (wasiHost) register(r *registerRequest) (handle uint32) {
	inputs := cairn.EncodeMap(r.inputs)
	abi.HostCall(func() {
		p := abi.Alloc(208, 8)
		abi.SetString(p, r.typ)
		abi.SetString(p+8, r.name)
		abi.SetBool(p+16, r.custom)
		abi.SetBool(p+17, r.remote)
		abi.SetTable(p+20, &inputs)
		setPropertyDeps(p+44, r.propertyDependencies)
		o, opts := p+56, r.options
		abi.SetOptString(o, r.parent)
		abi.SetStrings(o+12, r.dependsOn)
		abi.SetBool(o+20, opts.Protect)
		abi.SetBool(o+21, opts.RetainOnDelete)
		abi.SetOptString(o+24, r.deletedWith)
		abi.SetOptString(o+36, r.provider)
		abi.SetList(o+48, len(r.providers), 16, 4, func(i int, at uintptr) {
			abi.SetString(at, r.providers[i][0])
			abi.SetString(at+8, r.providers[i][1])
		})
		abi.SetList(o+56, len(opts.Aliases), 76, 4, func(i int, at uintptr) { setAlias(at, &opts.Aliases[i]) })
		abi.SetStrings(o+64, opts.IgnoreChanges)
		abi.SetStrings(o+72, opts.ReplaceOnChanges)
		if opts.DeleteBeforeReplace == nil {
			abi.SetU8(o+80, 0)
		} else {
			abi.SetU8(o+80, 1)
			abi.SetBool(o+81, *opts.DeleteBeforeReplace)
		}
		abi.SetStrings(o+84, opts.AdditionalSecretOutputs)
		if t := opts.CustomTimeouts; t == nil {
			abi.SetU8(o+96, 0)
		} else {
			abi.SetU8(o+96, 1)
			abi.SetF64(o+104, t.Create)
			abi.SetF64(o+112, t.Update)
			abi.SetF64(o+120, t.Delete)
		}
		abi.SetOptString(o+128, opts.Import)
		abi.SetOptString(o+140, opts.Version)
		handle = wasmRegister(uint32(p))
		runtime.KeepAlive(&inputs)
		runtime.KeepAlive(r)
	})
	return handle
}

// alias: urn 0, name 12, resource-type 24, parent-urn 36, no-parent 48, stack 52, project 64.
func setAlias(p uintptr, a *Alias) {
	abi.SetOptString(p, a.URN)
	abi.SetOptString(p+12, a.Name)
	abi.SetOptString(p+24, a.Type)
	abi.SetOptString(p+36, a.ParentURN)
	abi.SetBool(p+48, a.NoParent)
	abi.SetOptString(p+52, a.Stack)
	abi.SetOptString(p+64, a.Project)
}

// list<property-dependencies>: property 0, urns 8.
func setPropertyDeps(p uintptr, deps []propertyDeps) {
	abi.SetList(p, len(deps), 16, 4, func(i int, at uintptr) {
		abi.SetString(at, deps[i].property)
		abi.SetStrings(at+8, deps[i].urns)
	})
}

// read-resource-request: resource-type 0, name 8, id 16, parent 24, properties 36,
// dependencies 60, provider 68, version 80, additional-secret-outputs 92.
func (wasiHost) read(r *readRequest) (handle uint32) {
	properties := cairn.EncodeMap(r.properties)
	abi.HostCall(func() {
		p := abi.Alloc(100, 4)
		abi.SetString(p, r.typ)
		abi.SetString(p+8, r.name)
		abi.SetString(p+16, r.id)
		abi.SetOptString(p+24, r.parent)
		abi.SetTable(p+36, &properties)
		abi.SetStrings(p+60, r.dependencies)
		abi.SetOptString(p+68, r.provider)
		abi.SetOptString(p+80, r.version)
		abi.SetStrings(p+92, r.secrets)
		handle = wasmRead(uint32(p))
		runtime.KeepAlive(&properties)
		runtime.KeepAlive(r)
	})
	return handle
}

// flat is a value's six flat words, written to the arena first.
func flat(t *cairn.Table) [6]uint32 {
	p := abi.Alloc(24, 4)
	abi.SetTable(p, t)
	var w [6]uint32
	for i := range w {
		w[i] = abi.U32(p + uintptr(4*i))
	}
	return w
}

// optFlat is an option<string>'s three flat words.
func optFlat(s *string) (uint32, uint32, uint32) {
	if s == nil {
		return 0, 0, 0
	}
	return 1, uint32(abi.Addr(*s)), uint32(len(*s))
}

func (wasiHost) invoke(token string, args *cairn.PropertyMap, provider, version *string) (handle uint32) {
	t := cairn.EncodeMap(args)
	abi.HostCall(func() {
		a := flat(&t)
		hp, p, pl := optFlat(provider)
		hv, v, vl := optFlat(version)
		handle = wasmInvoke(uint32(abi.Addr(token)), uint32(len(token)), a[0], a[1], a[2], a[3], a[4], a[5], hp, p, pl, hv, v, vl)
		runtime.KeepAlive(&t)
		runtime.KeepAlive(token)
		runtime.KeepAlive(provider)
		runtime.KeepAlive(version)
	})
	return handle
}

func (wasiHost) call(token string, args *cairn.PropertyMap, deps map[string][]string, provider, version *string) (handle uint32) {
	t := cairn.EncodeMap(args)
	var list []propertyDeps
	for _, k := range sortedKeys(deps) {
		list = append(list, propertyDeps{k, deps[k]})
	}
	abi.HostCall(func() {
		a := flat(&t)
		d := abi.Alloc(8, 4)
		setPropertyDeps(d, list)
		hp, p, pl := optFlat(provider)
		hv, v, vl := optFlat(version)
		handle = wasmCall(uint32(abi.Addr(token)), uint32(len(token)), a[0], a[1], a[2], a[3], a[4], a[5],
			abi.U32(d), abi.U32(d+4), hp, p, pl, hv, v, vl)
		runtime.KeepAlive(&t)
		runtime.KeepAlive(list)
		runtime.KeepAlive(token)
	})
	return handle
}

// list<completion>: handle 0, outcome 4 (the case at 4, its payload at 8; 60 bytes each).
// resource-state: urn 0, id 8 (option), outputs 20, property-dependencies 44;
// call-outputs: outputs 0, property-dependencies 24; failed: the message.
func (wasiHost) wait() (done []completion) {
	abi.HostCall(func() {
		ret := abi.Area(8)
		wasmWait(uint32(ret))
		abi.List(ret, 60, func(at uintptr) {
			c := completion{handle: abi.U32(at)}
			q := at + 8
			var err error
			switch abi.U8(at + 4) {
			case 0:
				c.outcome = outcome{isState: true, urn: abi.String(q), id: abi.OptString(q + 8)}
				c.outcome.outputs, err = cairn.DecodeMap(abi.Table(q + 20))
			case 1:
				c.outcome.outputs, err = cairn.DecodeMap(abi.Table(q))
			default:
				c.outcome.err = abi.String(q)
			}
			if err != nil {
				c.outcome = outcome{err: "the host sent bad outputs: " + err.Error()}
			}
			done = append(done, c)
		})
	})
	return done
}

// result<_, string>: the case at 0, the message at 4.
func (wasiHost) registerOutputs(urn string, outputs *cairn.PropertyMap) (err error) {
	t := cairn.EncodeMap(outputs)
	abi.HostCall(func() {
		a := flat(&t)
		ret := abi.Area(12)
		wasmRegisterOutputs(uint32(abi.Addr(urn)), uint32(len(urn)), a[0], a[1], a[2], a[3], a[4], a[5], uint32(ret))
		runtime.KeepAlive(&t)
		runtime.KeepAlive(urn)
		if abi.U8(ret) != 0 {
			err = errorString(abi.String(ret + 4))
		}
	})
	return err
}

type errorString string

func (e errorString) Error() string { return string(e) }
