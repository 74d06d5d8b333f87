// Command go-component is a provider that builds a component resource (Construct registers
// it and its children through the engine), serves a method on it (Call) and a function
// (Invoke): what the Go SDK's engine imports and a program's remote components, calls and
// invokes go through, end to end (tests/e2e/go_sdk.rs).
package main

import (
	_ "embed"
	"fmt"

	cairn "cairn.invalid/sdk"
	"cairn.invalid/sdk/provider"
)

//go:embed cairn.json
var manifest string

type components struct{ provider.Defaults }

func init() { provider.Export(&components{}, manifest) }

func main() {}

func (*components) Create(r provider.CreateRequest) (provider.CreateResult, error) {
	if r.Type() != "gocomp:index:Thing" {
		return provider.CreateResult{}, fmt.Errorf("unknown resource type %s", r.Type())
	}
	prefix, _ := r.Inputs.GetString("prefix")
	outputs := r.Inputs.Clone().Set("label", prefix+"-"+r.Name())
	return provider.CreateResult{ID: r.Name(), Outputs: cairn.PropertiesOf(outputs)}, nil
}

func (*components) Update(r provider.UpdateRequest) (provider.UpdateResult, error) {
	prefix, _ := r.Inputs.GetString("prefix")
	outputs := r.Inputs.Clone().Set("label", prefix+"-"+r.Name())
	return provider.UpdateResult{Outputs: cairn.PropertiesOf(outputs)}, nil
}

func (*components) Delete(provider.DeleteRequest) error { return nil }

// Check refuses the prefix `boom`: a child the engine cannot register, for the test of a
// construct that fails through the engine.
func (*components) Check(r provider.CheckRequest) (provider.CheckResult, error) {
	var failures []cairn.CheckFailure
	if prefix, _ := r.Inputs.GetString("prefix"); prefix == "boom" {
		failures = append(failures, cairn.CheckFailure{Property: "prefix", Reason: "boom is not a prefix"})
	}
	return provider.CheckResult{Inputs: r.Inputs, Failures: failures}, nil
}

// Construct builds gocomp:index:Pair: the component, then two Things with it as their parent,
// then the component's outputs, the Things' labels.
func (*components) Construct(r provider.ConstructRequest) (provider.ConstructResult, error) {
	if r.Type != "gocomp:index:Pair" {
		return provider.ConstructResult{}, fmt.Errorf("unknown component type %s", r.Type)
	}
	// A prefix that is not a string fails the construct; an unknown one (a preview) goes to
	// the children as it is.
	prefix, _ := r.Inputs.Get("prefix")
	if !r.Inputs.IsUnknown("prefix") {
		if _, err := r.Inputs.RequireString("prefix"); err != nil {
			return provider.ConstructResult{}, err
		}
	}
	pair, err := provider.RegisterResource(provider.RegisterResourceRequest{
		Type: r.Type, Name: r.Name, Parent: r.Parent, Dependencies: r.Dependencies, Protect: r.Protect,
	})
	if err != nil {
		return provider.ConstructResult{}, err
	}
	var ref *string
	if p, ok := r.Providers["gocomp"]; ok {
		ref = &p
	}
	outputs := cairn.NewPropertyMap()
	for _, side := range []string{"left", "right"} {
		thing, err := provider.RegisterResource(provider.RegisterResourceRequest{
			Type: "gocomp:index:Thing", Name: r.Name + "-" + side, Custom: true,
			Parent: &pair.URN, Inputs: cairn.Props("prefix", prefix), Provider: ref,
		})
		if err != nil {
			return provider.ConstructResult{}, err
		}
		label, ok := thing.Outputs.Get("label")
		if !ok {
			label = cairn.Unknown() // a preview: the Thing is not created yet
		}
		outputs.Set(side, label)
	}
	if err := provider.RegisterResourceOutputs(pair.URN, outputs); err != nil {
		return provider.ConstructResult{}, err
	}
	return provider.ConstructResult{URN: &pair.URN, State: cairn.PropertiesOf(outputs)}, nil
}

// Call serves gocomp:index:Pair/describe: the component's name (from `__self__`, its
// reference), the greeting and the stack.
func (*components) Call(r provider.CallRequest) (provider.CallResult, error) {
	if r.Token != "gocomp:index:Pair/describe" {
		return provider.CallResult{}, provider.Unimplemented("method " + r.Token)
	}
	self, _ := r.Args.Get("__self__")
	ref, ok := self.AsReference()
	if !ok {
		return provider.CallResult{Failures: []cairn.CheckFailure{{Property: "__self__", Reason: "describe is a method of Pair"}}}, nil
	}
	greeting, err := r.Args.RequireString("greeting")
	if err != nil {
		return provider.CallResult{}, err
	}
	description := fmt.Sprintf("%s from %s in %s/%s", greeting, cairn.URNName(ref.URN), r.Project, r.Stack)
	return provider.CallResult{Outputs: cairn.PropertiesOf(cairn.Props("description", description))}, nil
}

// Invoke serves gocomp:index:echo.
func (*components) Invoke(r provider.InvokeRequest) (provider.InvokeResult, error) {
	if r.Token != "gocomp:index:echo" {
		return provider.InvokeResult{}, provider.Unimplemented("function " + r.Token)
	}
	outputs := r.Args.Clone().Set("echoed", true)
	return provider.InvokeResult{Outputs: cairn.PropertiesOf(outputs)}, nil
}
