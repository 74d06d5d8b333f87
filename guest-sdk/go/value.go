// Package cairn is Cairn's guest SDK for Go: providers (package provider) and programs
// (package program) as WebAssembly components, built by `cairn up` from a Go module with the
// machine's Go (GOOS=wasip1, a reactor) and the WASI preview1 adapter.
//
// This package holds what both share: Value and PropertyMap (every kind of value the engine
// has: null, bool, number, string, array, object, asset, archive, resource reference, secret,
// unknown and output), typed readers with property paths, Checker for validating inputs,
// logging through the host, URNs, and the node-table encoding values cross the component
// boundary in (Table, Encode, Decode).
package cairn

import (
	"fmt"
	"math"
	"slices"
	"strconv"
)

// Kind is what a Value is.
type Kind uint8

// The kinds of values.
const (
	KindNull Kind = iota
	KindBool
	KindNumber
	KindString
	KindArray
	KindObject
	KindAsset
	KindArchive
	KindResourceReference
	KindSecret
	KindUnknown
	KindOutput
)

// String names the kind as messages do ("expected a string, found a number").
func (k Kind) String() string {
	switch k {
	case KindNull:
		return "null"
	case KindBool:
		return "bool"
	case KindNumber:
		return "number"
	case KindString:
		return "string"
	case KindArray:
		return "array"
	case KindObject:
		return "object"
	case KindAsset:
		return "asset"
	case KindArchive:
		return "archive"
	case KindResourceReference:
		return "resource reference"
	case KindSecret:
		return "secret"
	case KindUnknown:
		return "unknown"
	case KindOutput:
		return "output"
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// Value is a value of the type system. The zero Value is null. Values are immutable: the
// constructors copy nothing, so do not change a slice or map after making a Value of it.
//
// Equal is deep and structural (a secret is not equal to what it protects; two unknowns are
// equal); SameAs compares contents, ignoring secret and output markers.
type Value struct {
	kind Kind
	num  float64 // the number; 1 for true
	str  string
	// []Value (array), *PropertyMap (object), *Value (secret), *Asset, *Archive,
	// *ResourceReference or *OutputValue.
	ref any
}

// Null is the null value.
func Null() Value { return Value{} }

// Bool is a boolean value.
func Bool(b bool) Value {
	v := Value{kind: KindBool}
	if b {
		v.num = 1
	}
	return v
}

// Number is a number (every number is an IEEE-754 double, integers included).
func Number(n float64) Value { return Value{kind: KindNumber, num: n} }

// Int is an integer as a number; beyond 2^53 it loses precision, as in the type system.
func Int(n int64) Value { return Number(float64(n)) }

// String is a string value.
func String(s string) Value { return Value{kind: KindString, str: s} }

// Array is an array of values.
func Array(items ...Value) Value {
	if items == nil {
		items = []Value{}
	}
	return Value{kind: KindArray, ref: items}
}

// Object is an object value; a nil map is an empty object.
func Object(m *PropertyMap) Value {
	if m == nil {
		m = NewPropertyMap()
	}
	return Value{kind: KindObject, ref: m}
}

// Secret marks a value as sensitive: never shown, encrypted in the state. Anything derived
// from it should stay secret.
func Secret(v any) Value {
	inner := ValueOf(v)
	return Value{kind: KindSecret, ref: &inner}
}

// Unknown is a value not known yet: in a preview, another resource's output that only its
// creation tells.
func Unknown() Value { return Value{kind: KindUnknown} }

// AssetValue is an asset as a value.
func AssetValue(a Asset) Value { return Value{kind: KindAsset, ref: &a} }

// ArchiveValue is an archive as a value.
func ArchiveValue(a Archive) Value { return Value{kind: KindArchive, ref: &a} }

// Reference is a resource reference as a value.
func Reference(r ResourceReference) Value { return Value{kind: KindResourceReference, ref: &r} }

// Output is an output value (a value with its dependencies and secretness; unknown when
// o.Value is nil).
func Output(o OutputValue) Value { return Value{kind: KindOutput, ref: &o} }

// ValueOf makes a Value of a Go value: nil; bool; any integer or float type; string; Value;
// *PropertyMap; Asset, Archive, ResourceReference, OutputValue (or pointers to them); a slice
// or array of any of these ([]any, []string, []Value, …); a map[string] of any of these (keys
// sorted, for a stable order). It panics on anything else, like a failed type assertion: a
// program error, not input.
func ValueOf(x any) Value {
	switch v := x.(type) {
	case nil:
		return Null()
	case Value:
		return v
	case *Value:
		if v == nil {
			return Null()
		}
		return *v
	case bool:
		return Bool(v)
	case int:
		return Int(int64(v))
	case int8:
		return Int(int64(v))
	case int16:
		return Int(int64(v))
	case int32:
		return Int(int64(v))
	case int64:
		return Int(v)
	case uint:
		return Number(float64(v))
	case uint8:
		return Number(float64(v))
	case uint16:
		return Number(float64(v))
	case uint32:
		return Number(float64(v))
	case uint64:
		return Number(float64(v))
	case float32:
		return Number(float64(v))
	case float64:
		return Number(v)
	case string:
		return String(v)
	case *PropertyMap:
		return Object(v)
	case Asset:
		return AssetValue(v)
	case *Asset:
		return AssetValue(*v)
	case Archive:
		return ArchiveValue(v)
	case *Archive:
		return ArchiveValue(*v)
	case ResourceReference:
		return Reference(v)
	case *ResourceReference:
		return Reference(*v)
	case OutputValue:
		return Output(v)
	case *OutputValue:
		return Output(*v)
	case []Value:
		return Array(v...)
	case []any:
		return arrayOf(v)
	case []string:
		return arrayOf(v)
	case []float64:
		return arrayOf(v)
	case []int:
		return arrayOf(v)
	case []int64:
		return arrayOf(v)
	case []bool:
		return arrayOf(v)
	case map[string]any:
		return mapOf(v)
	case map[string]string:
		return mapOf(v)
	case map[string]Value:
		return mapOf(v)
	case map[string]float64:
		return mapOf(v)
	case map[string]int:
		return mapOf(v)
	case map[string]bool:
		return mapOf(v)
	}
	panic(fmt.Sprintf("cairn.ValueOf: %T is not a property value", x))
}

func arrayOf[T any](items []T) Value {
	out := make([]Value, len(items))
	for i, item := range items {
		out[i] = ValueOf(item)
	}
	return Array(out...)
}

func mapOf[T any](m map[string]T) Value {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	out := NewPropertyMap()
	for _, k := range keys {
		out.Set(k, ValueOf(m[k]))
	}
	return Object(out)
}

// Kind is what the value is (at the top: a secret string is KindSecret; see Reveal).
func (v Value) Kind() Kind { return v.kind }

// Reveal is the value with secret and known-output wrappers removed at the top; an unknown
// output reveals as Unknown.
func (v Value) Reveal() Value {
	for {
		switch v.kind {
		case KindSecret:
			v = *v.ref.(*Value)
		case KindOutput:
			o := v.ref.(*OutputValue)
			if o.Value == nil {
				return Unknown()
			}
			v = *o.Value
		default:
			return v
		}
	}
}

// IsNull reports whether the value (seen through secrets and outputs) is null.
func (v Value) IsNull() bool { return v.Reveal().kind == KindNull }

// IsUnknown reports whether the value (seen through secrets and outputs) is unknown.
func (v Value) IsUnknown() bool { return v.Reveal().kind == KindUnknown }

// IsSecret reports whether the value is a secret or a secret output at the top.
func (v Value) IsSecret() bool {
	switch v.kind {
	case KindSecret:
		return true
	case KindOutput:
		o := v.ref.(*OutputValue)
		return o.Secret || (o.Value != nil && o.Value.IsSecret())
	}
	return false
}

// AsBool is the boolean, seen through secrets and outputs.
func (v Value) AsBool() (bool, bool) {
	r := v.Reveal()
	return r.num != 0, r.kind == KindBool
}

// AsNumber is the number, seen through secrets and outputs.
func (v Value) AsNumber() (float64, bool) {
	r := v.Reveal()
	return r.num, r.kind == KindNumber
}

// AsInt is the number when it is an integer that fits an int64 exactly.
func (v Value) AsInt() (int64, bool) {
	n, ok := v.AsNumber()
	// -2^63 and 2^63 are exact doubles; the range is half-open like int64's.
	const limit = 9223372036854775808.0
	if !ok || n != math.Trunc(n) || n < -limit || n >= limit {
		return 0, false
	}
	return int64(n), true
}

// AsString is the string, seen through secrets and outputs.
func (v Value) AsString() (string, bool) {
	r := v.Reveal()
	return r.str, r.kind == KindString
}

// AsArray is the array's elements, seen through secrets and outputs (do not change them).
func (v Value) AsArray() ([]Value, bool) {
	r := v.Reveal()
	if r.kind != KindArray {
		return nil, false
	}
	return r.ref.([]Value), true
}

// AsObject is the object's properties, seen through secrets and outputs.
func (v Value) AsObject() (*PropertyMap, bool) {
	r := v.Reveal()
	if r.kind != KindObject {
		return nil, false
	}
	return r.ref.(*PropertyMap), true
}

// AsAsset is the asset, seen through secrets and outputs.
func (v Value) AsAsset() (*Asset, bool) {
	a, ok := v.Reveal().ref.(*Asset)
	return a, ok
}

// AsArchive is the archive, seen through secrets and outputs.
func (v Value) AsArchive() (*Archive, bool) {
	a, ok := v.Reveal().ref.(*Archive)
	return a, ok
}

// AsReference is the resource reference, seen through secrets and outputs.
func (v Value) AsReference() (*ResourceReference, bool) {
	r, ok := v.Reveal().ref.(*ResourceReference)
	return r, ok
}

// SecretInner is what a secret protects (ok false when v is not a secret).
func (v Value) SecretInner() (Value, bool) {
	if v.kind != KindSecret {
		return Value{}, false
	}
	return *v.ref.(*Value), true
}

// AsOutput is the output value (ok false when v is not an output).
func (v Value) AsOutput() (*OutputValue, bool) {
	o, ok := v.ref.(*OutputValue)
	return o, ok && v.kind == KindOutput
}

// Any reports whether pred holds for the value or any value nested in it (pre-order).
func (v Value) Any(pred func(Value) bool) bool {
	if pred(v) {
		return true
	}
	switch v.kind {
	case KindArray:
		for _, item := range v.ref.([]Value) {
			if item.Any(pred) {
				return true
			}
		}
	case KindObject:
		m := v.ref.(*PropertyMap)
		for i := range m.values {
			if m.values[i].Any(pred) {
				return true
			}
		}
	case KindSecret:
		return v.ref.(*Value).Any(pred)
	case KindOutput:
		if o := v.ref.(*OutputValue); o.Value != nil {
			return o.Value.Any(pred)
		}
	}
	return false
}

// ContainsUnknowns reports whether the value is, or contains, an unknown.
func (v Value) ContainsUnknowns() bool {
	return v.Any(func(x Value) bool {
		switch x.kind {
		case KindUnknown:
			return true
		case KindOutput:
			return x.ref.(*OutputValue).Value == nil
		case KindResourceReference:
			r := x.ref.(*ResourceReference)
			return r.ID != nil && r.ID.ContainsUnknowns()
		}
		return false
	})
}

// ContainsSecrets reports whether the value is, or contains, a secret.
func (v Value) ContainsSecrets() bool {
	return v.Any(func(x Value) bool {
		switch x.kind {
		case KindSecret:
			return true
		case KindOutput:
			return x.ref.(*OutputValue).Secret
		}
		return false
	})
}

// Unsecret is the value with every secret marker removed, at any depth (outputs lose their
// secret flag), for computing with the contents.
func (v Value) Unsecret() Value {
	switch v.kind {
	case KindSecret:
		return v.ref.(*Value).Unsecret()
	case KindArray:
		items := v.ref.([]Value)
		out := make([]Value, len(items))
		for i, item := range items {
			out[i] = item.Unsecret()
		}
		return Array(out...)
	case KindObject:
		m := v.ref.(*PropertyMap)
		out := &PropertyMap{keys: slices.Clone(m.keys), values: make([]Value, len(m.values))}
		for i := range m.values {
			out.values[i] = m.values[i].Unsecret()
		}
		return Object(out)
	case KindOutput:
		o := *v.ref.(*OutputValue)
		o.Secret = false
		if o.Value != nil {
			inner := o.Value.Unsecret()
			o.Value = &inner
		}
		return Output(o)
	}
	return v
}

// Equal is deep, structural equality: Secret(x) is not x, two unknowns are equal, numbers
// compare as floats (NaN is equal to NaN, so a value equals itself).
func (v Value) Equal(w Value) bool {
	if v.kind != w.kind {
		return false
	}
	switch v.kind {
	case KindNull, KindUnknown:
		return true
	case KindBool:
		return v.num == w.num
	case KindNumber:
		return v.num == w.num || (math.IsNaN(v.num) && math.IsNaN(w.num))
	case KindString:
		return v.str == w.str
	case KindArray:
		a, b := v.ref.([]Value), w.ref.([]Value)
		return slices.EqualFunc(a, b, Value.Equal)
	case KindObject:
		return v.ref.(*PropertyMap).Equal(w.ref.(*PropertyMap))
	case KindSecret:
		return v.ref.(*Value).Equal(*w.ref.(*Value))
	case KindAsset:
		return v.ref.(*Asset).Equal(w.ref.(*Asset))
	case KindArchive:
		return v.ref.(*Archive).Equal(w.ref.(*Archive))
	case KindResourceReference:
		return v.ref.(*ResourceReference).Equal(w.ref.(*ResourceReference))
	case KindOutput:
		return v.ref.(*OutputValue).Equal(w.ref.(*OutputValue))
	}
	return false
}

// SameAs compares contents, ignoring secret wrappers and output metadata at every depth. An
// unknown is never the same as anything, not even another unknown: its value may turn out to
// differ.
func (v Value) SameAs(w Value) bool {
	a, b := v.Reveal(), w.Reveal()
	if a.kind == KindUnknown || b.kind == KindUnknown {
		return false
	}
	switch {
	case a.kind == KindArray && b.kind == KindArray:
		x, y := a.ref.([]Value), b.ref.([]Value)
		return slices.EqualFunc(x, y, Value.SameAs)
	case a.kind == KindObject && b.kind == KindObject:
		x, y := a.ref.(*PropertyMap), b.ref.(*PropertyMap)
		if x.Len() != y.Len() {
			return false
		}
		for i, k := range x.keys {
			other, ok := y.Get(k)
			if !ok || !x.values[i].SameAs(other) {
				return false
			}
		}
		return true
	}
	return a.Equal(b)
}

// String shows the value for debugging; secrets show as [secret].
func (v Value) String() string {
	switch v.kind {
	case KindNull:
		return "null"
	case KindBool:
		return strconv.FormatBool(v.num != 0)
	case KindNumber:
		return strconv.FormatFloat(v.num, 'g', -1, 64)
	case KindString:
		return strconv.Quote(v.str)
	case KindArray:
		s := "["
		for i, item := range v.ref.([]Value) {
			if i > 0 {
				s += ", "
			}
			s += item.String()
		}
		return s + "]"
	case KindObject:
		return v.ref.(*PropertyMap).String()
	case KindSecret:
		return "[secret]"
	case KindUnknown:
		return "[unknown]"
	case KindAsset:
		return "asset"
	case KindArchive:
		return "archive"
	case KindResourceReference:
		return "reference(" + v.ref.(*ResourceReference).URN + ")"
	case KindOutput:
		o := v.ref.(*OutputValue)
		switch {
		case o.Secret:
			return "output([secret])"
		case o.Value == nil:
			return "output([unknown])"
		}
		return "output(" + o.Value.String() + ")"
	}
	return v.kind.String()
}

// describe says what a value is, for messages: "a string", "an object", "the number 1.5".
func describe(v Value) string {
	r := v.Reveal()
	if r.kind == KindNumber {
		if r.num == math.Trunc(r.num) && math.Abs(r.num) < 1e16 {
			return "the number " + strconv.FormatInt(int64(r.num), 10)
		}
		return "the number " + strconv.FormatFloat(r.num, 'g', -1, 64)
	}
	name := r.kind.String()
	switch name[0] {
	case 'a', 'e', 'i', 'o', 'u':
		return "an " + name
	}
	return "a " + name
}
