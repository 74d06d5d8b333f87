//! A stack's resource graph as `stack graph` draws it: one node per URN, dependency edges from
//! a dependency to what depends on it (labelled with the properties that carry it), parent
//! edges from a child to its parent; and its DOT text, as Pulumi's `stack graph` writes it.
//!
//! Pulumi's shape is kept exactly (node order, `ResourceN` numbering on first mention, the
//! edges a repeated URN repeats), with one deliberate difference: labels are escaped, so a name
//! holding a quote or a backslash cannot end its string and add attributes (Pulumi writes them
//! raw).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt::Write;

use super::Resource;
use crate::text::visible_line;
use crate::urn::Urn;

/// Pulumi's default colour of dependency edges.
pub const DEPENDENCY_EDGE_COLOR: &str = "#246C60";
/// Pulumi's default colour of parent edges.
pub const PARENT_EDGE_COLOR: &str = "#AA6639";

/// Which edges a graph has.
#[derive(Debug, Clone, Copy, Default)]
pub struct EdgeKinds {
    pub ignore_dependency_edges: bool,
    pub ignore_parent_edges: bool,
}

/// What an edge stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EdgeKind {
    /// From a resource to one that depends on it.
    Dependency,
    /// From a child to its parent.
    Parent,
}

/// An edge between two nodes (indexes into [`ResourceGraph::nodes`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edge {
    pub from: usize,
    pub to: usize,
    pub kind: EdgeKind,
    /// The properties whose values came from `from` (dependency edges), sorted; else empty.
    pub properties: Vec<String>,
}

/// A resource of the graph.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Node {
    pub urn: Urn,
    /// Its edges out, in the order they were found.
    pub edges: Vec<Edge>,
}

/// The graph of a snapshot's resources; nodes in URN order (bytewise).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ResourceGraph {
    pub nodes: Vec<Node>,
}

impl ResourceGraph {
    /// The graph of `resources` (every entry: the stack, providers, resources pending deletion).
    /// Of a URN recorded twice, the later entry is the node, and its edges come once per entry,
    /// as in Pulumi. A dependency or parent not in `resources` (an inconsistent state) becomes a
    /// node of its own rather than an error: the graph is for looking at such a state too.
    pub fn of<P>(resources: &[Resource<P>], kinds: EdgeKinds) -> ResourceGraph {
        let mut last: BTreeMap<&Urn, &Resource<P>> = BTreeMap::new();
        for resource in resources {
            last.insert(&resource.urn, resource);
        }
        let missing: BTreeSet<&Urn> = last
            .values()
            .flat_map(|r| r.dependencies.iter().chain(&r.parent))
            .filter(|urn| !last.contains_key(urn))
            .collect();
        let mut urns: Vec<&Urn> = last.keys().chain(&missing).copied().collect();
        urns.sort();
        let index: HashMap<&Urn, usize> = urns.iter().enumerate().map(|(i, u)| (*u, i)).collect();
        let mut nodes: Vec<Node> = urns
            .iter()
            .map(|urn| Node {
                urn: (*urn).clone(),
                edges: Vec::new(),
            })
            .collect();
        for entry in resources {
            let resource = last[&entry.urn];
            let this = index[&resource.urn];
            if !kinds.ignore_dependency_edges {
                for dependency in &resource.dependencies {
                    let mut properties: Vec<String> = resource
                        .property_dependencies
                        .iter()
                        .flat_map(|(key, urns)| {
                            urns.iter()
                                .filter(|u| *u == dependency)
                                .map(move |_| key.clone())
                        })
                        .collect();
                    properties.sort();
                    let from = index[dependency];
                    nodes[from].edges.push(Edge {
                        from,
                        to: this,
                        kind: EdgeKind::Dependency,
                        properties,
                    });
                }
            }
            if !kinds.ignore_parent_edges
                && let Some(parent) = &resource.parent
            {
                nodes[this].edges.push(Edge {
                    from: this,
                    to: index[parent],
                    kind: EdgeKind::Parent,
                    properties: Vec::new(),
                });
            }
        }
        ResourceGraph { nodes }
    }
}

/// How the DOT text labels and colours what it draws.
#[derive(Debug, Clone)]
pub struct DotStyle {
    /// Label nodes with the resource's name instead of its URN.
    pub short_node_name: bool,
    pub dependency_edge_color: String,
    pub parent_edge_color: String,
    /// DOT statements put right after the header, verbatim (the user's own).
    pub fragment: Option<String>,
}

impl Default for DotStyle {
    fn default() -> DotStyle {
        DotStyle {
            short_node_name: false,
            dependency_edge_color: DEPENDENCY_EDGE_COLOR.to_owned(),
            parent_edge_color: PARENT_EDGE_COLOR.to_owned(),
            fragment: None,
        }
    }
}

impl ResourceGraph {
    /// The graph as a DOT `strict digraph`, as Pulumi's `stack graph` writes it: each node in
    /// order followed by its edges; nodes are named `Resource0`, `Resource1`, … in the order
    /// they are first mentioned (an edge may mention its target before the target's own line).
    pub fn to_dot(&self, style: &DotStyle) -> String {
        let mut names: Vec<Option<usize>> = vec![None; self.nodes.len()];
        let mut next = 0;
        let mut name = |node: usize| -> usize {
            *names[node].get_or_insert_with(|| {
                next += 1;
                next - 1
            })
        };
        let mut out = String::from("strict digraph {\n");
        if let Some(fragment) = style.fragment.as_deref().filter(|f| !f.is_empty()) {
            out.push_str(fragment);
            out.push('\n');
        }
        for (i, node) in self.nodes.iter().enumerate() {
            let label = if style.short_node_name {
                node.urn.name()
            } else {
                node.urn.as_str()
            };
            let id = name(i);
            // Writing to a String cannot fail.
            let _ = write!(out, "    Resource{id}");
            if !label.is_empty() {
                let _ = write!(out, " [label=\"{}\"]", dot_escape(label));
            }
            out.push_str(";\n");
            for edge in &node.edges {
                let to = name(edge.to);
                let color = match edge.kind {
                    EdgeKind::Dependency => &style.dependency_edge_color,
                    EdgeKind::Parent => &style.parent_edge_color,
                };
                let mut attributes = Vec::new();
                if !color.is_empty() {
                    attributes.push(format!("color = \"{}\"", dot_escape(color)));
                }
                if !edge.properties.is_empty() {
                    let label = edge.properties.join(", ");
                    attributes.push(format!("label = \"{}\"", dot_escape(&label)));
                }
                let _ = write!(out, "    Resource{id} -> Resource{to}");
                if !attributes.is_empty() {
                    let _ = write!(out, " [{}]", attributes.join(", "));
                }
                out.push_str(";\n");
            }
        }
        out.push_str("}\n");
        out
    }
}

/// Text inside a DOT double-quoted string: characters unsafe to show made visible (as every
/// untrusted text Cairn prints is; URNs hold none, a property name might), then quotes and
/// backslashes escaped.
fn dot_escape(text: &str) -> String {
    let visible = visible_line(text);
    let mut out = String::with_capacity(visible.len());
    for c in visible.chars() {
        if matches!(c, '"' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    //! Ported from Pulumi's `pkg/cmd/pulumi/stack/stack_graph_test.go` (`TestStackGraphCmd`),
    //! whose expectations are exact DOT texts; plus the edges and escaping it does not cover.

    use super::*;
    use crate::state::ResourceState;
    use crate::urn::TypeToken;

    fn resource(urn: &str) -> ResourceState {
        let urn = Urn::parse(urn).unwrap();
        let ty = TypeToken::parse(urn.resource_type())
            .unwrap_or_else(|_| TypeToken::parse("pulumi:pulumi:Stack").unwrap());
        ResourceState::new(urn, ty, true)
    }

    fn pets(name: &str) -> String {
        format!("urn:pulumi:dev::pets::random:index/randomPet:RandomPet::{name}")
    }

    fn dot(resources: &[ResourceState], style: &DotStyle) -> String {
        ResourceGraph::of(resources, EdgeKinds::default()).to_dot(style)
    }

    #[test]
    fn a_single_node() {
        let stack = resource("urn:pulumi:dev::pets::pulumi:pulumi:Stack::pets-dev");
        assert_eq!(
            dot(&[stack], &DotStyle::default()),
            "strict digraph {\n    Resource0 [label=\"urn:pulumi:dev::pets::pulumi:pulumi:Stack::pets-dev\"];\n}\n"
        );
    }

    #[test]
    fn the_fragment_follows_the_header() {
        let style = DotStyle {
            fragment: Some("[node shape=rect]\n[edge penwidth=2]".into()),
            ..DotStyle::default()
        };
        let text = dot(&[resource(&pets("a"))], &style);
        assert!(
            text.starts_with(
                "strict digraph {\n[node shape=rect]\n[edge penwidth=2]\n    Resource0 "
            ),
            "{text}"
        );
    }

    /// Pulumi's "output is deterministic" case, laid out in full: nodes in URN order, numbered
    /// on first mention, dependency edges labelled with the sorted properties that carry them.
    #[test]
    fn dependency_edges_in_pulumis_order() {
        let a = resource(&pets("a"));
        let mut b = resource(&pets("b"));
        b.dependencies = vec![a.urn.clone()];
        let mut c = resource(&pets("c"));
        c.dependencies = vec![a.urn.clone(), b.urn.clone()];
        let mut d = resource(&pets("d"));
        d.dependencies = vec![a.urn.clone()];
        for key in ["propZ", "propA", "propM"] {
            d.property_dependencies
                .insert(key.into(), vec![a.urn.clone()]);
        }
        let style = DotStyle {
            short_node_name: true,
            ..DotStyle::default()
        };
        let expected = "strict digraph {
    Resource0 [label=\"a\"];
    Resource0 -> Resource1 [color = \"#246C60\"];
    Resource0 -> Resource2 [color = \"#246C60\"];
    Resource0 -> Resource3 [color = \"#246C60\", label = \"propA, propM, propZ\"];
    Resource1 [label=\"b\"];
    Resource1 -> Resource2 [color = \"#246C60\"];
    Resource2 [label=\"c\"];
    Resource3 [label=\"d\"];
}
";
        for _ in 0..10 {
            assert_eq!(
                dot(&[a.clone(), b.clone(), c.clone(), d.clone()], &style),
                expected
            );
        }
    }

    #[test]
    fn parent_edges_go_from_child_to_parent() {
        let provider = resource("urn:pulumi:dev::pets::pulumi:providers:random::provider");
        let parent = resource(&pets("parent"));
        let mut child = resource(&pets("child"));
        child.parent = Some(parent.urn.clone());
        let resources = [provider, parent, child];
        let short = DotStyle {
            short_node_name: true,
            ..DotStyle::default()
        };
        let text = dot(&resources, &short);
        for label in ["provider", "parent", "child"] {
            assert!(text.contains(&format!("[label=\"{label}\"]")), "{text}");
        }
        assert!(
            text.contains("    Resource1 -> Resource2 [color = \"#AA6639\"];\n"),
            "{text}"
        );
        let none = ResourceGraph::of(
            &resources,
            EdgeKinds {
                ignore_parent_edges: true,
                ..EdgeKinds::default()
            },
        );
        assert!(!none.to_dot(&short).contains(" -> "));
    }

    /// A name or colour that holds a quote cannot close its string and add attributes.
    #[test]
    fn labels_and_colours_are_escaped() {
        let a = resource(&pets(r#"x"] [URL="javascript:alert(1)"#));
        let style = DotStyle {
            short_node_name: true,
            dependency_edge_color: "red\" penwidth=\"9".into(),
            ..DotStyle::default()
        };
        let mut b = resource(&pets("b"));
        b.dependencies = vec![a.urn.clone()];
        b.property_dependencies
            .insert("tag\u{1b}]0;pwned\u{7}".into(), vec![a.urn.clone()]);
        let text = dot(&[a, b], &style);
        assert!(
            !text.chars().any(|c| c.is_control() && c != '\n'),
            "a raw control character: {text:?}"
        );
        assert!(
            text.contains(r#"label = "tag\\x1b]0;pwned\\x07""#),
            "{text}"
        );
        assert!(
            text.contains(r#"[label="x\"] [URL=\"javascript:alert(1)"]"#),
            "{text}"
        );
        assert!(text.contains(r#"color = "red\" penwidth=\"9""#), "{text}");
    }

    #[test]
    fn a_repeated_urn_is_one_node_and_repeats_its_edges() {
        let a = resource(&pets("a"));
        let mut old_b = resource(&pets("b"));
        old_b.delete = true;
        let mut b = resource(&pets("b"));
        b.dependencies = vec![a.urn.clone()];
        let graph = ResourceGraph::of(&[a, old_b, b], EdgeKinds::default());
        assert_eq!(graph.nodes.len(), 2);
        assert_eq!(
            graph.nodes[0].edges.len(),
            2,
            "once per entry, as in Pulumi"
        );
    }

    #[test]
    fn a_missing_dependency_is_drawn_not_a_panic() {
        let mut b = resource(&pets("b"));
        b.dependencies = vec![Urn::parse(&pets("gone")).unwrap()];
        let graph = ResourceGraph::of(&[b], EdgeKinds::default());
        assert_eq!(graph.nodes.len(), 2);
        assert!(
            graph
                .to_dot(&DotStyle::default())
                .contains("Resource1 -> Resource0")
        );
    }
}
