package provider

import (
	"slices"

	cairn "cairn.invalid/sdk"
	"cairn.invalid/sdk/internal/wire"
)

// DiffInputs compares the top-level properties of the recorded inputs and the new ones.
//
// A key changed when it was added, removed or its value differs (Value.SameAs: secret and
// output markers are ignored, an unknown always differs; null counts as absent). Changed keys
// listed in replace (all of them when replace holds "*") are replace keys. Keys in ignore
// (top-level paths) are skipped; the engine applies nested ignore paths before Check. The
// result has a detailed diff: one input diff per changed key, old keys first, in order.
//
// Two tables the host sent that are identical and hold no unknown (an unchanged resource) are
// compared as blocks, without decoding.
func DiffInputs(oldInputs, inputs cairn.Properties, replace, ignore []string) DiffResult {
	d := differ{replace: replace, ignore: ignore}
	if a, ok := oldInputs.Received(); ok {
		if b, ok := inputs.Received(); ok && wire.SameKnown(a, b) {
			return d.finish()
		}
	}
	for key, a := range oldInputs.All() {
		b, _ := inputs.Get(key)
		d.key(key, a, b)
	}
	for key, b := range inputs.All() {
		if !oldInputs.Has(key) {
			d.key(key, cairn.Null(), b)
		}
	}
	return d.finish()
}

type differ struct {
	replace, ignore []string
	result          DiffResult
	detailed        []PropertyDiff
}

func (d *differ) key(key string, old, new cairn.Value) {
	if slices.Contains(d.ignore, key) {
		return
	}
	var kind DiffKind
	switch oldPresent, newPresent := old.Kind() != cairn.KindNull, new.Kind() != cairn.KindNull; {
	case !oldPresent && !newPresent:
		return
	case !oldPresent:
		kind = Add
	case !newPresent:
		kind = Delete
	case old.SameAs(new):
		return
	default:
		kind = Update
	}
	forces := slices.Contains(d.replace, "*") || slices.Contains(d.replace, key)
	d.result.ChangedKeys = append(d.result.ChangedKeys, key)
	if forces {
		d.result.ReplaceKeys = append(d.result.ReplaceKeys, key)
		kind = kind.WithReplace()
	}
	d.detailed = append(d.detailed, PropertyDiff{Path: key, Kind: kind, InputDiff: true})
}

func (d *differ) finish() DiffResult {
	d.result.Changes = DiffNone
	if len(d.result.ChangedKeys) > 0 {
		d.result.Changes = DiffSome
	}
	d.result.DetailedDiff = d.detailed
	if d.result.DetailedDiff == nil {
		d.result.DetailedDiff = []PropertyDiff{}
	}
	return d.result
}
