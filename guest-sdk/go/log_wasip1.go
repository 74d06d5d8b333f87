//go:build wasip1

package cairn

import (
	"runtime"

	"cairn.invalid/sdk/internal/abi"
)

//go:wasmimport cairn:deploy/host@0.3.0 log
func wasmLog(severity uint32, hasURN uint32, urn uintptr, urnLen uint32, message uintptr, messageLen uint32)

func hostLog(level Level, urn, message string) {
	// No results: the host never allocates in the guest for this call, so the collector may
	// stay as it is; only the strings must outlive the call.
	var has uint32
	if urn != "" {
		has = 1
	}
	wasmLog(uint32(level), has, abi.Addr(urn), uint32(len(urn)), abi.Addr(message), uint32(len(message)))
	runtime.KeepAlive(urn)
	runtime.KeepAlive(message)
}
