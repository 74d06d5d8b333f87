package main

// The cloud: files in the granted directory /cloud, read and written with the standard
// library as any Go program would (the sandbox grants the directory).

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	cairn "cairn.invalid/sdk"
)

const cloud = "/cloud"

// spec is the deployment's behaviour: `all` for every resource, `resources` overriding
// fields per resource name.
type spec struct {
	All               behaviour            `json:"all"`
	Resources         map[string]behaviour `json:"resources"`
	ConfigReplaceKeys *[]string            `json:"configReplaceKeys"`
}

// behaviour is how the provider behaves towards a resource (the fields this side acts on; the
// host's wrapper acts on delays, blocking and dying).
type behaviour struct {
	ReplaceOn           *[]string       `json:"replaceOn"`
	DeleteBeforeReplace *bool           `json:"deleteBeforeReplace"`
	Diff                *string         `json:"diff"`
	AutoName            *bool           `json:"autoName"`
	FailCreate          *string         `json:"failCreate"`
	FailUpdate          *string         `json:"failUpdate"`
	FailDelete          *string         `json:"failDelete"`
	FailRead            *string         `json:"failRead"`
	Partial             *bool           `json:"partial"`
	BadOutput           *string         `json:"badOutput"`
	CheckFailures       *[]checkFailure `json:"checkFailures"`
}

type checkFailure struct {
	Property string `json:"property"`
	Reason   string `json:"reason"`
}

// merged is b overridden by the fields o sets.
func (b behaviour) merged(o behaviour) behaviour {
	if o.ReplaceOn != nil {
		b.ReplaceOn = o.ReplaceOn
	}
	if o.DeleteBeforeReplace != nil {
		b.DeleteBeforeReplace = o.DeleteBeforeReplace
	}
	if o.Diff != nil {
		b.Diff = o.Diff
	}
	if o.AutoName != nil {
		b.AutoName = o.AutoName
	}
	if o.FailCreate != nil {
		b.FailCreate = o.FailCreate
	}
	if o.FailUpdate != nil {
		b.FailUpdate = o.FailUpdate
	}
	if o.FailDelete != nil {
		b.FailDelete = o.FailDelete
	}
	if o.FailRead != nil {
		b.FailRead = o.FailRead
	}
	if o.Partial != nil {
		b.Partial = o.Partial
	}
	if o.BadOutput != nil {
		b.BadOutput = o.BadOutput
	}
	if o.CheckFailures != nil {
		b.CheckFailures = o.CheckFailures
	}
	return b
}

func loadSpec() (spec, error) {
	var s spec
	text, ok, err := readFile(filepath.Join(cloud, "behaviour.json"), "behaviour.json")
	if err != nil || !ok {
		return s, err
	}
	if err := json.Unmarshal(text, &s); err != nil {
		return s, fmt.Errorf("behaviour.json is malformed: %w", err)
	}
	return s, nil
}

// behaviourOf is the behaviour for resource name.
func behaviourOf(name string) (behaviour, error) {
	s, err := loadSpec()
	if err != nil {
		return behaviour{}, err
	}
	if b, ok := s.Resources[name]; ok {
		return s.All.merged(b), nil
	}
	return s.All, nil
}

// readFile is a file's contents; ok false when there is no such file.
func readFile(path, what string) ([]byte, bool, error) {
	b, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, false, nil
	case err != nil:
		return nil, false, fmt.Errorf("reading %s: %w", what, err)
	}
	return b, true, nil
}

// writeFile writes a file in the cloud, making its directory first.
func writeFile(dir, file string, data []byte) error {
	d := filepath.Join(cloud, dir)
	if err := os.MkdirAll(d, 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", d, err)
	}
	if err := os.WriteFile(filepath.Join(d, file), data, 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", file, err)
	}
	return nil
}

// next increments the counter kind (`creates`, `generated`) for resource name; the first
// call returns 1.
func next(kind, name string) (uint64, error) {
	text, ok, err := readFile(filepath.Join(cloud, kind, name), "a counter")
	if err != nil {
		return 0, err
	}
	current := uint64(0)
	if ok {
		current, err = strconv.ParseUint(strings.TrimSpace(string(text)), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("counter %s/%s: %w", kind, name, err)
		}
	}
	n := current + 1
	return n, writeFile(kind, name, []byte(strconv.FormatUint(n, 10)))
}

// entry is one resource in the cloud.
type entry struct {
	Name    string
	Type    string
	Inputs  *cairn.PropertyMap
	Outputs *cairn.PropertyMap
}

func entryPath(id string) string { return filepath.Join(cloud, "resources", id+".json") }

func get(id string) (entry, bool, error) {
	text, ok, err := readFile(entryPath(id), "resource "+id)
	if err != nil || !ok {
		return entry{}, false, err
	}
	v, err := decodeJSON(text)
	if err != nil {
		return entry{}, false, fmt.Errorf("resource %s is malformed: %w", id, err)
	}
	m, _ := v.AsObject()
	text2 := func(key string) string {
		s, _ := m.GetString(key)
		return s
	}
	object := func(key string) *cairn.PropertyMap {
		if o, ok := m.GetObject(key); ok {
			return o
		}
		return cairn.NewPropertyMap()
	}
	return entry{Name: text2("name"), Type: text2("type"), Inputs: object("inputs"), Outputs: object("outputs")}, true, nil
}

func put(id string, e entry) error {
	var b bytes.Buffer
	b.WriteString(`{"name":`)
	writeString(&b, e.Name)
	b.WriteString(`,"type":`)
	writeString(&b, e.Type)
	b.WriteString(`,"inputs":`)
	writeJSON(&b, cairn.Object(e.Inputs))
	b.WriteString(`,"outputs":`)
	writeJSON(&b, cairn.Object(e.Outputs))
	b.WriteString("}")
	return writeFile("resources", id+".json", b.Bytes())
}

func remove(id string) error {
	if err := os.Remove(entryPath(id)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("deleting resource %s: %w", id, err)
	}
	return nil
}

// decodeJSON reads a JSON document as a value, objects in the order of the text: a single
// `$secret` key is a secret, the string `$unknown` an unknown.
func decodeJSON(text []byte) (cairn.Value, error) {
	d := json.NewDecoder(bytes.NewReader(text))
	d.UseNumber()
	v, err := decodeValue(d)
	if err != nil {
		return cairn.Value{}, err
	}
	if _, err := d.Token(); err != io.EOF {
		return cairn.Value{}, fmt.Errorf("text after the value")
	}
	return v, nil
}

func decodeValue(d *json.Decoder) (cairn.Value, error) {
	t, err := d.Token()
	if err != nil {
		return cairn.Value{}, err
	}
	switch t := t.(type) {
	case nil:
		return cairn.Null(), nil
	case bool:
		return cairn.Bool(t), nil
	case json.Number:
		n, err := t.Float64()
		return cairn.Number(n), err
	case string:
		if t == "$unknown" {
			return cairn.Unknown(), nil
		}
		return cairn.String(t), nil
	case json.Delim:
		if t == '[' {
			var items []cairn.Value
			for d.More() {
				item, err := decodeValue(d)
				if err != nil {
					return cairn.Value{}, err
				}
				items = append(items, item)
			}
			_, err := d.Token()
			return cairn.Array(items...), err
		}
		m := cairn.NewPropertyMap()
		for d.More() {
			key, err := d.Token()
			if err != nil {
				return cairn.Value{}, err
			}
			v, err := decodeValue(d)
			if err != nil {
				return cairn.Value{}, err
			}
			m.Set(key.(string), v)
		}
		if _, err := d.Token(); err != nil {
			return cairn.Value{}, err
		}
		if inner, ok := m.Get("$secret"); ok && m.Len() == 1 {
			return cairn.Secret(inner), nil
		}
		return cairn.Object(m), nil
	}
	return cairn.Value{}, fmt.Errorf("unexpected %v", t)
}

// writeJSON writes a value as plain JSON (secrets as {"$secret": v}; unknowns, and what the
// scenarios never store, as "$unknown"; a number JSON cannot hold as null).
func writeJSON(b *bytes.Buffer, v cairn.Value) {
	switch v.Kind() {
	case cairn.KindNull:
		b.WriteString("null")
	case cairn.KindBool:
		x, _ := v.AsBool()
		b.WriteString(strconv.FormatBool(x))
	case cairn.KindNumber:
		n, _ := v.AsNumber()
		if math.IsNaN(n) || math.IsInf(n, 0) {
			b.WriteString("null")
		} else {
			b.WriteString(strconv.FormatFloat(n, 'g', -1, 64))
		}
	case cairn.KindString:
		s, _ := v.AsString()
		writeString(b, s)
	case cairn.KindArray:
		items, _ := v.AsArray()
		b.WriteString("[")
		for i, item := range items {
			if i > 0 {
				b.WriteString(",")
			}
			writeJSON(b, item)
		}
		b.WriteString("]")
	case cairn.KindObject:
		m, _ := v.AsObject()
		b.WriteString("{")
		i := 0
		for key, item := range m.All() {
			if i > 0 {
				b.WriteString(",")
			}
			writeString(b, key)
			b.WriteString(":")
			writeJSON(b, item)
			i++
		}
		b.WriteString("}")
	case cairn.KindSecret:
		inner, _ := v.SecretInner()
		b.WriteString(`{"$secret":`)
		writeJSON(b, inner)
		b.WriteString("}")
	case cairn.KindOutput:
		o, _ := v.AsOutput()
		if o.Value == nil {
			writeString(b, "$unknown")
		} else {
			writeJSON(b, *o.Value)
		}
	default:
		writeString(b, "$unknown")
	}
}

func writeString(b *bytes.Buffer, s string) {
	text, _ := json.Marshal(s)
	b.Write(text)
}
