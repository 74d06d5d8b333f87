//go:build !wasip1

package abi

// Enter and Leave only matter in a component; natively (unit tests) the collector runs as
// usual.
func Enter() {}

// Leave: see Enter.
func Leave() {}

// HostCall runs f (natively there is no arena to give back).
func HostCall(f func()) { f() }
