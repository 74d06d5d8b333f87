//go:build !wasip1

package provider

import cairn "cairn.invalid/sdk"

func registerResource(RegisterResourceRequest) (Registered, error) { return Registered{}, ErrNoEngine }

func registerResourceOutputs(string, *cairn.PropertyMap) error { return ErrNoEngine }
