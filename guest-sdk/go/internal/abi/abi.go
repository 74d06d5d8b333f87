// Package abi is the SDK's side of the component model's canonical ABI on a standard Go
// (GOOS=wasip1) reactor: the memory the host allocates in (cabi_realloc), the WASI adapter's
// own memory, the garbage collector's discipline around host calls, and reading and writing
// the WIT types in linear memory.
//
// Two rules of the component model shape it. While the host lowers arguments or results into
// the guest it calls cabi_realloc, and code running there may not call any import; and after
// an export returns, no guest code runs until the next call. A Go allocation can start or
// assist a garbage collection, and Go's collector reads clocks and polls timers (WASI imports,
// through the adapter), which would trap there ("cannot leave component instance"; wasmtime
// issue 14318). So:
//
//   - cabi_realloc serves the host from an arena of byte chunks the SDK owns (a bump
//     allocator: no Go allocation unless the arena is out of room);
//   - automatic collection is off whenever control may pass to the host (SetGCPercent(-1),
//     which also waits for a running cycle to end), and on only while the SDK runs the user's
//     code (Enter / Leave). An allocation with collection off never starts or assists a cycle,
//     so even the arena's rare new chunk is safe;
//   - the arena is emptied when the next call starts: by then the host has read the previous
//     call's results.
//
// The WASI preview1 adapter allocates its state and stack (64 KiB each) through the main
// module before Go's runtime has started, when no Go function may run. The adapter region (a
// data array with a marker, found and handed to the adapter by the build) serves those.
package abi
