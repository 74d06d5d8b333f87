package program

import (
	"fmt"
	"slices"

	cairn "cairn.invalid/sdk"
)

// Output is a value known later (a resource's output), with the URNs of the resources it
// depends on, whether it is secret, and in a preview whether it is known at all.
//
// The rules are the type system's: a derived output depends on everything its sources
// depend on; deriving from an unknown output gives an unknown one without running the
// callback; deriving from a secret gives a secret (Unsecret removes the mark explicitly); and
// when a registration fails or a callback returns an error, everything derived fails with the
// same error and the program fails once its outstanding requests have finished.
//
// Outputs live on the component's one thread: callbacks run as soon as what they wait for is
// known, as the SDK's event loop takes the host's completions. The zero Output is a pending
// output that never resolves; make them with Val, Secret, Unknown or from resources.
type Output[T any] struct{ c *cell[T] }

// state of a resolved output.
type state uint8

const (
	known state = iota
	unknown
	failed
)

// resolved is an output's value and metadata, once known.
type resolved[T any] struct {
	state  state
	value  T
	err    string
	secret bool
	// deps is sorted and without duplicates.
	deps []string
}

type cell[T any] struct {
	ready   bool
	r       resolved[T]
	waiters []func(resolved[T])
}

func pending[T any]() (Output[T], func(resolved[T])) {
	c := &cell[T]{}
	return Output[T]{c}, c.resolve
}

func (c *cell[T]) resolve(r resolved[T]) {
	if c.ready {
		// Resolving twice would be an SDK bug; the first value stands.
		return
	}
	c.ready, c.r = true, r
	waiters := c.waiters
	c.waiters = nil
	for _, w := range waiters {
		w(r)
	}
}

func ready[T any](r resolved[T]) Output[T] { return Output[T]{&cell[T]{ready: true, r: r}} }

// Val is a known, plain output with no dependencies.
func Val[T any](v T) Output[T] { return ready(resolved[T]{value: v}) }

// Secret is a known secret output.
func Secret[T any](v T) Output[T] { return ready(resolved[T]{value: v, secret: true}) }

// Unknown is an output whose value is not known (as in a preview).
func Unknown[T any]() Output[T] { return ready(resolved[T]{state: unknown}) }

// Fail is an output that failed with err.
func Fail[T any](err error) Output[T] { return ready(resolved[T]{state: failed, err: err.Error()}) }

// zeroOutput is the failure of the zero Output.
const zeroOutput = "an Output that was never given a value (the zero Output) was used"

// then runs f once the output is resolved (at once when it is).
func (o Output[T]) then(f func(resolved[T])) {
	if o.c == nil {
		recordError(zeroOutput)
		f(resolved[T]{state: failed, err: zeroOutput})
		return
	}
	if o.c.ready {
		f(o.c.r)
		return
	}
	o.c.waiters = append(o.c.waiters, f)
}

// peek is the output's resolution, if it has one yet.
func (o Output[T]) peek() (resolved[T], bool) {
	if o.c == nil {
		return resolved[T]{state: failed, err: zeroOutput}, true
	}
	if !o.c.ready {
		return resolved[T]{}, false
	}
	return o.c.r, true
}

// TryGet is the value once known: ok with err nil when known, err when the output failed,
// ok false when it is unknown or not resolved yet. For tests and for reading settled results.
func (o Output[T]) TryGet() (value T, ok bool, err error) {
	r, resolved := o.peek()
	switch {
	case !resolved || r.state == unknown:
		return value, false, nil
	case r.state == failed:
		return value, false, fmt.Errorf("%s", r.err)
	}
	return r.value, true, nil
}

// IsUnknown reports whether the output is resolved and unknown.
func (o Output[T]) IsUnknown() bool {
	r, ok := o.peek()
	return ok && r.state == unknown
}

// IsSecret reports whether the output is resolved and secret.
func (o Output[T]) IsSecret() bool {
	r, ok := o.peek()
	return ok && r.secret
}

// Dependencies are the URNs of the resources the output depends on (as far as known yet).
func (o Output[T]) Dependencies() []string {
	r, _ := o.peek()
	return slices.Clone(r.deps)
}

// AsSecret is the same value, marked secret.
func (o Output[T]) AsSecret() Output[T] {
	return o.mapMeta(func(r *resolved[T]) { r.secret = true })
}

// Unsecret is the same value, no longer secret (revealing it explicitly).
func (o Output[T]) Unsecret() Output[T] {
	return o.mapMeta(func(r *resolved[T]) { r.secret = false })
}

// WithDependencies is the same value, depending on urns as well.
func (o Output[T]) WithDependencies(urns ...string) Output[T] {
	return o.mapMeta(func(r *resolved[T]) { r.deps = union(r.deps, urns) })
}

func (o Output[T]) mapMeta(f func(*resolved[T])) Output[T] {
	out, resolve := pending[T]()
	o.then(func(r resolved[T]) {
		f(&r)
		resolve(r)
	})
	return out
}

// Apply derives an output: f runs on the value once it is known, never on an unknown one.
func Apply[T, U any](o Output[T], f func(T) U) Output[U] {
	return ApplyErr(o, func(v T) (U, error) { return f(v), nil })
}

// ApplyErr is Apply with a callback that can fail: its error fails the derived output and the
// program. A panic in the callback is an error the same way.
func ApplyErr[T, U any](o Output[T], f func(T) (U, error)) Output[U] {
	out, resolve := pending[U]()
	o.then(func(r resolved[T]) {
		next := resolved[U]{state: r.state, err: r.err, secret: r.secret, deps: r.deps}
		if r.state == known {
			v, err := guard(func() (U, error) { return f(r.value) })
			if err != nil {
				next.state, next.err = failed, "apply failed: "+err.Error()
				recordError(next.err)
			} else {
				next.value = v
			}
		}
		resolve(next)
	})
	return out
}

// ApplyOutput derives an output from a callback that itself returns an output: the result is
// the inner output, with both levels' dependencies and secretness.
func ApplyOutput[T, U any](o Output[T], f func(T) Output[U]) Output[U] {
	return Flatten(Apply(o, f))
}

// Flatten is an output of an output as one output.
func Flatten[T any](o Output[Output[T]]) Output[T] {
	out, resolve := pending[T]()
	o.then(func(outer resolved[Output[T]]) {
		if outer.state != known {
			resolve(resolved[T]{state: outer.state, err: outer.err, secret: outer.secret, deps: outer.deps})
			return
		}
		outer.value.then(func(inner resolved[T]) {
			inner.secret = inner.secret || outer.secret
			inner.deps = union(inner.deps, outer.deps)
			resolve(inner)
		})
	})
	return out
}

// All joins outputs of one type: known when all are (in order), unknown when any is, secret
// when any is, depending on all of their dependencies; failed with the first failure.
func All[T any](outputs ...Output[T]) Output[[]T] {
	out, resolve := pending[[]T]()
	whenAll(outputs, func(rs []resolved[T]) {
		resolve(join(rs, func(values []T) []T { return values }))
	})
	return out
}

// AllMap joins a map of outputs into an output of a map (see All).
func AllMap[T any](outputs map[string]Output[T]) Output[map[string]T] {
	keys := make([]string, 0, len(outputs))
	for k := range outputs {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	list := make([]Output[T], len(keys))
	for i, k := range keys {
		list[i] = outputs[k]
	}
	return Apply(All(list...), func(values []T) map[string]T {
		m := make(map[string]T, len(values))
		for i, v := range values {
			m[keys[i]] = v
		}
		return m
	})
}

// Apply2 derives an output from two (joined as All joins).
func Apply2[A, B, U any](a Output[A], b Output[B], f func(A, B) U) Output[U] {
	joined := All(Any(a), Any(b))
	return Apply(joined, func(v []any) U { return f(v[0].(A), v[1].(B)) })
}

// Apply3 derives an output from three (joined as All joins).
func Apply3[A, B, C, U any](a Output[A], b Output[B], c Output[C], f func(A, B, C) U) Output[U] {
	joined := All(Any(a), Any(b), Any(c))
	return Apply(joined, func(v []any) U { return f(v[0].(A), v[1].(B), v[2].(C)) })
}

// Any is the output with its value as an `any`, for joining outputs of different types.
func Any[T any](o Output[T]) Output[any] {
	return Apply(o, func(v T) any { return v })
}

func join[T, U any](rs []resolved[T], finish func([]T) U) resolved[U] {
	var out resolved[U]
	values := make([]T, 0, len(rs))
	firstFailure := ""
	for _, r := range rs {
		out.secret = out.secret || r.secret
		out.deps = union(out.deps, r.deps)
		switch r.state {
		case known:
			values = append(values, r.value)
		case unknown:
			if out.state != failed {
				out.state = unknown
			}
		case failed:
			if firstFailure == "" {
				firstFailure = r.err
			}
			out.state = failed
		}
	}
	switch out.state {
	case failed:
		out.err = firstFailure
	case known:
		out.value = finish(values)
	}
	return out
}

// whenAll calls f with every output's resolution, in order, once all are resolved (at once
// for none).
func whenAll[T any](outputs []Output[T], f func([]resolved[T])) {
	rs := make([]resolved[T], len(outputs))
	left := len(outputs)
	if left == 0 {
		f(rs)
		return
	}
	for i, o := range outputs {
		o.then(func(r resolved[T]) {
			rs[i] = r
			left--
			if left == 0 {
				f(rs)
			}
		})
	}
}

// union is the sorted union of two sorted URN lists.
func union(a, b []string) []string {
	if len(b) == 0 {
		return a
	}
	if len(a) == 0 {
		return b
	}
	out := append(slices.Clone(a), b...)
	slices.Sort(out)
	return slices.Compact(out)
}

// guard runs a user callback, turning a panic into an error.
func guard[U any](f func() (U, error)) (v U, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	return f()
}

// Input is what resource arguments take: a plain value (anything cairn.ValueOf takes) or an
// Output of any type (Output[T] implements this interface).
type Input interface{}

// valued is implemented by every Output[T]: the output as a Value output, for arguments.
type valued interface {
	valueOutput() Output[cairn.Value]
}

func (o Output[T]) valueOutput() Output[cairn.Value] {
	return ApplyErr(o, func(v T) (cairn.Value, error) { return toValue(v) })
}

// toValue converts an output's value for the engine (a value of a type cairn.ValueOf does not
// take fails the output rather than the program's thread).
func toValue(v any) (value cairn.Value, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	return cairn.ValueOf(v), nil
}

// ToValue is an output or plain value as a Value output (for untyped arguments and
// exports).
func ToValue(input Input) Output[cairn.Value] {
	switch v := input.(type) {
	case Output[cairn.Value]:
		return v
	case valued:
		return v.valueOutput()
	}
	value, err := toValue(input)
	if err != nil {
		return Fail[cairn.Value](err)
	}
	return Val(value)
}

// Get is lifted property access: the value at key of an object output (null when absent). A
// secret or unknown property makes the result secret or unknown.
func Get(o Output[cairn.Value], key string) Output[cairn.Value] {
	return lift(Apply(lift(o), func(v cairn.Value) cairn.Value {
		if m, ok := v.AsObject(); ok {
			w, _ := m.Get(key)
			return w
		}
		return cairn.Null()
	}))
}

// Index is lifted element access of an array output (null when out of range).
func Index(o Output[cairn.Value], i int) Output[cairn.Value] {
	return lift(Apply(lift(o), func(v cairn.Value) cairn.Value {
		if items, ok := v.AsArray(); ok && i >= 0 && i < len(items) {
			return items[i]
		}
		return cairn.Null()
	}))
}

// lift moves secret and unknown markers at the top of a value onto the output itself.
func lift(o Output[cairn.Value]) Output[cairn.Value] {
	return o.mapMeta(func(r *resolved[cairn.Value]) {
		if r.state != known {
			return
		}
		v := r.value
		for {
			if inner, ok := v.SecretInner(); ok {
				r.secret = true
				v = inner
				continue
			}
			if out, ok := v.AsOutput(); ok {
				r.secret = r.secret || out.Secret
				r.deps = union(r.deps, sortedSet(out.Dependencies))
				if out.Value == nil {
					r.state = unknown
					return
				}
				v = *out.Value
				continue
			}
			break
		}
		if v.Kind() == cairn.KindUnknown {
			r.state = unknown
			return
		}
		r.value = v
	})
}

func sortedSet(urns []string) []string {
	out := slices.Clone(urns)
	slices.Sort(out)
	return slices.Compact(out)
}

// As converts a Value output to a typed one: string, bool, float64, int64, int,
// *cairn.PropertyMap, []cairn.Value, cairn.Asset, cairn.Archive or cairn.Value. A value of
// another type fails it.
func As[T any](o Output[cairn.Value]) Output[T] {
	return ApplyErr(lift(o), func(v cairn.Value) (T, error) { return fromValue[T](v) })
}

func fromValue[T any](v cairn.Value) (T, error) {
	var zero T
	var out any
	ok := false
	switch any(zero).(type) {
	case cairn.Value:
		out, ok = v, true
	case string:
		out, ok = v.AsString()
	case bool:
		out, ok = v.AsBool()
	case float64:
		out, ok = v.AsNumber()
	case int64:
		out, ok = v.AsInt()
	case int:
		var n int64
		n, ok = v.AsInt()
		out = int(n)
	case *cairn.PropertyMap:
		out, ok = v.AsObject()
	case []cairn.Value:
		out, ok = v.AsArray()
	case cairn.Asset:
		var a *cairn.Asset
		if a, ok = v.AsAsset(); ok {
			out = *a
		}
	case cairn.Archive:
		var a *cairn.Archive
		if a, ok = v.AsArchive(); ok {
			out = *a
		}
	default:
		return zero, fmt.Errorf("cannot read a %s as a %T", v.Kind(), zero)
	}
	if !ok {
		return zero, fmt.Errorf("expected a %T, found a %s", zero, v.Reveal().Kind())
	}
	return out.(T), nil
}
