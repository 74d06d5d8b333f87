// Command go-demo is a Cairn program written in Go: a port number, a token and an ID from the
// random provider (examples/providers/go-random, or any random provider), grouped under a
// component whose outputs are recorded with it.
//
// Configuration (`cairn config set <key> <value>`): `length`, the token's length (default 16);
// `password` (set it with --secret), which makes the secret output `dsn`. Stack outputs:
// `port`, `token`, `id`, `address` (derived from two outputs), `groupUrn` and `length`.
package main

import (
	"fmt"

	cairn "cairn.invalid/sdk"
	"cairn.invalid/sdk/program"
)

func init() { program.Export(run) }

func main() {}

func run(ctx *program.Context) error {
	length, err := ctx.Config().GetInt("length", 16)
	if err != nil {
		return err
	}

	// A component groups resources; its children's URNs name it as their parent.
	group := ctx.Component("go-demo:index:Group", "group")
	child := program.Parent(group)

	port := ctx.Custom("random:index/randomInteger:RandomInteger", "port",
		program.Args{"min": 8000, "max": 8999}, child)
	token := ctx.Custom("random:index/randomString:RandomString", "token",
		program.Args{"length": length, "special": false}, child)
	// Depends on the token beyond its inputs: created after it.
	id := ctx.Custom("random:index/randomUuid:RandomUuid", "id", nil, child, program.DependsOn(token))

	address := program.Apply2(id.OutputString("result"), port.OutputInt("result"),
		func(id string, port int64) string { return fmt.Sprintf("%s.local:%d", id[:8], port) })
	group.RegisterOutputs(program.Args{"address": address})

	ctx.Export("port", port.Output("result"))
	ctx.Export("token", token.Output("result"))
	ctx.Export("id", id.Output("result"))
	ctx.Export("address", address)
	ctx.Export("groupUrn", group.URN)
	ctx.Export("length", cairn.Int(length))

	// What derives from a secret is secret: in the state, in `cairn stack output`.
	if password, ok := ctx.Config().GetSecret("password"); ok {
		dsn := program.Apply2(address, password, func(address, password string) string {
			return "app:" + password + "@" + address
		})
		ctx.Export("dsn", dsn)
	}
	return nil
}
