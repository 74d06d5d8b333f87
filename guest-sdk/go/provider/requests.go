package provider

import (
	cairn "cairn.invalid/sdk"
)

// CheckRequest asks Check (CheckConfig) to validate inputs and apply defaults.
type CheckRequest struct {
	URN string
	// OldInputs are the last recorded inputs; empty for a new resource or a replacement.
	OldInputs cairn.Properties
	// Inputs are the new inputs, as the program gave them; they may hold unknowns.
	Inputs cairn.Properties
	// RandomSeed is a seed for generated values, stable for the resource.
	RandomSeed []byte
}

// CheckResult is the checked inputs and any validation failures.
type CheckResult struct {
	Inputs   cairn.Properties
	Failures []cairn.CheckFailure
}

// DiffChanges says whether a diff found changes.
type DiffChanges uint8

// The answers of a diff (the WIT `diff-changes` cases, in order).
const (
	// DiffUnknown: the provider cannot tell; the engine compares old and new inputs itself.
	DiffUnknown DiffChanges = iota
	DiffNone
	DiffSome
)

// DiffKind is how one property differs.
type DiffKind uint8

// The kinds of change (the WIT `diff-kind` cases, in order).
const (
	Add DiffKind = iota
	AddReplace
	Delete
	DeleteReplace
	Update
	UpdateReplace
)

// WithReplace is the same change, requiring replacement.
func (k DiffKind) WithReplace() DiffKind {
	switch k {
	case Add:
		return AddReplace
	case Delete:
		return DeleteReplace
	case Update:
		return UpdateReplace
	}
	return k
}

// IsReplace reports whether the change requires replacement.
func (k DiffKind) IsReplace() bool {
	return k == AddReplace || k == DeleteReplace || k == UpdateReplace
}

// PropertyDiff is one entry of a detailed diff.
type PropertyDiff struct {
	// Path is a property path, e.g. `tags.env` or `ports[0]`.
	Path string
	Kind DiffKind
	// InputDiff: the old value is from the old inputs rather than the old state.
	InputDiff bool
}

// DiffRequest asks Diff (DiffConfig) to compare recorded state with new inputs.
type DiffRequest struct {
	URN        string
	ID         string
	OldInputs  cairn.Properties
	OldOutputs cairn.Properties
	// Inputs are the new inputs, from Check; they may hold unknowns.
	Inputs cairn.Properties
	// IgnoreChanges are property paths whose changes are to be ignored.
	IgnoreChanges []string
}

// DiffResult is what changed and whether it needs a replacement.
type DiffResult struct {
	Changes DiffChanges
	// ReplaceKeys are top-level inputs whose change requires replacement.
	ReplaceKeys []string
	// StableKeys are properties guaranteed not to change.
	StableKeys []string
	// ChangedKeys are the top-level inputs that changed.
	ChangedKeys []string
	// DetailedDiff is nil when the provider gives none.
	DetailedDiff []PropertyDiff
	// DeleteBeforeReplace: the resource must be deleted before its replacement is created.
	DeleteBeforeReplace bool
}

// CreateRequest asks Create (or, in a preview, PreviewCreate) for a resource.
type CreateRequest struct {
	URN string
	// Inputs are the checked inputs (what Check returned); in a preview they may hold
	// unknowns.
	Inputs cairn.Properties
	// Timeout is in seconds; 0 means the provider's default.
	Timeout float64
}

// CreateResult is the new resource: its ID (ignored in a preview) and outputs.
type CreateResult struct {
	ID      string
	Outputs cairn.Properties
}

// ReadRequest asks Read for a resource's current state; OldInputs and OldOutputs are empty
// when importing.
type ReadRequest struct {
	URN        string
	ID         string
	OldInputs  cairn.Properties
	OldOutputs cairn.Properties
}

// ReadResult is the resource as it is; an empty ID says it no longer exists.
type ReadResult struct {
	ID      string
	Inputs  cairn.Properties
	Outputs cairn.Properties
}

// UpdateRequest asks Update (or, in a preview, PreviewUpdate) to change a resource in place.
type UpdateRequest struct {
	URN        string
	ID         string
	OldInputs  cairn.Properties
	OldOutputs cairn.Properties
	// Inputs are the new checked inputs; in a preview they may hold unknowns.
	Inputs        cairn.Properties
	Timeout       float64
	IgnoreChanges []string
}

// UpdateResult is the resource's outputs after the update.
type UpdateResult struct {
	Outputs cairn.Properties
}

// DeleteRequest asks Delete to delete a resource as recorded.
type DeleteRequest struct {
	URN        string
	ID         string
	OldInputs  cairn.Properties
	OldOutputs cairn.Properties
	Timeout    float64
}

// Dependencies are the URNs properties depend on, by property name.
type Dependencies map[string][]string

// InvokeRequest asks Invoke to run a provider function.
type InvokeRequest struct {
	Token string
	Args  cairn.Properties
}

// InvokeResult is a function's outputs, or the check failures of its arguments.
type InvokeResult struct {
	Outputs  cairn.Properties
	Failures []cairn.CheckFailure
}

// CallRequest asks Call to run a component method.
type CallRequest struct {
	Token           string
	Args            cairn.Properties
	ArgDependencies Dependencies
	Project         string
	Stack           string
	DryRun          bool
}

// CallResult is a method's outputs.
type CallResult struct {
	Outputs            cairn.Properties
	OutputDependencies Dependencies
	Failures           []cairn.CheckFailure
}

// ConstructRequest asks Construct to build a component resource.
type ConstructRequest struct {
	Project           string
	Stack             string
	Type              string
	Name              string
	Parent            *string
	Inputs            cairn.Properties
	InputDependencies Dependencies
	Dependencies      []string
	Protect           bool
	// Providers are provider references by package.
	Providers map[string]string
	DryRun    bool
}

// ConstructResult is the component's URN and outputs.
type ConstructResult struct {
	URN               *string
	State             cairn.Properties
	StateDependencies Dependencies
}

// Type is the resource's type token, from its URN (`random:index:RandomPet`).
func (r CheckRequest) Type() string { return cairn.URNType(r.URN) }

// Name is the resource's logical name, from its URN.
func (r CheckRequest) Name() string { return cairn.URNName(r.URN) }

// Type is the resource's type token.
func (r DiffRequest) Type() string { return cairn.URNType(r.URN) }

// Name is the resource's logical name.
func (r DiffRequest) Name() string { return cairn.URNName(r.URN) }

// Type is the resource's type token.
func (r CreateRequest) Type() string { return cairn.URNType(r.URN) }

// Name is the resource's logical name.
func (r CreateRequest) Name() string { return cairn.URNName(r.URN) }

// Type is the resource's type token.
func (r ReadRequest) Type() string { return cairn.URNType(r.URN) }

// Name is the resource's logical name.
func (r ReadRequest) Name() string { return cairn.URNName(r.URN) }

// Type is the resource's type token.
func (r UpdateRequest) Type() string { return cairn.URNType(r.URN) }

// Name is the resource's logical name.
func (r UpdateRequest) Name() string { return cairn.URNName(r.URN) }

// Type is the resource's type token.
func (r DeleteRequest) Type() string { return cairn.URNType(r.URN) }

// Name is the resource's logical name.
func (r DeleteRequest) Name() string { return cairn.URNName(r.URN) }
