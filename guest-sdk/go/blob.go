package cairn

import "slices"

// AssetSource is where an asset's contents come from.
type AssetSource uint8

// Where an asset's contents come from (the WIT `asset-source` cases, in order).
const (
	// AssetText: literal text, hashed as its UTF-8 bytes.
	AssetText AssetSource = iota
	// AssetPath: a local file; relative paths resolve against the program's directory.
	AssetPath
	// AssetURI: a `file`, `http` or `https` URI.
	AssetURI
	// AssetHashOnly: only the hash is known (the contents were not recorded).
	AssetHashOnly
)

// Asset is a blob and, once known, the lower-case hex SHA-256 of its contents.
type Asset struct {
	// Hash is nil until the engine has computed it.
	Hash   *string
	Source AssetSource
	// Value is the text, path or URI (empty for AssetHashOnly).
	Value string
}

// TextAsset is an asset of literal text.
func TextAsset(text string) Asset { return Asset{Source: AssetText, Value: text} }

// FileAsset is an asset read from a file.
func FileAsset(path string) Asset { return Asset{Source: AssetPath, Value: path} }

// RemoteAsset is an asset fetched from a URI.
func RemoteAsset(uri string) Asset { return Asset{Source: AssetURI, Value: uri} }

// Equal compares sources and hashes.
func (a *Asset) Equal(b *Asset) bool {
	return a.Source == b.Source && a.Value == b.Value && sameOpt(a.Hash, b.Hash)
}

// ArchiveSource is where an archive's members come from.
type ArchiveSource uint8

// Where an archive's members come from (the WIT `archive-source` cases, in order).
const (
	// ArchiveAssets: named members, each an asset or a nested archive.
	ArchiveAssets ArchiveSource = iota
	// ArchivePath: a local archive file or directory.
	ArchivePath
	// ArchiveURI: a `file`, `http` or `https` URI naming an archive file.
	ArchiveURI
	// ArchiveHashOnly: only the hash is known.
	ArchiveHashOnly
)

// Archive is a collection of assets and, once known, its hash.
type Archive struct {
	Hash   *string
	Source ArchiveSource
	// Value is the path or URI (ArchivePath, ArchiveURI).
	Value string
	// Members are the named assets and archives (ArchiveAssets), in order.
	Members []ArchiveMember
}

// ArchiveMember is one named entry of a literal archive: an asset or an archive.
type ArchiveMember struct {
	Name    string
	Asset   *Asset
	Archive *Archive
}

// AssetArchive is an archive of named members.
func AssetArchive(members ...ArchiveMember) Archive {
	return Archive{Source: ArchiveAssets, Members: members}
}

// FileArchive is an archive read from a file or directory.
func FileArchive(path string) Archive { return Archive{Source: ArchivePath, Value: path} }

// RemoteArchive is an archive fetched from a URI.
func RemoteArchive(uri string) Archive { return Archive{Source: ArchiveURI, Value: uri} }

// Equal compares sources, members and hashes.
func (a *Archive) Equal(b *Archive) bool {
	if a.Source != b.Source || a.Value != b.Value || !sameOpt(a.Hash, b.Hash) {
		return false
	}
	return slices.EqualFunc(a.Members, b.Members, func(x, y ArchiveMember) bool {
		if x.Name != y.Name {
			return false
		}
		switch {
		case x.Asset != nil && y.Asset != nil:
			return x.Asset.Equal(y.Asset)
		case x.Archive != nil && y.Archive != nil:
			return x.Archive.Equal(y.Archive)
		}
		return false
	})
}

// ResourceReference refers to a resource.
type ResourceReference struct {
	URN string
	// ID is a string value, or Unknown; nil for components.
	ID             *Value
	PackageVersion *string
}

// Equal compares URNs, IDs and versions.
func (r *ResourceReference) Equal(o *ResourceReference) bool {
	if r.URN != o.URN || !sameOpt(r.PackageVersion, o.PackageVersion) || (r.ID == nil) != (o.ID == nil) {
		return false
	}
	return r.ID == nil || r.ID.Equal(*o.ID)
}

// OutputValue is the metadata-carrying form of a value (`Output<T>` in the type system).
type OutputValue struct {
	// Value is nil when it is unknown.
	Value  *Value
	Secret bool
	// Dependencies are the URNs of the resources the value depends on.
	Dependencies []string
}

// Equal compares contents and metadata.
func (o *OutputValue) Equal(p *OutputValue) bool {
	if o.Secret != p.Secret || !slices.Equal(o.Dependencies, p.Dependencies) || (o.Value == nil) != (p.Value == nil) {
		return false
	}
	return o.Value == nil || o.Value.Equal(*p.Value)
}

func sameOpt(a, b *string) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}
