//go:build wasip1

package abi

import (
	"math"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
)

// userPercent is the GOGC the user's code runs with (100 unless GOGC or the user's own
// debug.SetGCPercent said otherwise).
var userPercent = 100

// userLimit is a memory limit the user's code set (debug.SetMemoryLimit, GOMEMLIMIT), if any:
// a limit makes the collector run even when GOGC is off, so it is lifted while the collector
// is off and restored for the user's code.
var userLimit int64 = math.MaxInt64

// inUser is true between Enter and Leave.
var inUser bool

func init() {
	// Memory profiling samples allocations from inside the allocator, including those of
	// cabi_realloc; a component has no use for the profile.
	runtime.MemProfileRate = 0
	if p := debug.SetGCPercent(-1); p >= 0 {
		userPercent = p
	}
	if userLimit = debug.SetMemoryLimit(-1); userLimit != math.MaxInt64 {
		debug.SetMemoryLimit(math.MaxInt64)
	}
}

// Enter turns automatic garbage collection on for the user's code (an export's body, after its
// arguments are read), and collects first when a collection is due.
func Enter() {
	if inUser {
		return
	}
	inUser = true
	if userLimit != math.MaxInt64 {
		debug.SetMemoryLimit(userLimit)
	}
	debug.SetGCPercent(userPercent)
	pace()
}

// The pacing the collector's own trigger misses. Go checks whether a collection is due only
// when an allocation takes a new span, and the allocations the SDK makes with collection off
// (reading arguments, writing results) never check: a provider whose own code allocates little
// would see its heap grow call after call. So at every Enter the SDK counts what was allocated
// since the last collection and collects (a full, synchronous collection, at a point where the
// collector may call the host) once that exceeds what GOGC allows: the live heap times GOGC
// percent, at least 4 MiB (Go's own minimum heap). Reading the counts costs about 2 µs, so
// it is done every 8th call, and at every call the host passed a large value in (see
// arena.grew).
var (
	paceCalls   uint32
	paceSamples = []metrics.Sample{
		{Name: "/gc/cycles/total:gc-cycles"},
		{Name: "/gc/heap/allocs:bytes"},
		{Name: "/gc/heap/live:bytes"},
	}
	// The collection count and allocation total when pace last saw a collection.
	paceCycles, paceAllocs uint64
)

func pace() {
	paceCalls++
	if userPercent < 0 || (paceCalls%8 != 0 && !arena.grew) {
		return
	}
	arena.grew = false
	metrics.Read(paceSamples)
	cycles, allocs, live := paceSamples[0].Value.Uint64(), paceSamples[1].Value.Uint64(), paceSamples[2].Value.Uint64()
	if cycles != paceCycles {
		paceCycles, paceAllocs = cycles, allocs
		return
	}
	allowed := max(live*uint64(userPercent)/100, 4<<20)
	if allocs-paceAllocs > allowed {
		runtime.GC()
	}
}

// Leave turns automatic collection off again, waiting for a running cycle to finish, before
// control may pass to the host: before an import that returns data through cabi_realloc, and
// before an export returns.
func Leave() {
	if !inUser {
		return
	}
	inUser = false
	if p := debug.SetGCPercent(-1); p >= 0 {
		userPercent = p
	}
	userLimit = debug.SetMemoryLimit(-1)
	if userLimit != math.MaxInt64 {
		debug.SetMemoryLimit(math.MaxInt64)
	}
}

// HostCall runs f, an import whose results the host allocates in the arena: with the
// collector off, and the arena given back once f has copied the results out.
func HostCall(f func()) {
	was := inUser
	Leave()
	mark := Save()
	f()
	Restore(mark)
	if was {
		Enter()
	}
}
