// Command go-hostile is a hostile provider in Go: each `mode` of its one resource attacks the
// host through Go's standard library (files, environment, network, processes, clock, CPU,
// memory, the stack) or hands the host results it must refuse (huge, malformed,
// unstorable). The sandbox must contain every one as it contains the Rust and Python hostile
// guests: an error for the deployment, nothing leaked, the host unharmed.
package main

import (
	_ "embed"
	"fmt"
	"math"
	"net"
	"os"
	"sort"
	"strings"
	"time"

	cairn "cairn.invalid/sdk"
	"cairn.invalid/sdk/provider"
)

//go:embed cairn.json
var manifest string

type hostile struct{ provider.Defaults }

func init() {
	every := []string{"*"}
	provider.Export(&hostile{provider.Defaults{ReplaceOnChange: map[string][]string{"gohostile:index:Attack": every}}}, manifest)
}

func main() {}

// PreviewCreate describes the attack without making it.
func (*hostile) PreviewCreate(r provider.CreateRequest) (provider.CreateResult, error) {
	mode, _ := r.Inputs.GetString("mode")
	return provider.CreateResult{Outputs: cairn.PropertiesOf(cairn.Props("mode", mode, "found", cairn.Unknown()))}, nil
}

// Create makes the attack its mode names; what it found is the output `found`, and a refusal
// is the error it returns.
func (*hostile) Create(r provider.CreateRequest) (provider.CreateResult, error) {
	mode, err := r.Inputs.RequireString("mode")
	if err != nil {
		return provider.CreateResult{}, err
	}
	result := func(found string) (provider.CreateResult, error) {
		return provider.CreateResult{ID: mode, Outputs: cairn.PropertiesOf(cairn.Props("mode", mode, "found", found))}, nil
	}
	switch mode {
	case "file":
		b, err := os.ReadFile("/etc/passwd")
		if err != nil {
			return provider.CreateResult{}, err
		}
		return result(string(b))
	case "path":
		// A path of the program's choosing: inside the granted /work, or escaping it.
		path, _ := r.Inputs.GetString("path")
		b, err := os.ReadFile(path)
		if err != nil {
			return provider.CreateResult{}, err
		}
		return result(string(b))
	case "listdir":
		entries, err := os.ReadDir("/")
		if err != nil {
			return provider.CreateResult{}, err
		}
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		return result(strings.Join(names, ",") + ",")
	case "env":
		var names []string
		for _, kv := range os.Environ() {
			name, _, _ := strings.Cut(kv, "=")
			names = append(names, name)
		}
		sort.Strings(names)
		return result(strings.Join(names, ","))
	case "clock":
		// Reading the clock is allowed; sleeping past the deadline is not.
		before := time.Now()
		time.Sleep(time.Hour)
		return result(time.Since(before).String())
	case "network":
		port, _ := r.Inputs.GetInt("port")
		conn, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), 5*time.Second)
		if err != nil {
			return provider.CreateResult{}, err
		}
		defer conn.Close()
		buf := make([]byte, 100)
		n, _ := conn.Read(buf)
		return result(string(buf[:n]))
	case "process":
		p, err := os.StartProcess("/bin/sh", []string{"sh", "-c", "id"}, &os.ProcAttr{})
		if err != nil {
			return provider.CreateResult{}, err
		}
		state, err := p.Wait()
		if err != nil {
			return provider.CreateResult{}, err
		}
		return result(state.String())
	case "loop":
		for {
		}
	case "memory":
		var hoard [][]byte
		for {
			hoard = append(hoard, make([]byte, 16<<20))
		}
	case "recursion":
		return result(fmt.Sprint(recurse(1)))
	case "panic":
		panic("the hostile provider panicked")
	case "huge":
		return result(strings.Repeat("x", 64<<20))
	case "nan":
		return provider.CreateResult{ID: mode, Outputs: cairn.PropertiesOf(cairn.Props("mode", mode, "found", math.NaN()))}, nil
	case "malformed":
		// A table no encoder makes: a node of an unknown kind.
		bad := cairn.Table{Nodes: []uint32{99, 0, 0, 0, 0}}
		return provider.CreateResult{ID: mode, Outputs: cairn.FromTable(bad)}, nil
	}
	return provider.CreateResult{}, fmt.Errorf("unknown mode %q", mode)
}

// recurse never returns: Go's stack grows until its runtime gives up.
func recurse(n int) int { return recurse(n+1) + 1 }

func (*hostile) Update(r provider.UpdateRequest) (provider.UpdateResult, error) {
	return provider.UpdateResult{Outputs: r.Inputs}, nil
}

func (*hostile) Delete(provider.DeleteRequest) error { return nil }
