// Command ${CRATE}-example is a program that uses the `${PACKAGE}` provider: one Greeting,
// its message exported.
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
	greeting := ctx.Custom("${PACKAGE}:index:Greeting", "greeting", program.Args{"name": name})
	ctx.Export("message", greeting.OutputString("message"))
	return nil
}
