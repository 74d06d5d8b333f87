package provider

import (
	"encoding/json"
	"fmt"
	"runtime/debug"
	"strings"

	cairn "cairn.invalid/sdk"
	"cairn.invalid/sdk/internal/abi"
)

// DefaultVersion is the version a manifest without one gets when the build embeds it (a Go
// module has no version of its own until it is tagged).
const DefaultVersion = "0.0.0"

var exported struct {
	provider Provider
	// The schema GetSchema serves by default: the manifest's, name and version filled in.
	schema string
}

// Export makes p the component's provider, with the manifest (the text of cairn.json, which
// the build also embeds in the component) whose schema GetSchema serves by default. Call it
// once, from the main package's init:
//
//	//go:embed cairn.json
//	var manifest string
//
//	func init() { provider.Export(&Hello{}, manifest) }
//
// It panics when the manifest is not a JSON object with a name (a program error, which the
// build reports before anything runs).
func Export(p Provider, manifest string) {
	schema, err := servedSchema(manifest)
	if err != nil {
		panic("provider.Export: " + err.Error())
	}
	exported.provider = p
	exported.schema = schema
}

// servedSchema is the manifest's schema as GetSchema serves it: `name` and `version` from the
// manifest when the schema has none of its own ("" when there is no schema).
func servedSchema(manifest string) (string, error) {
	var m struct {
		Name    *string         `json:"name"`
		Version *string         `json:"version"`
		Schema  json.RawMessage `json:"schema"`
	}
	if err := json.Unmarshal([]byte(manifest), &m); err != nil {
		return "", fmt.Errorf("the manifest is not valid JSON: %w", err)
	}
	if m.Name == nil {
		return "", fmt.Errorf("the manifest has no name")
	}
	version := DefaultVersion
	if m.Version != nil {
		version = *m.Version
	}
	if len(m.Schema) == 0 || string(m.Schema) == "null" {
		return "", nil
	}
	var schema map[string]json.RawMessage
	if err := json.Unmarshal(m.Schema, &schema); err != nil {
		return string(m.Schema), nil
	}
	for key, value := range map[string]string{"name": *m.Name, "version": version} {
		if _, ok := schema[key]; !ok {
			text, _ := json.Marshal(value)
			schema[key] = text
		}
	}
	text, err := json.Marshal(schema)
	return string(text), err
}

// run calls the provider, turning a panic into the call's failure (with the panic's value and
// where it happened), so a bug in one call fails that call with a message, not the instance
// with a trap.
func run[T any](f func(Provider) (T, error)) (out T, err error) {
	if exported.provider == nil {
		return out, fmt.Errorf("the component exports no provider: call provider.Export in an init function of package main")
	}
	// The user's code runs with the collector on; it is off again before results are written
	// for the host (see package abi).
	abi.Enter()
	defer abi.Leave()
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v\n%s", r, stackOf(debug.Stack()))
		}
	}()
	return f(exported.provider)
}

// stackOf keeps the frames of a panic's stack that are worth reading: from the panicking
// function on, at most 24 lines.
func stackOf(stack []byte) string {
	lines := strings.Split(strings.TrimSpace(string(stack)), "\n")
	for i, line := range lines {
		if strings.HasPrefix(line, "panic(") {
			lines = lines[i+2:]
			break
		}
	}
	if len(lines) > 24 {
		lines = lines[:24]
	}
	return strings.Join(lines, "\n")
}

// The calls the component's exports make, after reading the request: the provider's method,
// with the defaults a preview takes.

func getSchema() (string, error) {
	schema, err := run(func(p Provider) (string, error) { return p.GetSchema() })
	if err != nil || schema != "" {
		return schema, err
	}
	if exported.schema == "" {
		return "", Unimplemented("get-schema")
	}
	return exported.schema, nil
}

func checkConfig(r CheckRequest) (CheckResult, error) {
	return run(func(p Provider) (CheckResult, error) { return p.CheckConfig(r) })
}

func diffConfig(r DiffRequest) (DiffResult, error) {
	return run(func(p Provider) (DiffResult, error) { return p.DiffConfig(r) })
}

func configure(inputs *cairn.PropertyMap, preview bool) error {
	_, err := run(func(p Provider) (struct{}, error) { return struct{}{}, p.Configure(inputs, preview) })
	return err
}

func check(r CheckRequest) (CheckResult, error) {
	return run(func(p Provider) (CheckResult, error) { return p.Check(r) })
}

func diff(r DiffRequest) (DiffResult, error) {
	return run(func(p Provider) (DiffResult, error) { return p.Diff(r) })
}

// create never reaches Create in a preview, and a preview's ID is always empty.
func create(r CreateRequest, preview bool) (CreateResult, error) {
	return run(func(p Provider) (CreateResult, error) {
		if !preview {
			return p.Create(r)
		}
		result, err := p.PreviewCreate(r)
		result.ID = ""
		return result, err
	})
}

func read(r ReadRequest) (ReadResult, error) {
	return run(func(p Provider) (ReadResult, error) { return p.Read(r) })
}

// update never reaches Update in a preview.
func update(r UpdateRequest, preview bool) (UpdateResult, error) {
	return run(func(p Provider) (UpdateResult, error) {
		if preview {
			return p.PreviewUpdate(r)
		}
		return p.Update(r)
	})
}

func del(r DeleteRequest) error {
	_, err := run(func(p Provider) (struct{}, error) { return struct{}{}, p.Delete(r) })
	return err
}

func construct(r ConstructRequest) (ConstructResult, error) {
	return run(func(p Provider) (ConstructResult, error) { return p.Construct(r) })
}

func invoke(r InvokeRequest) (InvokeResult, error) {
	return run(func(p Provider) (InvokeResult, error) { return p.Invoke(r) })
}

func call(r CallRequest) (CallResult, error) {
	return run(func(p Provider) (CallResult, error) { return p.Call(r) })
}

func cancel() {
	_, _ = run(func(p Provider) (struct{}, error) {
		p.Cancel()
		return struct{}{}, nil
	})
}
