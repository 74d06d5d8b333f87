package provider

import (
	"errors"
	"slices"

	cairn "cairn.invalid/sdk"
)

// RegisterResourceRequest is a resource Construct registers with the engine: the component
// itself, or one of its children.
type RegisterResourceRequest struct {
	Type string
	Name string
	// Custom: a custom resource (managed by a provider), not a component.
	Custom               bool
	Parent               *string
	Inputs               *cairn.PropertyMap
	PropertyDependencies Dependencies
	Dependencies         []string
	// Provider is a provider reference (`<urn>::<id>`).
	Provider *string
	Protect  bool
}

// Registered is a registered resource, after its steps have run.
type Registered struct {
	URN     string
	ID      *string
	Outputs *cairn.PropertyMap
}

// ErrNoEngine is what the engine calls return outside a component (native unit tests).
var ErrNoEngine = errors.New("the engine is only reachable from inside a component")

// RegisterResource registers a resource with the engine's resource monitor from Construct (the
// component, then its children); it returns when the resource's steps have run.
func RegisterResource(r RegisterResourceRequest) (Registered, error) { return registerResource(r) }

// RegisterResourceOutputs sets a component's outputs.
func RegisterResourceOutputs(urn string, outputs *cairn.PropertyMap) error {
	return registerResourceOutputs(urn, outputs)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
