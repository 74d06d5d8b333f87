// Package provider writes Cairn providers in Go: a type that implements Provider (embed
// Defaults for every method but Create, Update and Delete), exported once with Export from the
// main package's init. `cairn up` builds the module into a component when a project names its
// directory under `plugins.providers`.
//
//	type Hello struct{ provider.Defaults }
//
//	func (h *Hello) Create(r provider.CreateRequest) (provider.CreateResult, error) {
//		name, err := r.Inputs.RequireString("name")
//		if err != nil {
//			return provider.CreateResult{}, err
//		}
//		outputs := r.Inputs.Clone().Set("message", "Hello, "+name+"!")
//		return provider.CreateResult{ID: name, Outputs: cairn.PropertiesOf(outputs)}, nil
//	}
//	func (h *Hello) Update(r provider.UpdateRequest) (provider.UpdateResult, error) { … }
//	func (h *Hello) Delete(r provider.DeleteRequest) error { return nil }
//
//	func init() { provider.Export(&Hello{}) }
//	func main() {}
//
// Requests name the new inputs Inputs and what the state recorded OldInputs / OldOutputs; the
// WIT records (and Pulumi's protocol) name them per call:
//
//	request        here                              WIT
//	CheckRequest   Inputs, OldInputs                 news, olds
//	DiffRequest    Inputs, OldInputs, OldOutputs     news, old-inputs, old-outputs
//	CreateRequest  Inputs                            properties
//	ReadRequest    OldInputs, OldOutputs             inputs, state
//	UpdateRequest  Inputs, OldInputs, OldOutputs     news, old-inputs, old-outputs
//	DeleteRequest  OldInputs, OldOutputs             inputs, outputs
//
// An ordinary failure is an error returned: it reaches the engine as the WIT's provider-error
// (Partial for a resource left behind, Unimplemented, Cancelled, Timeout), never as a trap. A
// panic in a method is reported the same way, as a failure naming the panic.
package provider

import (
	cairn "cairn.invalid/sdk"
)

// Provider is what a provider implements. Embed Defaults for every method but Create, Update
// and Delete; the host calls one method at a time on an instance, Configure first.
//
// A preview never reaches Create or Update: the SDK calls PreviewCreate and PreviewUpdate
// instead, which must not act (no side effect at all) and describe the result: the outputs
// the inputs tell, cairn.Unknown() for the rest. Their defaults return the inputs as the
// outputs.
type Provider interface {
	// GetSchema is the package schema as JSON text; "" serves the manifest's schema.
	GetSchema() (string, error)
	// CheckConfig validates the provider's configuration.
	CheckConfig(CheckRequest) (CheckResult, error)
	// DiffConfig compares configurations; a replacement here replaces every resource the
	// provider manages.
	DiffConfig(DiffRequest) (DiffResult, error)
	// Configure applies checked configuration (which may hold unknowns in a preview).
	Configure(inputs *cairn.PropertyMap, preview bool) error
	// Check validates a resource's inputs and applies defaults.
	Check(CheckRequest) (CheckResult, error)
	// Diff compares a resource's recorded inputs with its new ones.
	Diff(DiffRequest) (DiffResult, error)
	// Create creates a resource; never called in a preview.
	Create(CreateRequest) (CreateResult, error)
	// PreviewCreate describes, in a preview, the resource Create would make, without acting.
	PreviewCreate(CreateRequest) (CreateResult, error)
	// Read reads a resource's current state (refresh, import); an empty ID says it is gone.
	Read(ReadRequest) (ReadResult, error)
	// Update changes a resource in place; never called in a preview.
	Update(UpdateRequest) (UpdateResult, error)
	// PreviewUpdate describes, in a preview, the resource Update would leave.
	PreviewUpdate(UpdateRequest) (UpdateResult, error)
	// Delete deletes a resource (never in a preview).
	Delete(DeleteRequest) error
	// Construct builds a component resource by registering it and its children (see
	// RegisterResource).
	Construct(ConstructRequest) (ConstructResult, error)
	// Invoke runs a provider function.
	Invoke(InvokeRequest) (InvokeResult, error)
	// Call runs a component method.
	Call(CallRequest) (CallResult, error)
	// Cancel asks the provider to stop outstanding work; advisory.
	Cancel()
}

// Defaults implements every Provider method but Create, Update and Delete: embed it.
//
//	method                       default
//	GetSchema                    "": the manifest's schema (name and version filled in)
//	CheckConfig, Check           the inputs unchanged
//	DiffConfig                   DiffInputs with no replacements
//	Configure                    nothing stored
//	Diff                         DiffInputs with ReplaceOnChange and DeleteBeforeReplace
//	PreviewCreate                the inputs as the outputs, no ID
//	PreviewUpdate                the new inputs as the outputs
//	Read                         the recorded state unchanged
//	Construct, Invoke, Call      Unimplemented
//	Cancel                       nothing
type Defaults struct {
	// ReplaceOnChange: per resource type, the top-level inputs whose change forces a
	// replacement ("*": every input). Used by the default Diff.
	ReplaceOnChange map[string][]string
	// DeleteBeforeReplace: resource types whose replacement must delete the old resource
	// first (a unique name, say). Used by the default Diff.
	DeleteBeforeReplace map[string]bool
}

// GetSchema serves the manifest's schema.
func (Defaults) GetSchema() (string, error) { return "", nil }

// CheckConfig accepts the configuration.
func (Defaults) CheckConfig(r CheckRequest) (CheckResult, error) {
	return CheckResult{Inputs: r.Inputs}, nil
}

// DiffConfig compares the configuration's top-level keys.
func (Defaults) DiffConfig(r DiffRequest) (DiffResult, error) {
	return DiffInputs(r.OldInputs, r.Inputs, nil, r.IgnoreChanges), nil
}

// Configure stores nothing.
func (Defaults) Configure(*cairn.PropertyMap, bool) error { return nil }

// Check accepts the inputs.
func (Defaults) Check(r CheckRequest) (CheckResult, error) {
	return CheckResult{Inputs: r.Inputs}, nil
}

// Diff compares top-level inputs; ReplaceOnChange and DeleteBeforeReplace say what replaces.
func (d Defaults) Diff(r DiffRequest) (DiffResult, error) {
	t := r.Type()
	result := DiffInputs(r.OldInputs, r.Inputs, d.ReplaceOnChange[t], r.IgnoreChanges)
	result.DeleteBeforeReplace = len(result.ReplaceKeys) > 0 && d.DeleteBeforeReplace[t]
	return result, nil
}

// PreviewCreate returns the inputs as the outputs.
func (Defaults) PreviewCreate(r CreateRequest) (CreateResult, error) {
	return CreateResult{Outputs: r.Inputs}, nil
}

// Read returns the recorded state (no drift detection).
func (Defaults) Read(r ReadRequest) (ReadResult, error) {
	return ReadResult{ID: r.ID, Inputs: r.OldInputs, Outputs: r.OldOutputs}, nil
}

// PreviewUpdate returns the new inputs as the outputs.
func (Defaults) PreviewUpdate(r UpdateRequest) (UpdateResult, error) {
	return UpdateResult{Outputs: r.Inputs}, nil
}

// Construct is not implemented.
func (Defaults) Construct(ConstructRequest) (ConstructResult, error) {
	return ConstructResult{}, Unimplemented("construct")
}

// Invoke is not implemented.
func (Defaults) Invoke(InvokeRequest) (InvokeResult, error) {
	return InvokeResult{}, Unimplemented("invoke")
}

// Call is not implemented.
func (Defaults) Call(CallRequest) (CallResult, error) {
	return CallResult{}, Unimplemented("call")
}

// Cancel does nothing.
func (Defaults) Cancel() {}
