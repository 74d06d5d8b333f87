// Package wire is the WIT `value` of cairn:deploy (wit/provider.wit) as Go data: a table of
// nodes that refer to each other by index, one string buffer and the rare extras, and the
// format's rules (Validate). It knows nothing of the SDK's values (the root package encodes and
// decodes those) nor of the canonical ABI (package abi moves tables across the boundary).
//
// Node i is the five words Nodes[5i:5i+5]: kind, operands a and b, and the span (offset,
// length) in Strings of its key when it is an object member. Children always come after the
// node that refers to them and every node but the root is referred to exactly once, which is
// what lets Validate check a table in one forward pass without recursion.
package wire

// Words per node: kind, a, b, key offset, key length.
const Words = 5

// MaxDepth is the deepest value a table may hold (the root is depth 1), as the host's strict
// reader has it.
const MaxDepth = 512

// Node kinds: a node's first word.
const (
	KindNull      uint32 = 0
	KindBool      uint32 = 1
	KindNumber    uint32 = 2
	KindText      uint32 = 3
	KindArray     uint32 = 4
	KindObject    uint32 = 5
	KindSecret    uint32 = 6
	KindUnknown   uint32 = 7
	KindAsset     uint32 = 8
	KindArchive   uint32 = 9
	KindReference uint32 = 10
	KindOutput    uint32 = 11
)

// KindName names a node kind for messages, as both sides name value kinds.
func KindName(kind uint32) string {
	switch kind {
	case KindNull:
		return "null"
	case KindBool:
		return "bool"
	case KindNumber:
		return "number"
	case KindText:
		return "string"
	case KindArray:
		return "array"
	case KindObject:
		return "object"
	case KindSecret:
		return "secret"
	case KindUnknown:
		return "unknown"
	case KindAsset:
		return "asset"
	case KindArchive:
		return "archive"
	case KindReference:
		return "resource reference"
	case KindOutput:
		return "output"
	}
	return "unknown kind"
}

// HasExtra reports whether nodes of this kind keep their payload in Extras.
func HasExtra(kind uint32) bool {
	return kind == KindAsset || kind == KindArchive || kind == KindReference || kind == KindOutput
}

// Table is the WIT `value` record.
type Table struct {
	Nodes   []uint32
	Strings []byte
	Extras  []Extra
}

// Source cases of the WIT `asset-source` and `archive-source` variants, in WIT order
// (`text` for an asset is `assets` for an archive).
const (
	SourceTextOrAssets uint8 = 0
	SourcePath         uint8 = 1
	SourceURI          uint8 = 2
	SourceHashOnly     uint8 = 3
)

// Extra is the WIT `extra` variant, flattened: Kind (a node kind that has extras) says which
// fields mean anything.
//
//   - KindAsset: Hash, Source, Text (the text, path or URI).
//   - KindArchive: Hash, Source, Text (path or URI) or Members (SourceTextOrAssets).
//   - KindReference: URN, ID (a node: text or unknown; nil for components), PackageVersion.
//   - KindOutput: Value (a node; nil when unknown), Secret, Dependencies.
type Extra struct {
	Kind           uint32
	Hash           *string
	Source         uint8
	Text           string
	Members        []Member
	URN            string
	ID             *uint32
	PackageVersion *string
	Value          *uint32
	Secret         bool
	Dependencies   []string
}

// Member is one named asset or archive of a literal archive: the node that holds it.
type Member struct {
	Name string
	Node uint32
}

// Empty reports whether the table has no nodes (an empty value).
func (t *Table) Empty() bool { return len(t.Nodes) == 0 }

// Len is the number of nodes.
func (t *Table) Len() int { return len(t.Nodes) / Words }

// Kind is node i's kind.
func (t *Table) Kind(i uint32) uint32 { return t.Nodes[int(i)*Words] }

// Operands are node i's a and b.
func (t *Table) Operands(i uint32) (uint32, uint32) {
	at := int(i) * Words
	return t.Nodes[at+1], t.Nodes[at+2]
}

// Text is the string of a text node (valid once the table is validated).
func (t *Table) Text(i uint32) string {
	a, b := t.Operands(i)
	return string(t.Strings[a : a+b])
}

// Key is the member key of node i (valid once the table is validated).
func (t *Table) Key(i uint32) string {
	at := int(i) * Words
	offset, length := t.Nodes[at+3], t.Nodes[at+4]
	return string(t.Strings[offset : offset+length])
}

// SameKnown reports whether two tables are identical column by column, have no extras and no
// unknown: then they hold the same value, and comparing them needs no decoding.
func SameKnown(a, b *Table) bool {
	if len(a.Extras) != 0 || len(b.Extras) != 0 || len(a.Nodes) != len(b.Nodes) ||
		len(a.Strings) != len(b.Strings) {
		return false
	}
	for i := 0; i < len(a.Nodes); i++ {
		if a.Nodes[i] != b.Nodes[i] {
			return false
		}
		if i%Words == 0 && a.Nodes[i] == KindUnknown {
			return false
		}
	}
	return string(a.Strings) == string(b.Strings)
}
