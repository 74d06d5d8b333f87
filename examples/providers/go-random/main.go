// Command go-random is the random package's RandomInteger, RandomString and RandomUuid as a
// sandboxed provider written in Go (Cairn's Go SDK): the tokens and properties of
// pulumi-random, so programs written for it (the published random SDKs among them) deploy on
// it. Every input forces a replacement, as in the random provider: a value is generated once,
// when its resource is created.
package main

import (
	"crypto/rand"
	_ "embed"
	"fmt"
	"hash/fnv"
	"math/big"
	mathrand "math/rand/v2"
	"strconv"
	"strings"

	cairn "cairn.invalid/sdk"
	"cairn.invalid/sdk/provider"
)

//go:embed cairn.json
var manifest string

const (
	integerType = "random:index/randomInteger:RandomInteger"
	stringType  = "random:index/randomString:RandomString"
	uuidType    = "random:index/randomUuid:RandomUuid"

	// The special characters RandomString draws from unless overrideSpecial says otherwise.
	special = "!@#$%&*()-_=+[]{}<>:?"
)

// Random is the provider: the defaults (Read returns the recorded state, PreviewUpdate the
// inputs), replacement on any change, and the three resource types.
type Random struct{ provider.Defaults }

func newRandom() *Random {
	every := []string{"*"}
	return &Random{provider.Defaults{ReplaceOnChange: map[string][]string{
		integerType: every, stringType: every, uuidType: every,
	}}}
}

func init() { provider.Export(newRandom(), manifest) }

func main() {}

// Check validates RandomInteger's range and RandomString's length and minimums, filling in
// RandomString's defaults. Unknown inputs (a preview) pass.
func (*Random) Check(r provider.CheckRequest) (provider.CheckResult, error) {
	switch r.Type() {
	case integerType:
		c := cairn.NewChecker(r.Inputs.Map())
		lo, hasLo := c.RequiredInt("min")
		hi, hasHi := c.RequiredInt("max")
		if hasLo && hasHi && hi < lo {
			c.Fail("max", "max must be at least min")
		}
		return finish(c)
	case stringType:
		if r.Inputs.IsUnknown("length") {
			return provider.CheckResult{Inputs: r.Inputs}, nil
		}
		inputs := r.Inputs.Map()
		c := cairn.NewChecker(inputs)
		length, ok := c.RequiredInt("length")
		if ok && length < 1 {
			c.Fail("length", "length must be at least 1")
		}
		for _, key := range []string{"upper", "lower", "numeric", "special"} {
			c.Default(key, true)
		}
		for _, key := range []string{"minUpper", "minLower", "minNumeric", "minSpecial"} {
			c.Default(key, 0)
		}
		// `number` is the deprecated name of `numeric`.
		if n, ok := c.Bool("number"); ok {
			inputs.Set("numeric", n)
		}
		inputs.Delete("number")
		minimum := int64(0)
		for _, key := range []string{"minUpper", "minLower", "minNumeric", "minSpecial"} {
			n, _ := c.Int(key)
			minimum += n
		}
		if ok && length >= 1 && minimum > length {
			c.Fail("length", fmt.Sprintf("length (%d) is less than the sum of the minimums (%d)", length, minimum))
		}
		return finish(c)
	case uuidType:
		return provider.CheckResult{Inputs: r.Inputs}, nil
	}
	return provider.CheckResult{}, unknownType(r.Type())
}

func finish(c *cairn.Checker) (provider.CheckResult, error) {
	inputs, failures := c.Finish()
	return provider.CheckResult{Inputs: cairn.PropertiesOf(inputs), Failures: failures}, nil
}

func unknownType(t string) error {
	return provider.Unimplemented("resource type " + t + " (this provider has RandomInteger, RandomString and RandomUuid)")
}

// PreviewCreate describes the resource: its inputs, and a result only creating tells.
func (*Random) PreviewCreate(r provider.CreateRequest) (provider.CreateResult, error) {
	outputs := r.Inputs.Clone().Set("result", cairn.Unknown())
	return provider.CreateResult{Outputs: cairn.PropertiesOf(outputs)}, nil
}

// Create generates the value; the ID is the value itself (the integer, the string, the UUID).
func (*Random) Create(r provider.CreateRequest) (provider.CreateResult, error) {
	inputs := r.Inputs.Clone().Unsecret()
	var result cairn.Value
	var id string
	switch r.Type() {
	case integerType:
		n, err := integer(inputs)
		if err != nil {
			return provider.CreateResult{}, err
		}
		result, id = cairn.Int(n), strconv.FormatInt(n, 10)
	case stringType:
		s, err := randomString(inputs)
		if err != nil {
			return provider.CreateResult{}, err
		}
		result, id = cairn.String(s), s
	case uuidType:
		u := uuid4()
		result, id = cairn.String(u), u
	default:
		return provider.CreateResult{}, unknownType(r.Type())
	}
	outputs := r.Inputs.Clone().Set("result", result)
	return provider.CreateResult{ID: id, Outputs: cairn.PropertiesOf(outputs)}, nil
}

// Update happens only for changes nothing replaces (none here): the old result stays.
func (*Random) Update(r provider.UpdateRequest) (provider.UpdateResult, error) {
	outputs := r.Inputs.Clone()
	if result, ok := r.OldOutputs.Get("result"); ok {
		outputs.Set("result", result)
	}
	return provider.UpdateResult{Outputs: cairn.PropertiesOf(outputs)}, nil
}

// Delete forgets the value: nothing exists outside the state.
func (*Random) Delete(provider.DeleteRequest) error { return nil }

// integer draws from [min, max]: from crypto/rand, or, with a seed, from a generator seeded
// by the seed's hash (the same seed and range give the same integer).
func integer(inputs *cairn.PropertyMap) (int64, error) {
	lo, err := inputs.RequireInt("min")
	if err != nil {
		return 0, err
	}
	hi, err := inputs.RequireInt("max")
	if err != nil {
		return 0, err
	}
	if hi < lo {
		return 0, fmt.Errorf("max (%d) must be at least min (%d)", hi, lo)
	}
	span := uint64(hi-lo) + 1
	if seed, ok := inputs.GetString("seed"); ok {
		h := fnv.New64a()
		h.Write([]byte(seed))
		rng := mathrand.New(mathrand.NewPCG(h.Sum64(), uint64(lo)^uint64(hi)))
		return lo + int64(rng.Uint64N(span)), nil
	}
	n, err := rand.Int(rand.Reader, new(big.Int).SetUint64(span))
	if err != nil {
		return 0, fmt.Errorf("reading random bytes: %w", err)
	}
	return lo + n.Int64(), nil
}

// randomString draws `length` characters: the minimums of each enabled set first, the rest
// from all enabled sets, shuffled.
func randomString(inputs *cairn.PropertyMap) (string, error) {
	length, err := inputs.RequireInt("length")
	if err != nil {
		return "", err
	}
	specials := special
	if s, ok := inputs.GetString("overrideSpecial"); ok && s != "" {
		specials = s
	}
	sets := []struct{ enabled, minimum, alphabet string }{
		{"upper", "minUpper", "ABCDEFGHIJKLMNOPQRSTUVWXYZ"},
		{"lower", "minLower", "abcdefghijklmnopqrstuvwxyz"},
		{"numeric", "minNumeric", "0123456789"},
		{"special", "minSpecial", specials},
	}
	var chars []rune
	var pool strings.Builder
	for _, set := range sets {
		if enabled, ok := inputs.GetBool(set.enabled); ok && !enabled {
			continue
		}
		pool.WriteString(set.alphabet)
		n, _ := inputs.GetInt(set.minimum)
		for i := int64(0); i < n; i++ {
			chars = append(chars, pick([]rune(set.alphabet)))
		}
	}
	if pool.Len() == 0 {
		return "", fmt.Errorf("the character set is empty: enable upper, lower, numeric or special")
	}
	all := []rune(pool.String())
	for int64(len(chars)) < length {
		chars = append(chars, pick(all))
	}
	for i := len(chars) - 1; i > 0; i-- {
		j := below(i + 1)
		chars[i], chars[j] = chars[j], chars[i]
	}
	return string(chars), nil
}

func pick(alphabet []rune) rune { return alphabet[below(len(alphabet))] }

// below is a uniform random integer in [0, n) from crypto/rand.
func below(n int) int {
	v, err := rand.Int(rand.Reader, big.NewInt(int64(n)))
	if err != nil {
		panic("reading random bytes: " + err.Error())
	}
	return int(v.Int64())
}

// uuid4 is a random (version 4, variant 1) UUID in lower case.
func uuid4() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("reading random bytes: " + err.Error())
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
