//! Test support: a stand-in for the generated WIT types (the same names, bound with
//! `bind_wit!` as the host and the guest bind theirs), hand-written nodes, and a small value
//! model to encode.

use cairn_wire::{
    Archive, Asset, Columns, Members, Node, Rules, Shape, Walk, WireError, kind, validate,
};
use indexmap::IndexMap;

/// The types `wit/provider.wit`'s interface `types` generates, as the bindings name them.
pub mod wit {
    #[derive(Debug, Clone, PartialEq)]
    pub struct Value {
        pub nodes: Vec<u32>,
        pub strings: Vec<u8>,
        pub extras: Vec<Extra>,
    }
    #[derive(Debug, Clone, PartialEq)]
    pub enum Extra {
        Asset(Asset),
        Archive(Archive),
        ResourceReference(ResourceReference),
        Output(OutputValue),
    }
    #[derive(Debug, Clone, PartialEq)]
    pub struct Asset {
        pub hash: Option<String>,
        pub source: AssetSource,
    }
    #[derive(Debug, Clone, PartialEq)]
    pub enum AssetSource {
        Text(String),
        Path(String),
        Uri(String),
        HashOnly,
    }
    #[derive(Debug, Clone, PartialEq)]
    pub struct Archive {
        pub hash: Option<String>,
        pub source: ArchiveSource,
    }
    #[derive(Debug, Clone, PartialEq)]
    pub enum ArchiveSource {
        Assets(Vec<(String, u32)>),
        Path(String),
        Uri(String),
        HashOnly,
    }
    #[derive(Debug, Clone, PartialEq)]
    pub struct ResourceReference {
        pub urn: String,
        pub id: Option<u32>,
        pub package_version: Option<String>,
    }
    #[derive(Debug, Clone, PartialEq)]
    pub struct OutputValue {
        pub value: Option<u32>,
        pub secret: bool,
        pub dependencies: Vec<String>,
    }
    #[derive(Debug, Clone, PartialEq)]
    pub struct CheckFailure {
        pub property: String,
        pub reason: String,
    }
    #[derive(Debug, Clone, Copy, PartialEq)]
    pub enum DiffChanges {
        Unknown,
        None,
        Some,
    }
    #[derive(Debug, Clone, Copy, PartialEq)]
    pub enum DiffKind {
        Add,
        AddReplace,
        Delete,
        DeleteReplace,
        Update,
        UpdateReplace,
    }
}

cairn_wire::bind_wit!(crate::support::wit);

/// The rules the host reads a guest's tables with.
pub const HOST: Rules = Rules {
    max_depth: 128,
    ignore_unused: true,
    untrusted: true,
};

/// A node index.
pub fn idx(i: usize) -> u32 {
    u32::try_from(i).expect("a small table")
}

/// A hand-written node: kind, `a`, `b` and its key (offset, length).
#[derive(Clone, Copy)]
pub struct N(pub u32, pub u32, pub u32, pub (u32, u32));

pub fn null() -> N {
    N(kind::NULL, 0, 0, (0, 0))
}
pub fn text(s: &str) -> N {
    let (offset, len) = sp(s);
    N(kind::TEXT, offset, len, (0, 0))
}
pub fn node(kind: u32, a: u32, b: u32) -> N {
    N(kind, a, b, (0, 0))
}
impl N {
    pub fn key(self, key: &str) -> N {
        N(self.0, self.1, self.2, sp(key))
    }
    pub fn raw_key(self, offset: u32, len: u32) -> N {
        N(self.0, self.1, self.2, (offset, len))
    }
}

pub fn table(nodes: &[N], strings: &[u8], extras: Vec<wit::Extra>) -> wit::Value {
    wit::Value {
        nodes: nodes
            .iter()
            .flat_map(|n| [n.0, n.1, n.2, n.3.0, n.3.1])
            .collect(),
        strings: strings.to_vec(),
        extras,
    }
}

/// The string buffer hand-written test values share: `sp` finds a span in it.
pub const POOL: &str = "a x|not an asset";

pub fn sp(s: &str) -> (u32, u32) {
    let offset = POOL.find(s).expect("in the pool");
    (idx(offset), idx(s.len()))
}

pub fn pooled(nodes: &[N]) -> wit::Value {
    table(nodes, POOL.as_bytes(), vec![])
}

/// What reading one value from the table gives under `rules`: validation, and a root.
pub fn read(value: &wit::Value, rules: Rules) -> Result<(), WireError> {
    validate(value, rules)?;
    Node::root(value).map(drop).ok_or(WireError::Empty)
}

/// The fault of a table of pooled nodes, read strictly.
pub fn bad(nodes: &[N]) -> WireError {
    read(&pooled(nodes), Rules::STRICT).unwrap_err()
}

pub fn reference(id: Option<u32>) -> wit::Extra {
    wit::Extra::ResourceReference(wit::ResourceReference {
        urn: "urn:pulumi:s::p::t:m:T::n".into(),
        id,
        package_version: None,
    })
}

/// A small value model to encode: every kind the format has.
#[derive(Debug, Clone, PartialEq)]
pub enum V {
    Null,
    Bool(bool),
    Num(f64),
    Str(String),
    Unknown,
    Arr(Vec<V>),
    Obj(Map),
    Secret(Box<V>),
    Asset(Asset),
    Archive(Archive),
    Ref {
        urn: String,
        id: Option<Box<V>>,
        version: Option<String>,
    },
    Out {
        value: Option<Box<V>>,
        secret: bool,
        deps: Vec<String>,
    },
}

pub type Map = IndexMap<String, V, cairn_wire::MemberState>;

pub struct Model;

impl Walk for Model {
    type Value = V;
    type Map = Map;
    type Urn = String;

    fn shape(value: &V) -> Shape<'_, Model> {
        match value {
            V::Null => Shape::Null,
            V::Bool(b) => Shape::Bool(*b),
            V::Num(n) => Shape::Number(*n),
            V::Str(s) => Shape::Text(s),
            V::Unknown => Shape::Unknown,
            V::Arr(items) => Shape::Array(items),
            V::Obj(map) => Shape::Object(map),
            V::Secret(inner) => Shape::Secret(inner.as_ref()),
            V::Asset(a) => Shape::Asset(a),
            V::Archive(a) => Shape::Archive(a),
            V::Ref { urn, id, version } => Shape::Reference {
                urn,
                id: id.as_deref(),
                package_version: version.as_ref(),
            },
            V::Out {
                value,
                secret,
                deps,
            } => Shape::Output {
                value: value.as_deref(),
                secret: *secret,
                dependencies: deps,
            },
        }
    }

    fn urn(urn: &String) -> &str {
        urn
    }

    fn entries(map: &Map) -> impl ExactSizeIterator<Item = (&String, &V)> {
        map.iter()
    }
}

pub fn obj(entries: Vec<(&str, V)>) -> V {
    V::Obj(
        entries
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v))
            .collect(),
    )
}

pub fn s(text: &str) -> V {
    V::Str(text.to_owned())
}

/// One value of every kind, nested.
pub fn every_kind() -> V {
    let asset = Asset {
        hash: Some("ab".repeat(32)),
        source: cairn_wire::AssetSource::Text("hello".into()),
    };
    let nested: Members = [(
        "inner.txt".to_owned(),
        Asset::from_path("./inner.txt").into(),
    )]
    .into_iter()
    .collect();
    let members: Members = [
        ("z.txt".to_owned(), asset.clone().into()),
        ("a".to_owned(), Archive::from_assets(nested).into()),
    ]
    .into_iter()
    .collect();
    obj(vec![
        ("null", V::Null),
        ("bool", V::Bool(true)),
        ("number", V::Num(1.5)),
        ("string", s("héllo")),
        ("array", V::Arr(vec![V::Num(1.0), s("two"), V::Arr(vec![])])),
        ("object", obj(vec![("z", V::Num(1.0)), ("m", obj(vec![]))])),
        ("asset", V::Asset(asset)),
        ("uri asset", V::Asset(Asset::from_uri("https://x/y"))),
        (
            "hash-only asset",
            V::Asset(Asset {
                hash: Some("00".into()),
                source: cairn_wire::AssetSource::HashOnly,
            }),
        ),
        ("archive", V::Archive(Archive::from_assets(members))),
        ("path archive", V::Archive(Archive::from_path("dir"))),
        (
            "uri archive",
            V::Archive(Archive::from_uri("file:///a.tgz")),
        ),
        (
            "reference",
            V::Ref {
                urn: "urn:pulumi:s::p::random:index:RandomPet::pet".into(),
                id: Some(Box::new(s("brave-ant"))),
                version: Some("1.2.3".into()),
            },
        ),
        (
            "component reference",
            V::Ref {
                urn: "urn:pulumi:s::p::my:index:Comp::c".into(),
                id: None,
                version: None,
            },
        ),
        (
            "unknown-id reference",
            V::Ref {
                urn: "urn:pulumi:s::p::a:b:C::c".into(),
                id: Some(Box::new(V::Unknown)),
                version: None,
            },
        ),
        (
            "secret",
            V::Secret(Box::new(obj(vec![("password", s("hunter2"))]))),
        ),
        ("unknown", V::Unknown),
        (
            "output",
            V::Out {
                value: Some(Box::new(V::Secret(Box::new(V::Num(3.0))))),
                secret: true,
                deps: vec!["urn:a".into(), "urn:b".into()],
            },
        ),
        (
            "unknown output",
            V::Out {
                value: None,
                secret: false,
                deps: vec![],
            },
        ),
    ])
}

/// Decodes a validated table's node into the model (to check what was encoded).
pub fn decode(node: Node<'_, wit::Value>) -> V {
    use cairn_wire::{ExtraRef, IndexedSourceRef, WitExtra};
    match node.kind() {
        kind::NULL => V::Null,
        kind::BOOL => V::Bool(node.flag()),
        kind::NUMBER => V::Num(node.number()),
        kind::TEXT => s(node.text()),
        kind::UNKNOWN => V::Unknown,
        kind::ARRAY => V::Arr(node.children().map(decode).collect()),
        kind::OBJECT => V::Obj(
            node.children()
                .map(|m| (m.key().to_owned(), decode(m)))
                .collect(),
        ),
        kind::SECRET => V::Secret(Box::new(decode(node.child(node.operands().0)))),
        _ => match node.extra().view() {
            ExtraRef::Asset { hash, source } => V::Asset(Asset {
                hash: hash.map(Into::into),
                source: source.to_owned(),
            }),
            ExtraRef::Archive { hash, source } => V::Archive(Archive {
                hash: hash.map(Into::into),
                source: match source {
                    IndexedSourceRef::Assets(members) => cairn_wire::ArchiveSource::Assets(
                        members
                            .iter()
                            .map(|(name, c)| {
                                let member = match decode(node.child(*c)) {
                                    V::Asset(a) => a.into(),
                                    V::Archive(a) => a.into(),
                                    other => panic!("member {other:?}"),
                                };
                                (name.clone(), member)
                            })
                            .collect(),
                    ),
                    IndexedSourceRef::Path(p) => cairn_wire::ArchiveSource::Path(p.into()),
                    IndexedSourceRef::Uri(u) => cairn_wire::ArchiveSource::Uri(u.into()),
                    IndexedSourceRef::HashOnly => cairn_wire::ArchiveSource::HashOnly,
                },
            }),
            ExtraRef::Reference {
                urn,
                id,
                package_version,
            } => V::Ref {
                urn: urn.into(),
                id: id.map(|c| Box::new(decode(node.child(c)))),
                version: package_version.map(Into::into),
            },
            ExtraRef::Output {
                value,
                secret,
                dependencies,
            } => V::Out {
                value: value.map(|c| Box::new(decode(node.child(c)))),
                secret,
                deps: dependencies.to_vec(),
            },
        },
    }
}

/// Encodes a value of the model and reads it back (validating strictly).
pub fn round_trip(value: &V) -> V {
    let table: wit::Value = cairn_wire::encode::<Model, _>(value);
    validate(&table, Rules::STRICT).unwrap_or_else(|e| panic!("{value:?}: {e}"));
    decode(Node::root(&table).expect("a root"))
}

/// The columns of a table, for tests that look at them.
pub fn columns(value: &wit::Value) -> (&[u32], &[u8], usize) {
    (value.nodes(), value.strings(), value.extras().len())
}
