//go:build wasip1

package abi

import (
	"slices"
	"unsafe"
)

// The arena the host allocates in: byte chunks the SDK keeps referenced (so the collector,
// which never moves objects, keeps them where they are), used from the start of the first one
// by a bump pointer. A large request (a big value's strings, say) gets a chunk of its own
// instead, which reading the request can take over as the Go value it becomes (Take): a big
// value then costs its size once, not twice.
type chunk struct {
	buf  []byte
	base uintptr
	// seq orders large chunks, so Restore can drop those allocated after its mark.
	seq uint64
}

var arena struct {
	chunks []chunk
	cur    int
	off    uintptr
	// The dedicated chunks of large requests in the current call, not taken yet.
	large []chunk
	seq   uint64
	// grew: the arena took memory from Go's heap since the collector's pacing last looked.
	grew bool
	// The current call has returned: the next allocation (the host lowering the next call's
	// arguments) may reuse everything.
	ended bool
}

const (
	// The first chunk; later ones double, up to what the arena keeps.
	firstChunk = 64 << 10
	// What the arena keeps across calls.
	keepBytes = 1 << 20
	// Requests from this size on get a chunk of their own.
	largeRequest = 32 << 10
)

//go:wasmexport cabi_realloc
func cabiRealloc(old uintptr, oldLen, align, newLen uint32) uintptr {
	if arena.ended {
		reset()
	}
	p := Alloc(uintptr(newLen), uintptr(align))
	if old != 0 && oldLen != 0 && newLen != 0 {
		n := min(oldLen, newLen)
		copy(unsafe.Slice((*byte)(ptr(p)), n), unsafe.Slice((*byte)(ptr(old)), n))
	}
	return p
}

// Alloc returns size bytes at the given alignment (a power of two) in the arena, valid until
// the current call ends (or Restore releases them). Memory from a new chunk is zeroed;
// reused memory is not.
func Alloc(size, align uintptr) uintptr {
	if align == 0 {
		align = 1
	}
	if size == 0 {
		// Any aligned, non-null address: nothing is read or written there.
		return align
	}
	if size >= largeRequest {
		c := newChunk(size + align)
		arena.seq++
		c.seq = arena.seq
		arena.large = append(arena.large, c)
		return alignUp(c.base, align)
	}
	for arena.cur < len(arena.chunks) {
		c := &arena.chunks[arena.cur]
		p := alignUp(c.base+arena.off, align)
		if p+size <= c.base+uintptr(len(c.buf)) {
			arena.off = p + size - c.base
			return p
		}
		arena.cur++
		arena.off = 0
	}
	n := uintptr(firstChunk)
	if k := len(arena.chunks); k > 0 {
		n = min(2*uintptr(len(arena.chunks[k-1].buf)), keepBytes/2)
	}
	c := newChunk(n)
	arena.chunks = append(arena.chunks, c)
	arena.cur = len(arena.chunks) - 1
	p := alignUp(c.base, align)
	arena.off = p + size - c.base
	return p
}

// newChunk takes n bytes from Go's heap. Collection is off whenever the host can call in, so
// this allocation neither starts nor assists a collection (see the package documentation).
func newChunk(n uintptr) chunk {
	arena.grew = true
	buf := make([]byte, n)
	return chunk{buf: buf, base: uintptr(unsafe.Pointer(unsafe.SliceData(buf)))}
}

// Take returns the n bytes at p as a slice the caller owns when they are a large request's
// chunk (the arena forgets it; no copy), else nil.
func Take(p uintptr, n uint32) []byte {
	for i, c := range arena.large {
		if p >= c.base && p+uintptr(n) <= c.base+uintptr(len(c.buf)) {
			// slices.Delete zeroes the slot it frees: the chunk must not stay referenced.
			arena.large = slices.Delete(arena.large, i, i+1)
			off := p - c.base
			return c.buf[off : off+uintptr(n) : off+uintptr(n)]
		}
	}
	return nil
}

// Mark is a position in the arena.
type Mark struct {
	cur int
	off uintptr
	seq uint64
}

// Save returns the current position, for Restore.
func Save() Mark { return Mark{arena.cur, arena.off, arena.seq} }

// Restore releases everything allocated since m (an import's results, once copied out).
func Restore(m Mark) {
	arena.cur, arena.off = m.cur, m.off
	kept := arena.large[:0]
	for _, c := range arena.large {
		if c.seq <= m.seq {
			kept = append(kept, c)
		}
	}
	clear(arena.large[len(kept):])
	arena.large = kept
}

// BeginCall starts an export call: when the host allocated nothing for its arguments, the
// previous call's memory is free now.
func BeginCall() {
	if arena.ended {
		reset()
	}
}

// EndCall marks the call as returned: its results stay until the host has read them, which
// it has by the next call's first allocation.
func EndCall() { arena.ended = true }

func reset() {
	arena.ended = false
	arena.cur, arena.off = 0, 0
	clear(arena.large)
	arena.large = arena.large[:0]
	escape.s, escape.b, escape.u = "", nil, nil
	kept := uintptr(0)
	for i, c := range arena.chunks {
		kept += uintptr(len(c.buf))
		if i > 0 && kept > keepBytes {
			for j := i; j < len(arena.chunks); j++ {
				arena.chunks[j] = chunk{}
			}
			arena.chunks = arena.chunks[:i]
			break
		}
	}
}

// ArenaBytes is the size of the chunks the arena holds (for tests of memory use).
func ArenaBytes() int {
	total := 0
	for _, c := range arena.chunks {
		total += len(c.buf)
	}
	for _, c := range arena.large {
		total += len(c.buf)
	}
	return total
}

func alignUp(p, align uintptr) uintptr { return (p + align - 1) &^ (align - 1) }

// ptr turns a linear-memory address into a pointer. Addresses come from the host or from the
// arena; both are in the component's one memory.
func ptr(p uintptr) unsafe.Pointer { return unsafe.Add(unsafe.Pointer(nil), p) }

// The adapter region: the WASI adapter's state and stack (64 KiB each). The adapter allocates
// them on its first WASI call, which Go's runtime makes while it starts, before any Go
// function may run; so the build gives the adapter an allocator (`cabi_realloc_adapter`, a
// few wasm instructions) over this array, found by the marker it starts with. The allocator
// keeps its offset in the 4 bytes after the marker and allocates from AdapterHeader on.
//
// Initialised data (the marker) puts the array in the module's data; the linker omits its
// zeroes from the file, so it costs memory, not size.
const (
	AdapterMarker     = "cairn:wasi-adapter-region:7f3a9c"
	AdapterHeader     = 64
	AdapterRegionSize = 192 << 10
)

var adapterRegion = [AdapterRegionSize]byte{
	'c', 'a', 'i', 'r', 'n', ':', 'w', 'a', 's', 'i', '-', 'a', 'd', 'a', 'p', 't',
	'e', 'r', '-', 'r', 'e', 'g', 'i', 'o', 'n', ':', '7', 'f', '3', 'a', '9', 'c',
}

// keepRegion references the region from code that always runs, so the linker keeps it.
var keepRegion *[AdapterRegionSize]byte

func init() { keepRegion = &adapterRegion }

// AdapterRegionUsed is how much of its region the adapter has taken (for tests: the region
// must hold the adapter's state and stack).
func AdapterRegionUsed() int {
	return int(*(*uint32)(unsafe.Pointer(&keepRegion[len(AdapterMarker)])))
}
