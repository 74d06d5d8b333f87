//go:build !wasip1

package provider

import cairn "cairn.invalid/sdk"

// Natively (unit tests) there is no engine: every call fails with ErrNoEngine.

func registerResource(r RegisterResourceRequest) (Registered, error) {
	return Registered{}, &EngineError{Op: registering(&r), Reason: ErrNoEngine.Error(), cause: ErrNoEngine}
}

func registerResourceOutputs(urn string, _ *cairn.PropertyMap) error {
	return &EngineError{Op: registeringOutputs(urn), Reason: ErrNoEngine.Error(), cause: ErrNoEngine}
}
