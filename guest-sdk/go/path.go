package cairn

import (
	"fmt"
	"strconv"
	"strings"
)

// Found says what a property path led to.
type Found uint8

const (
	// Missing: nothing there, or null.
	Missing Found = iota
	// NotKnown: the value, or something on the way to it, is not known yet.
	NotKnown
	// Present: a value (possibly a secret or an output; see Value.Reveal).
	Present
)

// PathError is a malformed property path.
type PathError struct {
	Path   string
	Reason string
}

func (e *PathError) Error() string {
	return fmt.Sprintf("invalid property path %q: %s", e.Path, e.Reason)
}

// segment is one step of a path: a key, or an index when key is empty and index >= 0.
type segment struct {
	key   string
	index int
}

// parsePath splits `a.b[0]["c.d"]` into segments.
func parsePath(path string) ([]segment, error) {
	bad := func(reason string) ([]segment, error) { return nil, &PathError{path, reason} }
	var segs []segment
	expectKey := true
	for i := 0; i < len(path); {
		switch c := path[i]; {
		case c == '[':
			closing := strings.IndexByte(path[i:], ']')
			if closing < 0 {
				return bad("unclosed '['")
			}
			inner := path[i+1 : i+closing]
			if strings.HasPrefix(inner, `"`) {
				if len(inner) < 2 || !strings.HasSuffix(inner, `"`) {
					return bad("unterminated quoted key")
				}
				segs = append(segs, segment{key: inner[1 : len(inner)-1], index: -1})
			} else {
				n, err := strconv.Atoi(inner)
				if err != nil || n < 0 {
					return bad("index is not a number")
				}
				segs = append(segs, segment{index: n})
			}
			i += closing + 1
			expectKey = false
		case c == '.' && !expectKey:
			i++
			expectKey = true
		case expectKey:
			end := strings.IndexAny(path[i:], ".[")
			if end < 0 {
				end = len(path) - i
			}
			if end == 0 {
				return bad("empty key")
			}
			segs = append(segs, segment{key: path[i : i+end], index: -1})
			i += end
			expectKey = false
		default:
			return bad("expected '.' or '['")
		}
	}
	if len(segs) == 0 || (expectKey && strings.HasSuffix(path, ".")) {
		return bad("empty key")
	}
	return segs, nil
}

// LookupPath looks a property path (`a.b`, `list[0]`, `tags["x.y"]`) up in the map, seeing
// through secrets and outputs on the way. The path starts with a key.
func (m *PropertyMap) LookupPath(path string) (Value, Found, error) {
	segs, err := parsePath(path)
	if err != nil {
		return Value{}, Missing, err
	}
	if segs[0].index >= 0 {
		return Value{}, Missing, &PathError{path, "a path into an object must start with a key"}
	}
	first, ok := m.Get(segs[0].key)
	if !ok {
		return Value{}, Missing, nil
	}
	v, found := lookup(first, segs[1:])
	return v, found, nil
}

// Lookup looks a property path up in the value (see PropertyMap.LookupPath).
func (v Value) Lookup(path string) (Value, Found, error) {
	segs, err := parsePath(path)
	if err != nil {
		return Value{}, Missing, err
	}
	w, found := lookup(v, segs)
	return w, found, nil
}

func lookup(current Value, segs []segment) (Value, Found) {
	for _, s := range segs {
		r := current.Reveal()
		var next Value
		ok := false
		switch {
		case r.kind == KindUnknown:
			return Value{}, NotKnown
		case r.kind == KindObject && s.index < 0:
			next, ok = r.ref.(*PropertyMap).Get(s.key)
		case r.kind == KindArray && s.index >= 0:
			items := r.ref.([]Value)
			if s.index < len(items) {
				next, ok = items[s.index], true
			}
		}
		if !ok {
			return Value{}, Missing
		}
		current = next
	}
	switch current.Reveal().kind {
	case KindNull:
		return Value{}, Missing
	case KindUnknown:
		return Value{}, NotKnown
	}
	return current, Present
}

// Lookup reads a path leniently: a malformed path reads as missing.
func (m *PropertyMap) Lookup(path string) (Value, Found) {
	v, found, err := m.LookupPath(path)
	if err != nil {
		return Value{}, Missing
	}
	return v, found
}

// IsUnknown reports whether the property at path (or something on the way to it) is not
// known yet.
func (m *PropertyMap) IsUnknown(path string) bool {
	_, found := m.Lookup(path)
	return found == NotKnown
}

// Value is the property at path when it is present (not absent, null or unknown).
func (m *PropertyMap) Value(path string) (Value, bool) {
	v, found := m.Lookup(path)
	return v, found == Present
}

// GetString is the string at path; false when absent, null, unknown or not a string. Like
// every reader here, it sees through secrets and outputs.
func (m *PropertyMap) GetString(path string) (string, bool) {
	v, ok := m.Value(path)
	if !ok {
		return "", false
	}
	return v.AsString()
}

// GetNumber is the number at path.
func (m *PropertyMap) GetNumber(path string) (float64, bool) {
	v, ok := m.Value(path)
	if !ok {
		return 0, false
	}
	return v.AsNumber()
}

// GetInt is the number at path when it is an integer.
func (m *PropertyMap) GetInt(path string) (int64, bool) {
	v, ok := m.Value(path)
	if !ok {
		return 0, false
	}
	return v.AsInt()
}

// GetBool is the boolean at path.
func (m *PropertyMap) GetBool(path string) (bool, bool) {
	v, ok := m.Value(path)
	if !ok {
		return false, false
	}
	return v.AsBool()
}

// GetArray is the array at path.
func (m *PropertyMap) GetArray(path string) ([]Value, bool) {
	v, ok := m.Value(path)
	if !ok {
		return nil, false
	}
	return v.AsArray()
}

// GetObject is the object at path.
func (m *PropertyMap) GetObject(path string) (*PropertyMap, bool) {
	v, ok := m.Value(path)
	if !ok {
		return nil, false
	}
	return v.AsObject()
}

// require reads path strictly: a *CheckFailure naming the property says what is wrong.
func require[T any](m *PropertyMap, path, expected string, read func(Value) (T, bool)) (T, error) {
	var zero T
	v, found := m.Lookup(path)
	switch found {
	case Missing:
		return zero, &CheckFailure{Property: path, Reason: "missing required property"}
	case NotKnown:
		return zero, &CheckFailure{Property: path, Reason: "is not known yet"}
	}
	out, ok := read(v)
	if !ok {
		return zero, &CheckFailure{Property: path, Reason: "expected " + expected + ", found " + describe(v)}
	}
	return out, nil
}

// RequireString is the string at path, or a *CheckFailure: "name: missing required
// property", "name: is not known yet", "name: expected a string, found the number 3".
func (m *PropertyMap) RequireString(path string) (string, error) {
	return require(m, path, "a string", Value.AsString)
}

// RequireNumber is the number at path, or a *CheckFailure.
func (m *PropertyMap) RequireNumber(path string) (float64, error) {
	return require(m, path, "a number", Value.AsNumber)
}

// RequireInt is the integer at path, or a *CheckFailure.
func (m *PropertyMap) RequireInt(path string) (int64, error) {
	return require(m, path, "an integer", Value.AsInt)
}

// RequireBool is the boolean at path, or a *CheckFailure.
func (m *PropertyMap) RequireBool(path string) (bool, error) {
	return require(m, path, "a boolean", Value.AsBool)
}

// RequireObject is the object at path, or a *CheckFailure.
func (m *PropertyMap) RequireObject(path string) (*PropertyMap, error) {
	return require(m, path, "an object", Value.AsObject)
}

// RequireArray is the array at path, or a *CheckFailure.
func (m *PropertyMap) RequireArray(path string) ([]Value, error) {
	return require(m, path, "an array", Value.AsArray)
}
