package cairn

import "fmt"

// CheckFailure is a validation failure: the property path at fault (empty for the whole
// resource) and why. It is an error ("path: reason"), so a Require reader's failure can be
// returned as it is.
type CheckFailure struct {
	Property string
	Reason   string
}

func (f *CheckFailure) Error() string {
	if f.Property == "" {
		return f.Reason
	}
	return f.Property + ": " + f.Reason
}

// AutoName is `<name>-<7 hex characters>`, the hex an FNV-1a hash of seed: a generated
// physical name that is the same every time for the same seed.
func AutoName(name string, seed []byte) string {
	hash := uint64(0xcbf29ce484222325)
	for _, b := range seed {
		hash ^= uint64(b)
		hash *= 0x00000100000001b3
	}
	return fmt.Sprintf("%s-%07x", name, hash>>36)
}

// Checker validates inputs in a provider's Check: typed reads that record failures,
// defaults, and the result.
//
// Reads return ok false when the property is absent, unknown (a preview) or invalid; only
// invalid values (and absent required ones) are recorded as failures, so unknowns pass.
//
//	c := cairn.NewChecker(r.Inputs.Map())
//	length, _ := c.RequiredInt("length")
//	c.Default("special", true)
//	inputs, failures := c.Finish()
type Checker struct {
	inputs   *PropertyMap
	failures []CheckFailure
}

// NewChecker starts checking inputs (the map is changed in place by defaults).
func NewChecker(inputs *PropertyMap) *Checker {
	if inputs == nil {
		inputs = NewPropertyMap()
	}
	return &Checker{inputs: inputs}
}

// Inputs are the inputs as they stand (defaults applied so far); change them to normalise
// values.
func (c *Checker) Inputs() *PropertyMap { return c.inputs }

// Fail records a failure.
func (c *Checker) Fail(property, reason string) {
	c.failures = append(c.failures, CheckFailure{Property: property, Reason: reason})
}

// Failures are the failures so far.
func (c *Checker) Failures() []CheckFailure { return c.failures }

// Default sets a top-level property when it is absent or null (not when it is unknown).
func (c *Checker) Default(key string, value any) {
	if v, ok := c.inputs.Get(key); !ok || v.IsNull() {
		c.inputs.Set(key, value)
	}
}

// AutoName names the resource when key is absent or null: the old inputs' value when there
// is one (so the name is stable across updates), else AutoName(name, seed) (the same in a
// preview and the update that follows it). name is the logical name (the request's Name()).
func (c *Checker) AutoName(key, name string, oldInputs *PropertyMap, seed []byte) {
	if v, ok := c.inputs.Get(key); ok && !v.IsNull() {
		return
	}
	if old, ok := oldInputs.Get(key); ok && !old.IsNull() {
		c.inputs.Set(key, old)
		return
	}
	c.inputs.Set(key, AutoName(name, seed))
}

func check[T any](c *Checker, path string, required bool, expected string, read func(Value) (T, bool)) (T, bool) {
	var zero T
	_, found := c.inputs.Lookup(path)
	if found == NotKnown || (found == Missing && !required) {
		return zero, false
	}
	v, err := require(c.inputs, path, expected, read)
	if err != nil {
		c.failures = append(c.failures, *err.(*CheckFailure))
		return zero, false
	}
	return v, true
}

// String is the optional string at path.
func (c *Checker) String(path string) (string, bool) {
	return check(c, path, false, "a string", Value.AsString)
}

// RequiredString is the string at path; absent is a failure.
func (c *Checker) RequiredString(path string) (string, bool) {
	return check(c, path, true, "a string", Value.AsString)
}

// Number is the optional number at path.
func (c *Checker) Number(path string) (float64, bool) {
	return check(c, path, false, "a number", Value.AsNumber)
}

// RequiredNumber is the number at path; absent is a failure.
func (c *Checker) RequiredNumber(path string) (float64, bool) {
	return check(c, path, true, "a number", Value.AsNumber)
}

// Int is the optional integer at path.
func (c *Checker) Int(path string) (int64, bool) {
	return check(c, path, false, "an integer", Value.AsInt)
}

// RequiredInt is the integer at path; absent is a failure.
func (c *Checker) RequiredInt(path string) (int64, bool) {
	return check(c, path, true, "an integer", Value.AsInt)
}

// Bool is the optional boolean at path.
func (c *Checker) Bool(path string) (bool, bool) {
	return check(c, path, false, "a boolean", Value.AsBool)
}

// RequiredBool is the boolean at path; absent is a failure.
func (c *Checker) RequiredBool(path string) (bool, bool) {
	return check(c, path, true, "a boolean", Value.AsBool)
}

// Object is the optional object at path.
func (c *Checker) Object(path string) (*PropertyMap, bool) {
	return check(c, path, false, "an object", Value.AsObject)
}

// Array is the optional array at path.
func (c *Checker) Array(path string) ([]Value, bool) {
	return check(c, path, false, "an array", Value.AsArray)
}

// Finish ends the check: the inputs (defaults applied) and the failures.
func (c *Checker) Finish() (*PropertyMap, []CheckFailure) { return c.inputs, c.failures }
