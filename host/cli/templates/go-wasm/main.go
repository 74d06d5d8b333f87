// Command ${CRATE} is the ${PROJECT} program: Cairn runs it (`cairn up`, `cairn preview`,
// `cairn destroy`) to learn which resources the stack should have.
//
// It declares one component, `app`, and exports a greeting built from the stack's
// configuration (`cairn config set name Ada`). Add resources of installed providers (`cairn
// plugin ls`) with ctx.Custom, as children of `app`: program.Parent(app).
package main

import "cairn.invalid/sdk/program"

func init() { program.Export(run) }

// main is never called: the component's `run` export runs the program.
func main() {}

func run(ctx *program.Context) error {
	name, ok := ctx.Config().Get("name")
	if !ok {
		name = "world"
	}
	greeting := "Hello, " + name + "!"

	// A component groups resources; its outputs are recorded with it.
	app := ctx.Component("${PACKAGE}:index:App", "app")
	app.RegisterOutputs(program.Args{"greeting": greeting})

	ctx.Export("greeting", greeting)
	ctx.Export("appUrn", app.URN)
	return nil
}
