// Command ${CRATE} is the `${PACKAGE}` provider: Cairn loads it as a sandboxed WebAssembly
// component (built from this module by `cairn up` with Go and Cairn's Go SDK) and calls it to
// check, create, update and delete the package's resources.
//
// It manages one resource type, `${PACKAGE}:index:Greeting` (its schema is in cairn.json):
// inputs `name` and `salutation`, output `message`. A greeting lives only in the stack's
// state; a real provider calls a service in Create, Update and Delete (asking for the hosts it
// needs under `capabilities` in cairn.json).
package main

import (
	_ "embed"

	cairn "cairn.invalid/sdk"
	"cairn.invalid/sdk/provider"
)

//go:embed cairn.json
var manifest string

// greeter is the provider; the embedded Defaults implement every method but Create, Update
// and Delete.
type greeter struct{ provider.Defaults }

func init() { provider.Export(&greeter{}, manifest) }

// main is never called: the component's exports are the provider's methods.
func main() {}

// outputs are the resource's outputs for these (checked) inputs. In a preview an input may be
// unknown (another resource's output), and so is the message then.
func outputs(inputs cairn.Properties) cairn.Properties {
	name, okName := inputs.GetString("name")
	salutation, okSalutation := inputs.GetString("salutation")
	message := cairn.Unknown()
	if okName && okSalutation {
		message = cairn.String(salutation + ", " + name + "!")
	}
	out := inputs.Clone()
	out.Set("message", message)
	return cairn.PropertiesOf(out)
}

// Check validates the inputs and fills in defaults; failures name the property.
func (*greeter) Check(r provider.CheckRequest) (provider.CheckResult, error) {
	c := cairn.NewChecker(r.Inputs.Map())
	c.RequiredString("name")
	c.Default("salutation", "Hello")
	if s, ok := c.String("salutation"); ok && s == "" {
		c.Fail("salutation", "must not be empty")
	}
	inputs, failures := c.Finish()
	return provider.CheckResult{Inputs: cairn.PropertiesOf(inputs), Failures: failures}, nil
}

// Create makes the greeting (a real provider acts here).
func (*greeter) Create(r provider.CreateRequest) (provider.CreateResult, error) {
	name, err := r.Inputs.RequireString("name")
	if err != nil {
		return provider.CreateResult{}, err
	}
	return provider.CreateResult{ID: "greeting-" + name, Outputs: outputs(r.Inputs)}, nil
}

// PreviewCreate is called instead of Create in a preview: it describes the result and never
// acts.
func (*greeter) PreviewCreate(r provider.CreateRequest) (provider.CreateResult, error) {
	return provider.CreateResult{Outputs: outputs(r.Inputs)}, nil
}

// Update changes the greeting in place.
func (*greeter) Update(r provider.UpdateRequest) (provider.UpdateResult, error) {
	return provider.UpdateResult{Outputs: outputs(r.Inputs)}, nil
}

// PreviewUpdate describes an update in a preview.
func (*greeter) PreviewUpdate(r provider.UpdateRequest) (provider.UpdateResult, error) {
	return provider.UpdateResult{Outputs: outputs(r.Inputs)}, nil
}

// Delete deletes the greeting (nothing to do: it lives in the state).
func (*greeter) Delete(provider.DeleteRequest) error { return nil }
