package program

import (
	"fmt"
	"runtime/debug"
	"slices"

	cairn "cairn.invalid/sdk"
	"cairn.invalid/sdk/internal/abi"
)

// Requests go to the host at once and return handles; Run runs the program's function (which
// declares resources), then asks the host for completions and runs whatever waited on them
// (which may declare more), until nothing is outstanding; then it sends the stack outputs and
// reports the first error, if any. Waiting for everything before failing leaves the state
// consistent: every request the engine accepted has finished.

// outcome is how a host request ended.
type outcome struct {
	// A registration or read: the resource's URN, ID and outputs.
	urn     string
	id      *string
	outputs *cairn.PropertyMap
	// isState: a registration or read (else an invoke or call).
	isState bool
	// err is the failure's message ("" when the request succeeded).
	err string
}

// completion is a finished request.
type completion struct {
	handle  uint32
	outcome outcome
}

// deployment is what the program runs in.
type deployment struct {
	project, stack, organization string
	dryRun                       bool
	rootURN                      string
}

// host is the monitor and context the program talks to: the component's imports
// (host_wasip1.go), or a test's engine.
type host interface {
	deployment() deployment
	config() []configEntry
	register(r *registerRequest) uint32
	read(r *readRequest) uint32
	invoke(token string, args *cairn.PropertyMap, provider, version *string) uint32
	call(token string, args *cairn.PropertyMap, deps map[string][]string, provider, version *string) uint32
	wait() []completion
	registerOutputs(urn string, outputs *cairn.PropertyMap) error
}

type configEntry struct {
	key   string
	value cairn.Value
}

// The program's state: one run per component call.
var rt struct {
	host     host
	main     func(*Context) error
	handlers map[uint32]func(outcome)
	// err is the first error; the program fails with it.
	err     string
	exports []exported
	// The deployment and configuration, read from the host once per run.
	deployment deployment
	config     map[string]cairn.Value
	// Transformations applied to every resource declared after they were registered.
	stackTransformations []Transformation
}

type exported struct {
	name  string
	value Output[cairn.Value]
}

// Export makes main the component's program: its `run` calls main with the deployment's
// Context, then runs until every resource main declared (and what their outputs led to) is
// done. Call it once, from the main package's init:
//
//	func init() { program.Export(run) }
//
//	func run(ctx *program.Context) error { … }
func Export(main func(*Context) error) { rt.main = main }

// recordError fails the program with message, unless it failed already.
func recordError(message string) {
	if rt.err == "" {
		rt.err = message
	}
}

// onComplete runs handler with the outcome of the host request handle.
func onComplete(handle uint32, handler func(outcome)) {
	rt.handlers[handle] = handler
}

// run runs the program on h; the error is the first one the program met.
func run(h host) error {
	if rt.main == nil {
		return fmt.Errorf("the component exports no program: call program.Export in an init function of package main")
	}
	rt.host = h
	rt.handlers = map[uint32]func(outcome){}
	rt.err = ""
	rt.exports = nil
	rt.stackTransformations = nil
	rt.deployment = h.deployment()
	rt.config = map[string]cairn.Value{}
	for _, e := range h.config() {
		rt.config[e.key] = e.value
	}
	ctx := &Context{}
	// The user's code runs with the collector on (see package abi).
	abi.Enter()
	defer abi.Leave()
	if err := protect(func() error { return rt.main(ctx) }); err != nil {
		recordError(err.Error())
	}
	drain()
	if len(rt.exports) > 0 {
		exports := rt.exports
		values := make([]Output[cairn.Value], len(exports))
		for i, e := range exports {
			values[i] = e.value
		}
		root := rt.deployment.rootURN
		whenAll(values, func(rs []resolved[cairn.Value]) {
			outputs := cairn.NewPropertyMap()
			for i, r := range rs {
				v, err := propertyValue(r)
				if err != nil {
					recordError(fmt.Sprintf("stack output %s: %s", exports[i].name, err))
					return
				}
				outputs.Set(exports[i].name, v)
			}
			if err := rt.host.registerOutputs(root, outputs); err != nil {
				recordError("setting the stack outputs: " + err.Error())
			}
		})
		drain()
	}
	if rt.err != "" {
		return fmt.Errorf("%s", rt.err)
	}
	return nil
}

// drain waits for completions and dispatches them until nothing is outstanding. A panic in
// what a completion runs (a callback) fails the program, and the loop goes on, so every
// request already made finishes.
func drain() {
	for {
		done := rt.host.wait()
		if len(done) == 0 {
			return
		}
		for _, c := range done {
			handler, ok := rt.handlers[c.handle]
			if !ok {
				continue
			}
			delete(rt.handlers, c.handle)
			if err := protect(func() error {
				handler(c.outcome)
				return nil
			}); err != nil {
				recordError(err.Error())
			}
		}
	}
}

// protect runs f, turning a panic into an error naming where it happened.
func protect(f func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v\n%s", r, debug.Stack())
		}
	}()
	return f()
}

// propertyValue is a resolved output as a property value for the engine: secrets wrapped,
// unknowns as unknown; a failed output is an error.
func propertyValue(r resolved[cairn.Value]) (cairn.Value, error) {
	switch r.state {
	case unknown:
		return cairn.Unknown(), nil
	case failed:
		return cairn.Value{}, fmt.Errorf("%s", r.err)
	}
	if r.secret && !r.value.IsSecret() {
		return cairn.Secret(r.value), nil
	}
	return r.value, nil
}

// firstFailure is the first failure among resolved outputs.
func firstFailure(rs []resolved[cairn.Value]) (string, bool) {
	for _, r := range rs {
		if r.state == failed {
			return r.err, true
		}
	}
	return "", false
}

// dependencies is the union of resolved outputs' dependencies.
func dependencies(rs []resolved[cairn.Value]) []string {
	var deps []string
	for _, r := range rs {
		deps = union(deps, r.deps)
	}
	return slices.Clone(deps)
}
