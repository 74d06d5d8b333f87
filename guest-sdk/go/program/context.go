package program

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	cairn "cairn.invalid/sdk"
)

// Context is what a program gets: the deployment, its configuration, resources, stack
// outputs.
type Context struct{}

// Project is the project's name.
func (*Context) Project() string { return rt.deployment.project }

// Stack is the stack's name.
func (*Context) Stack() string { return rt.deployment.stack }

// Organization is the organization the stack belongs to.
func (*Context) Organization() string { return rt.deployment.organization }

// DryRun reports whether this is a preview: nothing is created, and new resources' outputs
// are unknown.
func (*Context) DryRun() bool { return rt.deployment.dryRun }

// RootURN is the URN of the stack's root resource (`pulumi:pulumi:Stack`).
func (*Context) RootURN() string { return rt.deployment.rootURN }

// Export adds a stack output: a plain value or an output (secrets stay secret in the state
// and in `cairn stack output`).
func (*Context) Export(name string, value Input) {
	rt.exports = append(rt.exports, exported{name: name, value: ToValue(value)})
}

// RegisterStackTransformation applies t to every resource declared after this call.
func (*Context) RegisterStackTransformation(t Transformation) {
	rt.stackTransformations = append(rt.stackTransformations, t)
}

// Config is the project's configuration (keys `<project>:<key>`, set with `cairn config set
// <key> <value>`).
func (ctx *Context) Config() *Config { return &Config{namespace: rt.deployment.project} }

// ConfigNamespace is the configuration of another namespace, e.g. a provider package's.
func (*Context) ConfigNamespace(namespace string) *Config { return &Config{namespace: namespace} }

// Config is one namespace of the stack's configuration.
type Config struct{ namespace string }

func (c *Config) fullKey(key string) string {
	if strings.Contains(key, ":") {
		return key
	}
	return c.namespace + ":" + key
}

func (c *Config) missing(key string, secret bool) error {
	full := c.fullKey(key)
	flag := ""
	if secret {
		flag = "--secret "
	}
	return fmt.Errorf("missing required configuration variable '%s'\n    please set a value using the command `cairn config set %s%s <value>`", full, flag, full)
}

// Value is the configuration value as the host sent it (a secret one is a secret value).
func (c *Config) Value(key string) (cairn.Value, bool) {
	v, ok := rt.config[c.fullKey(key)]
	return v, ok
}

// raw is the value as text (structured values as JSON) and whether it is secret.
func (c *Config) raw(key string) (string, bool, bool) {
	v, ok := c.Value(key)
	if !ok {
		return "", false, false
	}
	secret := v.IsSecret()
	if s, ok := v.AsString(); ok {
		return s, secret, true
	}
	text, err := json.Marshal(toJSON(v.Reveal()))
	if err != nil {
		return "", secret, false
	}
	return string(text), secret, true
}

// Get is a value as text (a secret one is returned as it is; prefer GetSecret).
func (c *Config) Get(key string) (string, bool) {
	s, _, ok := c.raw(key)
	return s, ok
}

// Require is a value as text, or an error naming the key and the command that sets it.
func (c *Config) Require(key string) (string, error) {
	if s, ok := c.Get(key); ok {
		return s, nil
	}
	return "", c.missing(key, false)
}

// GetSecret is a value as a secret output (secret whether or not it was set with --secret).
func (c *Config) GetSecret(key string) (Output[string], bool) {
	s, ok := c.Get(key)
	if !ok {
		return Output[string]{}, false
	}
	return Secret(s), true
}

// RequireSecret is GetSecret, or an error naming the key.
func (c *Config) RequireSecret(key string) (Output[string], error) {
	if o, ok := c.GetSecret(key); ok {
		return o, nil
	}
	return Output[string]{}, c.missing(key, true)
}

func parsed[T any](c *Config, key, what string, fallback T, parse func(string) (T, error)) (T, error) {
	text, ok := c.Get(key)
	if !ok {
		return fallback, nil
	}
	v, err := parse(strings.TrimSpace(text))
	if err != nil {
		return fallback, fmt.Errorf("configuration value '%s' is not %s: %q", c.fullKey(key), what, text)
	}
	return v, nil
}

// GetInt is a whole number, or fallback when the key is not set; a value that is not a whole
// number is an error.
func (c *Config) GetInt(key string, fallback int64) (int64, error) {
	return parsed(c, key, "a whole number", fallback, func(s string) (int64, error) {
		return strconv.ParseInt(s, 10, 64)
	})
}

// GetFloat is a number, or fallback when the key is not set.
func (c *Config) GetFloat(key string, fallback float64) (float64, error) {
	return parsed(c, key, "a number", fallback, func(s string) (float64, error) {
		return strconv.ParseFloat(s, 64)
	})
}

// GetBool is true or false, or fallback when the key is not set.
func (c *Config) GetBool(key string, fallback bool) (bool, error) {
	return parsed(c, key, "true or false", fallback, strconv.ParseBool)
}

// GetObject decodes a structured value (set with `cairn config set --path`, or as JSON) into
// target, as encoding/json does; false when the key is not set.
func (c *Config) GetObject(key string, target any) (bool, error) {
	text, ok := c.Get(key)
	if !ok {
		return false, nil
	}
	if err := json.Unmarshal([]byte(text), target); err != nil {
		return true, fmt.Errorf("configuration value '%s' is not the expected structure: %w", c.fullKey(key), err)
	}
	return true, nil
}

// toJSON is a plain value as encoding/json values (secrets revealed: the caller asked for
// the text).
func toJSON(v cairn.Value) any {
	v = v.Reveal()
	switch v.Kind() {
	case cairn.KindBool:
		b, _ := v.AsBool()
		return b
	case cairn.KindNumber:
		n, _ := v.AsNumber()
		return n
	case cairn.KindString:
		s, _ := v.AsString()
		return s
	case cairn.KindArray:
		items, _ := v.AsArray()
		out := make([]any, len(items))
		for i, item := range items {
			out[i] = toJSON(item)
		}
		return out
	case cairn.KindObject:
		m, _ := v.AsObject()
		out := map[string]any{}
		for k, item := range m.All() {
			out[k] = toJSON(item)
		}
		return out
	}
	return nil
}

// StackReference is another stack's outputs, on the same backend (`<stack>` or
// `<project>/<stack>`, as `cairn stack ls` shows them). Secret outputs stay secret.
type StackReference struct {
	*Resource
	name string
}

// StackReference reads the outputs of the stack called name.
func (ctx *Context) StackReference(name string) *StackReference {
	r := ctx.Read("pulumi:pulumi:StackReference", name, name, Args{"name": name})
	return &StackReference{Resource: r, name: name}
}

// StackOutput is output name of the referenced stack (null when it has none).
func (s *StackReference) StackOutput(name string) Output[cairn.Value] {
	return Get(s.Output("outputs"), name)
}

// RequireStackOutput is output name, failing with a message naming the stack when there is
// none.
func (s *StackReference) RequireStackOutput(name string) Output[cairn.Value] {
	stack := s.name
	return lift(ApplyErr(s.Output("outputs"), func(v cairn.Value) (cairn.Value, error) {
		if m, ok := v.AsObject(); ok {
			if out, ok := m.Get(name); ok {
				return out, nil
			}
		}
		return cairn.Value{}, fmt.Errorf("stack %s has no output %q", stack, name)
	}))
}
