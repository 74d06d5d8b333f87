// Package program writes Cairn programs in Go: a function of a *Context that declares a
// stack's resources, exported once with Export from the main package's init. `cairn up`
// builds the module into a component when a project's Pulumi.yaml names its directory
// (`runtime: wasm`, `main: .`).
//
//	func init() { program.Export(run) }
//
//	func main() {}
//
//	func run(ctx *program.Context) error {
//		pet := ctx.Custom("random:index/randomPet:RandomPet", "pet", program.Args{"length": 2})
//		ctx.Export("name", pet.Output("id"))
//		return nil
//	}
//
// The programming model is the spec's: Output (values known later, with dependencies,
// unknowns in a preview and secrets) and its functions (Apply, All, Apply2, …); custom,
// component, provider and remote-component resources with every resource option; reads,
// invokes, calls, stack references, configuration and stack outputs. Declaring returns at
// once: a request reaches the engine (the WIT `monitor`) as soon as what it refers to is known,
// so independent resources deploy in parallel, and the SDK's event loop takes the engine's
// completions until nothing is outstanding. The same program runs for a preview (DryRun),
// where new resources' outputs are unknown and callbacks on unknown values do not run.
package program
