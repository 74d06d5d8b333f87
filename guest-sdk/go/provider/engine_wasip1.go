//go:build wasip1

package provider

import (
	"runtime"

	cairn "cairn.invalid/sdk"
	"cairn.invalid/sdk/internal/abi"
)

//go:wasmimport cairn:deploy/engine@0.3.0 register-resource
func wasmRegisterResource(request uintptr, ret uintptr)

//go:wasmimport cairn:deploy/engine@0.3.0 register-resource-outputs
func wasmRegisterResourceOutputs(urn uintptr, urnLen uint32, n0 uintptr, n1 uint32, s0 uintptr, s1 uint32,
	e0 uintptr, e1 uint32, ret uintptr)

// register-resource-request: resource-type 0, name 8, custom 16, parent 20 (option),
// inputs 32, property-dependencies 56, dependencies 64, provider 72 (option), protect 84.
// result<register-resource-response, string>: the case at 0, the payload at 4;
// register-resource-response: urn 0, id 8 (option), outputs 20.
func registerResource(r RegisterResourceRequest) (Registered, error) {
	var out Registered
	var err error
	// Encoded before the collector goes off: the table is the request's largest allocation.
	inputs := cairn.EncodeMap(r.Inputs)
	abi.HostCall(func() {
		p := abi.Alloc(88, 4)
		abi.SetString(p, r.Type)
		abi.SetString(p+8, r.Name)
		abi.SetBool(p+16, r.Custom)
		abi.SetOptString(p+20, r.Parent)
		abi.SetTable(p+32, &inputs)
		setDependencies(p+56, r.PropertyDependencies)
		abi.SetStrings(p+64, r.Dependencies)
		abi.SetOptString(p+72, r.Provider)
		abi.SetBool(p+84, r.Protect)
		ret := abi.Area(48)
		wasmRegisterResource(p, ret)
		runtime.KeepAlive(&inputs)
		runtime.KeepAlive(&r)
		// Everything is copied out of the arena here: it is given back when f returns.
		if abi.U8(ret) != 0 {
			err = &EngineError{Op: registering(&r), Reason: abi.String(ret + 4)}
			return
		}
		out, err = registered(&r, abi.String(ret+4), abi.OptString(ret+12), abi.Table(ret+24))
	})
	return out, err
}

// result<_, string>: the case at 0, the message at 4.
func registerResourceOutputs(urn string, outputs *cairn.PropertyMap) error {
	var err error
	t := cairn.EncodeMap(outputs)
	abi.HostCall(func() {
		ret := abi.Area(12)
		p := abi.Area(24)
		abi.SetTable(p, &t)
		wasmRegisterResourceOutputs(abi.Addr(urn), uint32(len(urn)), uintptr(abi.U32(p)), abi.U32(p+4),
			uintptr(abi.U32(p+8)), abi.U32(p+12), uintptr(abi.U32(p+16)), abi.U32(p+20), ret)
		runtime.KeepAlive(&t)
		runtime.KeepAlive(urn)
		if abi.U8(ret) != 0 {
			err = &EngineError{Op: registeringOutputs(urn), Reason: abi.String(ret + 4)}
		}
	})
	return err
}
