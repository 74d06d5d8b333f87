//go:build wasip1

package provider

// The `provider` interface of wit/provider.wit as core wasm exports, in the canonical ABI:
// each export reads its request (flat parameters, or a pointer to the record when it takes
// more than 16 words), calls the provider, and writes result<T, provider-error> to a return
// area in the arena. Offsets are the records' canonical layouts (32-bit addresses; records
// aligned to their widest field; an option or variant's payload after its discriminant at the
// payload's alignment). Every export starts with abi.BeginCall and ends with abi.EndCall.

import (
	cairn "cairn.invalid/sdk"
	"cairn.invalid/sdk/internal/abi"
)

// Every provider export returns result<T, provider-error>: provider-error holds an f64, so
// the payload is 8-aligned, at 8; the largest payload is provider-error's 80 bytes.
const (
	resultSize = 88
	payload    = 8
)

func props(t cairn.Table) cairn.Properties { return cairn.FromTable(t) }

//go:wasmexport cairn:deploy/provider@0.3.0#get-schema
func exportGetSchema() uint32 {
	abi.BeginCall()
	schema, err := getSchema()
	ret := abi.Area(resultSize)
	if err == nil {
		abi.SetU8(ret, 0)
		abi.SetString(ret+payload, schema)
	} else {
		setError(ret, err)
	}
	abi.EndCall()
	return uint32(ret)
}

//go:wasmexport cairn:deploy/provider@0.3.0#check-config
func exportCheckConfig(urn, urnLen, o0, o1, o2, o3, o4, o5, n0, n1, n2, n3, n4, n5, seed, seedLen uint32) uint32 {
	abi.BeginCall()
	r := checkRequest(urn, urnLen, o0, o1, o2, o3, o4, o5, n0, n1, n2, n3, n4, n5, seed, seedLen)
	result, err := checkConfig(r)
	return checkResult(result, err)
}

//go:wasmexport cairn:deploy/provider@0.3.0#check
func exportCheck(urn, urnLen, o0, o1, o2, o3, o4, o5, n0, n1, n2, n3, n4, n5, seed, seedLen uint32) uint32 {
	abi.BeginCall()
	r := checkRequest(urn, urnLen, o0, o1, o2, o3, o4, o5, n0, n1, n2, n3, n4, n5, seed, seedLen)
	result, err := check(r)
	return checkResult(result, err)
}

func checkRequest(urn, urnLen, o0, o1, o2, o3, o4, o5, n0, n1, n2, n3, n4, n5, seed, seedLen uint32) CheckRequest {
	return CheckRequest{
		URN:        abi.StringOf(urn, urnLen),
		OldInputs:  props(abi.TableOf(o0, o1, o2, o3, o4, o5)),
		Inputs:     props(abi.TableOf(n0, n1, n2, n3, n4, n5)),
		RandomSeed: abi.BytesOf(seed, seedLen),
	}
}

// check-result: inputs (value) at 0, failures at 24.
func checkResult(result CheckResult, err error) uint32 {
	ret := abi.Area(resultSize)
	if err != nil {
		setError(ret, err)
	} else {
		abi.SetU8(ret, 0)
		p := ret + payload
		setProperties(p, result.Inputs)
		setFailures(p+24, result.Failures)
	}
	abi.EndCall()
	return uint32(ret)
}

//go:wasmexport cairn:deploy/provider@0.3.0#diff-config
func exportDiffConfig(p uint32) uint32 {
	abi.BeginCall()
	result, err := diffConfig(diffRequest(uintptr(p)))
	return diffResult(result, err)
}

//go:wasmexport cairn:deploy/provider@0.3.0#diff
func exportDiff(p uint32) uint32 {
	abi.BeginCall()
	result, err := diff(diffRequest(uintptr(p)))
	return diffResult(result, err)
}

// diff-request: urn 0, id 8, old-inputs 16, old-outputs 40, news 64, ignore-changes 88.
func diffRequest(p uintptr) DiffRequest {
	return DiffRequest{
		URN:           abi.String(p),
		ID:            abi.String(p + 8),
		OldInputs:     props(abi.Table(p + 16)),
		OldOutputs:    props(abi.Table(p + 40)),
		Inputs:        props(abi.Table(p + 64)),
		IgnoreChanges: abi.Strings(p + 88),
	}
}

// diff-result: changes 0, replace-keys 4, stable-keys 12, changed-keys 20,
// detailed-diff option<list<property-diff>> 28 (list at 32), delete-before-replace 40.
// property-diff: path 0, kind 8, input-diff 9 (12 bytes).
func diffResult(result DiffResult, err error) uint32 {
	ret := abi.Area(resultSize)
	if err != nil {
		setError(ret, err)
	} else {
		abi.SetU8(ret, 0)
		p := ret + payload
		abi.SetU8(p, uint8(result.Changes))
		abi.SetStrings(p+4, result.ReplaceKeys)
		abi.SetStrings(p+12, result.StableKeys)
		abi.SetStrings(p+20, result.ChangedKeys)
		if result.DetailedDiff == nil {
			abi.SetU8(p+28, 0)
		} else {
			abi.SetU8(p+28, 1)
			d := result.DetailedDiff
			abi.SetList(p+32, len(d), 12, 4, func(i int, at uintptr) {
				abi.SetString(at, d[i].Path)
				abi.SetU8(at+8, uint8(d[i].Kind))
				abi.SetBool(at+9, d[i].InputDiff)
			})
		}
		abi.SetBool(p+40, result.DeleteBeforeReplace)
	}
	abi.EndCall()
	return uint32(ret)
}

//go:wasmexport cairn:deploy/provider@0.3.0#configure
func exportConfigure(i0, i1, i2, i3, i4, i5, preview uint32) uint32 {
	abi.BeginCall()
	var err error
	inputs, decodeErr := cairn.DecodeMap(abi.TableOf(i0, i1, i2, i3, i4, i5))
	if decodeErr != nil {
		err = decodeErr
	} else {
		err = configure(inputs, preview != 0)
	}
	return unitResult(err)
}

// unitResult writes result<_, provider-error>.
func unitResult(err error) uint32 {
	ret := abi.Area(resultSize)
	if err != nil {
		setError(ret, err)
	} else {
		abi.SetU8(ret, 0)
	}
	abi.EndCall()
	return uint32(ret)
}

//go:wasmexport cairn:deploy/provider@0.3.0#create
func exportCreate(urn, urnLen, i0, i1, i2, i3, i4, i5 uint32, timeout float64, preview uint32) uint32 {
	abi.BeginCall()
	r := CreateRequest{
		URN:     abi.StringOf(urn, urnLen),
		Inputs:  props(abi.TableOf(i0, i1, i2, i3, i4, i5)),
		Timeout: timeout,
	}
	result, err := create(r, preview != 0)
	// create-result: id 0, outputs 8.
	ret := abi.Area(resultSize)
	if err != nil {
		setError(ret, err)
	} else {
		abi.SetU8(ret, 0)
		abi.SetString(ret+payload, result.ID)
		setProperties(ret+payload+8, result.Outputs)
	}
	abi.EndCall()
	return uint32(ret)
}

//go:wasmexport cairn:deploy/provider@0.3.0#read
func exportRead(urn, urnLen, id, idLen, i0, i1, i2, i3, i4, i5, s0, s1, s2, s3, s4, s5 uint32) uint32 {
	abi.BeginCall()
	r := ReadRequest{
		URN:        abi.StringOf(urn, urnLen),
		ID:         abi.StringOf(id, idLen),
		OldInputs:  props(abi.TableOf(i0, i1, i2, i3, i4, i5)),
		OldOutputs: props(abi.TableOf(s0, s1, s2, s3, s4, s5)),
	}
	result, err := read(r)
	// read-result: id 0, inputs 8, outputs 32.
	ret := abi.Area(resultSize)
	if err != nil {
		setError(ret, err)
	} else {
		abi.SetU8(ret, 0)
		p := ret + payload
		abi.SetString(p, result.ID)
		setProperties(p+8, result.Inputs)
		setProperties(p+32, result.Outputs)
	}
	abi.EndCall()
	return uint32(ret)
}

// update-request: urn 0, id 8, old-inputs 16, old-outputs 40, news 64, timeout 88,
// ignore-changes 96, preview 104.
//
//go:wasmexport cairn:deploy/provider@0.3.0#update
func exportUpdate(at uint32) uint32 {
	abi.BeginCall()
	p := uintptr(at)
	r := UpdateRequest{
		URN:           abi.String(p),
		ID:            abi.String(p + 8),
		OldInputs:     props(abi.Table(p + 16)),
		OldOutputs:    props(abi.Table(p + 40)),
		Inputs:        props(abi.Table(p + 64)),
		Timeout:       abi.F64(p + 88),
		IgnoreChanges: abi.Strings(p + 96),
	}
	result, err := update(r, abi.Bool(p+104))
	ret := abi.Area(resultSize)
	if err != nil {
		setError(ret, err)
	} else {
		abi.SetU8(ret, 0)
		setProperties(ret+payload, result.Outputs)
	}
	abi.EndCall()
	return uint32(ret)
}

// delete-request: urn 0, id 8, inputs 16, outputs 40, timeout 64.
//
//go:wasmexport cairn:deploy/provider@0.3.0#delete
func exportDelete(at uint32) uint32 {
	abi.BeginCall()
	p := uintptr(at)
	r := DeleteRequest{
		URN:        abi.String(p),
		ID:         abi.String(p + 8),
		OldInputs:  props(abi.Table(p + 16)),
		OldOutputs: props(abi.Table(p + 40)),
		Timeout:    abi.F64(p + 64),
	}
	return unitResult(del(r))
}

// construct-request: project 0, stack 8, resource-type 16, name 24, parent 32 (option),
// inputs 44, input-dependencies 68, dependencies 76, protect 84, providers 88 (list of
// string pairs), dry-run 96.
//
//go:wasmexport cairn:deploy/provider@0.3.0#construct
func exportConstruct(at uint32) uint32 {
	abi.BeginCall()
	p := uintptr(at)
	r := ConstructRequest{
		Project:           abi.String(p),
		Stack:             abi.String(p + 8),
		Type:              abi.String(p + 16),
		Name:              abi.String(p + 24),
		Parent:            abi.OptString(p + 32),
		Inputs:            props(abi.Table(p + 44)),
		InputDependencies: dependencies(p + 68),
		Dependencies:      abi.Strings(p + 76),
		Protect:           abi.Bool(p + 84),
		Providers:         map[string]string{},
		DryRun:            abi.Bool(p + 96),
	}
	abi.List(p+88, 16, func(at uintptr) { r.Providers[abi.String(at)] = abi.String(at + 8) })
	result, err := construct(r)
	// construct-result: urn 0 (option), state 12, state-dependencies 36.
	ret := abi.Area(resultSize)
	if err != nil {
		setError(ret, err)
	} else {
		abi.SetU8(ret, 0)
		q := ret + payload
		abi.SetOptString(q, result.URN)
		setProperties(q+12, result.State)
		setDependencies(q+36, result.StateDependencies)
	}
	abi.EndCall()
	return uint32(ret)
}

//go:wasmexport cairn:deploy/provider@0.3.0#invoke
func exportInvoke(token, tokenLen, a0, a1, a2, a3, a4, a5 uint32) uint32 {
	abi.BeginCall()
	r := InvokeRequest{Token: abi.StringOf(token, tokenLen), Args: props(abi.TableOf(a0, a1, a2, a3, a4, a5))}
	result, err := invoke(r)
	// invoke-result: outputs 0, failures 24.
	ret := abi.Area(resultSize)
	if err != nil {
		setError(ret, err)
	} else {
		abi.SetU8(ret, 0)
		setProperties(ret+payload, result.Outputs)
		setFailures(ret+payload+24, result.Failures)
	}
	abi.EndCall()
	return uint32(ret)
}

//go:wasmexport cairn:deploy/provider@0.3.0#call
func exportCall(token, tokenLen, a0, a1, a2, a3, a4, a5, deps, depsLen, project, projectLen, stack, stackLen, dryRun uint32) uint32 {
	abi.BeginCall()
	r := CallRequest{
		Token:           abi.StringOf(token, tokenLen),
		Args:            props(abi.TableOf(a0, a1, a2, a3, a4, a5)),
		ArgDependencies: dependenciesOf(deps, depsLen),
		Project:         abi.StringOf(project, projectLen),
		Stack:           abi.StringOf(stack, stackLen),
		DryRun:          dryRun != 0,
	}
	result, err := call(r)
	// call-result: outputs 0, output-dependencies 24, failures 32.
	ret := abi.Area(resultSize)
	if err != nil {
		setError(ret, err)
	} else {
		abi.SetU8(ret, 0)
		q := ret + payload
		setProperties(q, result.Outputs)
		setDependencies(q+24, result.OutputDependencies)
		setFailures(q+32, result.Failures)
	}
	abi.EndCall()
	return uint32(ret)
}

//go:wasmexport cairn:deploy/provider@0.3.0#cancel
func exportCancel() {
	abi.BeginCall()
	cancel()
	abi.EndCall()
}

func setProperties(p uintptr, props cairn.Properties) {
	t := props.Table()
	abi.SetTable(p, &t)
}

// check-failure: property 0, reason 8 (16 bytes).
func setFailures(p uintptr, failures []cairn.CheckFailure) {
	abi.SetList(p, len(failures), 16, 4, func(i int, at uintptr) {
		abi.SetString(at, failures[i].Property)
		abi.SetString(at+8, failures[i].Reason)
	})
}

// list<property-dependencies>: property 0, urns 8 (16 bytes each). A property listed twice
// gets the union of its URNs.
func dependencies(p uintptr) Dependencies {
	return dependenciesOf(abi.U32(p), abi.U32(p+4))
}

func dependenciesOf(base, n uint32) Dependencies {
	deps := Dependencies{}
	for i := uintptr(0); i < uintptr(n); i++ {
		at := uintptr(base) + i*16
		property := abi.String(at)
		deps[property] = append(deps[property], abi.Strings(at+8)...)
	}
	return deps
}

func setDependencies(p uintptr, deps Dependencies) {
	keys := sortedKeys(deps)
	abi.SetList(p, len(keys), 16, 4, func(i int, at uintptr) {
		abi.SetString(at, keys[i])
		abi.SetStrings(at+8, deps[keys[i]])
	})
}

// setError writes the error case of a result: provider-error at 8, its payload at 16.
// failure: message 0, partial 8 (option<partial-state>: id 12, inputs 20, outputs 44).
func setError(ret uintptr, err error) {
	abi.SetU8(ret, 1)
	e := classify(err)
	abi.SetU8(ret+8, e.kind)
	p := ret + 16
	switch e.kind {
	case 0:
		abi.SetString(p, e.message)
		if e.partial == nil {
			abi.SetU8(p+8, 0)
			return
		}
		abi.SetU8(p+8, 1)
		abi.SetString(p+12, e.partial.ID)
		inputs, outputs := cairn.EncodeMap(e.partial.Inputs), cairn.EncodeMap(e.partial.Outputs)
		abi.SetTable(p+20, &inputs)
		abi.SetTable(p+44, &outputs)
	case 1:
		abi.SetString(p, e.message)
	case 3:
		abi.SetF64(p, e.seconds)
	}
}
