package provider

import (
	"errors"
	"fmt"
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

// ErrNoEngine is what the engine calls return outside a component (native unit tests),
// wrapped in an *EngineError.
var ErrNoEngine = errors.New("the engine is only reachable from inside a component")

// EngineError is a request the engine refused or failed (a child whose check or create
// failed, say), or an answer from it the SDK could not accept. Returned from Construct or Call
// it fails the call with its message, naming what was being registered, as any error does.
type EngineError struct {
	// Op is what was asked: `registering <type> "<name>"`, `registering the outputs of <urn>`.
	Op string
	// Reason is the engine's message, or what was wrong with its answer.
	Reason string
	cause  error
}

func (e *EngineError) Error() string { return e.Op + ": " + e.Reason }

// Unwrap is ErrNoEngine natively, nil otherwise.
func (e *EngineError) Unwrap() error { return e.cause }

// RegisterResource registers a resource with the engine's resource monitor from Construct (the
// component, then its children); it returns when the resource's steps have run.
func RegisterResource(r RegisterResourceRequest) (Registered, error) { return registerResource(r) }

// RegisterResourceOutputs sets a component's outputs.
func RegisterResourceOutputs(urn string, outputs *cairn.PropertyMap) error {
	return registerResourceOutputs(urn, outputs)
}

func registering(r *RegisterResourceRequest) string {
	return fmt.Sprintf("registering %s %q", r.Type, r.Name)
}

func registeringOutputs(urn string) string { return "registering the outputs of " + urn }

// registered checks the engine's answer to a registration (a URN, and outputs that are a
// well-formed object) and decodes it.
func registered(r *RegisterResourceRequest, urn string, id *string, outputs cairn.Table) (Registered, error) {
	if cairn.URNType(urn) == "" {
		return Registered{}, &EngineError{Op: registering(r), Reason: fmt.Sprintf("the engine answered with %q, which is not a URN", urn)}
	}
	m, err := cairn.DecodeMap(outputs)
	if err != nil {
		return Registered{}, &EngineError{Op: registering(r), Reason: "the engine sent malformed outputs: " + err.Error()}
	}
	return Registered{URN: urn, ID: id, Outputs: m}, nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
