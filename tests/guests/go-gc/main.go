// Command go-gc is a provider that makes the Go runtime's collector and timers work inside
// calls, for the test that runs 100,000 calls on one instance (tests/e2e/go_sdk.rs): the traps
// it guards against (Go's collector reading clocks and polling timers while the host
// allocates in the guest, wasmtime issue 14318) need garbage, a pending timer and clock reads.
package main

import (
	_ "embed"
	"runtime"
	"time"

	cairn "cairn.invalid/sdk"
	"cairn.invalid/sdk/provider"
)

//go:embed cairn.json
var manifest string

type churn struct {
	provider.Defaults
	checks int64
	timer  *time.Timer
	// sink keeps the last garbage reachable until the next call, so the collector has work.
	sink [][]byte
}

func init() { provider.Export(&churn{}, manifest) }

func main() {}

// Check allocates garbageKiB of memory in 1 KiB pieces, reads the clock, re-arms a timer that
// never fires during the test, and returns the inputs: as they came, or (with `decode`)
// decoded, checked and encoded again with `checked: true` added.
func (c *churn) Check(r provider.CheckRequest) (provider.CheckResult, error) {
	c.checks++
	kib, ok := r.Inputs.GetInt("garbageKiB")
	if !ok {
		kib = 64
	}
	c.sink = c.sink[:0]
	for i := int64(0); i < kib; i++ {
		c.sink = append(c.sink, make([]byte, 1024))
	}
	_ = time.Now()
	if c.timer == nil {
		c.timer = time.AfterFunc(time.Hour, func() { panic("the timer fired") })
	} else {
		c.timer.Reset(time.Hour)
	}
	if decode, _ := r.Inputs.GetBool("decode"); decode {
		// Read, check and re-encode the inputs, as most providers' Check does.
		ch := cairn.NewChecker(r.Inputs.Map())
		ch.RequiredString("payload")
		ch.Default("checked", true)
		inputs, failures := ch.Finish()
		return provider.CheckResult{Inputs: cairn.PropertiesOf(inputs), Failures: failures}, nil
	}
	return provider.CheckResult{Inputs: r.Inputs}, nil
}

// Invoke serves gogc:index:stats.
func (c *churn) Invoke(r provider.InvokeRequest) (provider.InvokeResult, error) {
	if r.Token != "gogc:index:stats" {
		return provider.InvokeResult{}, provider.Unimplemented("function " + r.Token)
	}
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	collections := int64(m.NumGC)
	// What is live: the heap right after a collection.
	runtime.GC()
	runtime.ReadMemStats(&m)
	outputs := cairn.Props(
		"checks", c.checks,
		"numGC", collections,
		"liveHeap", int64(m.HeapAlloc),
		"heapSys", int64(m.HeapSys),
	)
	return provider.InvokeResult{Outputs: cairn.PropertiesOf(outputs)}, nil
}

func (*churn) Create(r provider.CreateRequest) (provider.CreateResult, error) {
	return provider.CreateResult{ID: r.Name(), Outputs: r.Inputs}, nil
}

func (*churn) Update(r provider.UpdateRequest) (provider.UpdateResult, error) {
	return provider.UpdateResult{Outputs: r.Inputs}, nil
}

func (*churn) Delete(provider.DeleteRequest) error { return nil }
