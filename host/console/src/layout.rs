//! The dependency graph laid out on the server, as positioned boxes and edge paths the page
//! draws (the browser only draws; it never lays out a graph), and the same picture as an SVG
//! file (`cairn stack graph --format svg`).
//!
//! The layout is Sugiyama's layered drawing (`rust-sugiyama`): dependencies above what depends
//! on them, parents above their children. A stack of up to [`WHOLE_GRAPH_LIMIT`] resources is
//! drawn whole (1,000 resources take about 0.3 s); the console draws a larger one as the
//! neighbourhood of one resource (what it depends on, what depends on it, its parent and
//! children, two hops out, at most [`NEIGHBOURHOOD_LIMIT`] resources), since a picture of
//! 10,000 boxes shows nothing anyway.
//!
//! # The console lays graphs out on the server, with Sugiyama's method
//!
//! A layered drawing (`rust-sugiyama`, on petgraph) is what people expect of a dependency graph,
//! and doing it on the server keeps the browser's main thread free and the page a drawing of boxes
//! and numeric paths. `layout-rs`, used first for `stack graph --format svg`, added a dummy node
//! per layer a long edge crosses and took 139 s for 10,000 resources (39 s for one 120-resource
//! neighbourhood with a long chain); `rust-sugiyama` takes 5.8 s and 16 ms. Graphs above 1,000
//! resources are shown as neighbourhoods: 10,000 boxes are not readable anyway.

use std::collections::{BTreeSet, VecDeque};
use std::fmt::Write as _;

use cairn_engine::state::graph::{EdgeKind, ResourceGraph};
use cairn_engine::text::visible_line;
use rust_sugiyama::configure::{Config, CrossingMinimization, RankingType};
use serde::Serialize;

/// Up to this many resources, the console draws the graph whole.
pub const WHOLE_GRAPH_LIMIT: usize = 1_000;
/// The most resources a neighbourhood shows.
pub const NEIGHBOURHOOD_LIMIT: usize = 200;
/// How many hops out a neighbourhood reaches.
const NEIGHBOURHOOD_DEPTH: usize = 2;
/// A box's height, and the width of one character of its label (12 px sans-serif).
const BOX_HEIGHT: f64 = 28.0;
const CHAR_WIDTH: f64 = 7.2;
const BOX_PADDING: f64 = 20.0;
/// Room between boxes, and around the drawing.
const SPACING: f64 = 24.0;
const MARGIN: f64 = 20.0;

/// A drawn graph: boxes with their places, and edges as SVG path data (numbers only).
#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Scene {
    /// Every resource is drawn (else a neighbourhood is).
    pub whole: bool,
    /// How many resources the stack's graph has.
    pub total: usize,
    /// The resource the neighbourhood is around.
    pub focus: Option<String>,
    /// Resources next to those drawn that the limit left out.
    pub omitted: usize,
    pub width: f64,
    pub height: f64,
    pub nodes: Vec<SceneNode>,
    pub edges: Vec<SceneEdge>,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct SceneNode {
    pub urn: String,
    /// The resource's name, made visible with [`visible_line`].
    pub label: String,
    #[serde(rename = "type")]
    pub resource_type: String,
    /// The box's top-left corner and size.
    pub x: f64,
    pub y: f64,
    pub w: f64,
    pub h: f64,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct SceneEdge {
    /// `dependency` (from a resource to one that depends on it) or `parent` (child to parent).
    pub kind: &'static str,
    /// Indexes into [`Scene::nodes`].
    pub from: usize,
    pub to: usize,
    /// The properties that carry a dependency (sorted); empty for parent edges.
    pub properties: Vec<String>,
    /// SVG path data: `M x y C …` with numbers only, so it is safe to set as an attribute.
    pub path: String,
}

/// The resources to draw: all of them (when there are at most [`WHOLE_GRAPH_LIMIT`] and no
/// focus), or the neighbourhood of `focus` (a URN; the stack resource when absent or unknown).
/// Returns the graph's node indexes, the focus, and how many neighbours were left out.
pub fn choose(graph: &ResourceGraph, focus: Option<&str>) -> (Vec<usize>, Option<usize>, usize) {
    let total = graph.nodes.len();
    let focused = focus.and_then(|f| graph.nodes.iter().position(|n| n.urn.as_str() == f));
    if total <= WHOLE_GRAPH_LIMIT && focused.is_none() {
        return ((0..total).collect(), None, 0);
    }
    let Some(start) = focused.or_else(|| root(graph)) else {
        return (Vec::new(), None, 0);
    };
    // Breadth first over edges in both directions, nearest first, until the limit; dependencies
    // before parents and children (a stack's thousands of children would crowd them out).
    let mut neighbours: Vec<Vec<usize>> = vec![Vec::new(); total];
    for kind in [EdgeKind::Dependency, EdgeKind::Parent] {
        for edge in graph.nodes.iter().flat_map(|n| &n.edges) {
            if edge.kind == kind {
                neighbours[edge.from].push(edge.to);
                neighbours[edge.to].push(edge.from);
            }
        }
    }
    let mut chosen = BTreeSet::from([start]);
    let mut queue = VecDeque::from([(start, 0)]);
    let mut omitted = BTreeSet::new();
    while let Some((at, depth)) = queue.pop_front() {
        if depth == NEIGHBOURHOOD_DEPTH {
            continue;
        }
        for &next in &neighbours[at] {
            if chosen.contains(&next) {
                continue;
            }
            if chosen.len() >= NEIGHBOURHOOD_LIMIT {
                omitted.insert(next);
                continue;
            }
            chosen.insert(next);
            queue.push_back((next, depth + 1));
        }
    }
    (chosen.into_iter().collect(), Some(start), omitted.len())
}

/// The stack resource, else the first resource without a parent.
fn root(graph: &ResourceGraph) -> Option<usize> {
    let stack = graph
        .nodes
        .iter()
        .position(|n| n.urn.resource_type() == "pulumi:pulumi:Stack");
    stack.or_else(|| {
        graph
            .nodes
            .iter()
            .position(|n| !n.edges.iter().any(|e| e.kind == EdgeKind::Parent))
    })
}

/// Lays out the chosen resources of `graph` (see [`choose`]) and the edges between them,
/// each box labelled by `label`.
pub fn scene(graph: &ResourceGraph, focus: Option<&str>) -> Scene {
    let (chosen, focused, omitted) = choose(graph, focus);
    let mut scene = lay_out(graph, &chosen, |urn| urn.name().to_owned());
    scene.whole = focused.is_none();
    scene.focus = focused.map(|i| graph.nodes[i].urn.as_str().to_owned());
    scene.omitted = omitted;
    scene
}

/// Lays out the resources `chosen` (indexes into `graph.nodes`) and the edges between them.
pub fn lay_out(
    graph: &ResourceGraph,
    chosen: &[usize],
    label: impl Fn(&cairn_engine::urn::Urn) -> String,
) -> Scene {
    let mut scene = Scene {
        whole: true,
        total: graph.nodes.len(),
        focus: None,
        omitted: 0,
        width: 0.0,
        height: 0.0,
        nodes: Vec::with_capacity(chosen.len()),
        edges: Vec::new(),
    };
    let mut slot = vec![usize::MAX; graph.nodes.len()];
    for (at, &index) in chosen.iter().enumerate() {
        slot[index] = at;
        let node = &graph.nodes[index];
        let text = visible_line(&label(&node.urn)).into_owned();
        let width = text.chars().count() as f64 * CHAR_WIDTH + BOX_PADDING;
        scene.nodes.push(SceneNode {
            urn: node.urn.as_str().to_owned(),
            label: text,
            resource_type: node.urn.resource_type().to_owned(),
            x: 0.0,
            y: 0.0,
            w: width,
            h: BOX_HEIGHT,
        });
    }
    for &index in chosen {
        for edge in &graph.nodes[index].edges {
            let (from, to) = (slot[edge.from], slot[edge.to]);
            if from == usize::MAX || to == usize::MAX || from == to {
                continue;
            }
            scene.edges.push(SceneEdge {
                kind: match edge.kind {
                    EdgeKind::Dependency => "dependency",
                    EdgeKind::Parent => "parent",
                },
                from,
                to,
                properties: edge.properties.clone(),
                path: String::new(),
            });
        }
    }
    if scene.nodes.is_empty() {
        return scene;
    }
    place(&mut scene);
    scene
}

/// Gives every box its place: each connected part laid out in layers, parts side by side.
fn place(scene: &mut Scene) {
    let widest = scene.nodes.iter().map(|n| n.w).fold(0.0, f64::max);
    let vertices: Vec<(u32, (f64, f64))> = scene
        .nodes
        .iter()
        .enumerate()
        .map(|(i, n)| (i as u32, (n.w, n.h)))
        .collect();
    // Downward edges: a dependency above its dependents, a parent above its children.
    let mut downward: Vec<(u32, u32)> = scene
        .edges
        .iter()
        .map(|e| match e.kind {
            "parent" => (e.to as u32, e.from as u32),
            _ => (e.from as u32, e.to as u32),
        })
        .collect();
    downward.sort_unstable();
    downward.dedup();
    let config = Config {
        vertex_spacing: SPACING,
        transpose: false,
        c_minimization: CrossingMinimization::Barycenter,
        ranking_type: RankingType::MinimizeEdgeLength,
        ..Config::default()
    };
    let parts = rust_sugiyama::from_vertices_and_edges(&vertices, &downward, &config);
    // The layout spaces layers by box height; rows get more room so edges stay readable.
    let row = BOX_HEIGHT * 2.5;
    let mut left = MARGIN;
    for (coordinates, _, _) in parts {
        let min_x = coordinates
            .iter()
            .map(|(_, (x, _))| *x)
            .fold(f64::INFINITY, f64::min);
        let min_y = coordinates
            .iter()
            .map(|(_, (_, y))| *y)
            .fold(f64::INFINITY, f64::min);
        let mut right = left;
        for (vertex, (x, y)) in coordinates {
            let Some(node) = scene.nodes.get_mut(vertex) else {
                continue;
            };
            // The layout gives centres; layers are a box height and its spacing apart.
            let layer = ((y - min_y) / (BOX_HEIGHT + SPACING)).round().max(0.0);
            node.x = left + (x - min_x) + widest / 2.0 - node.w / 2.0;
            node.y = MARGIN + layer * row;
            right = right.max(node.x + node.w);
            scene.height = scene.height.max(node.y + node.h + MARGIN);
        }
        left = right + SPACING * 2.0;
    }
    scene.width = left - SPACING * 2.0 + MARGIN;
    for edge in &mut scene.edges {
        edge.path = curve(&scene.nodes[edge.from], &scene.nodes[edge.to]);
    }
}

/// A curve from the side of `from` that faces `to` to the facing side of `to`.
fn curve(from: &SceneNode, to: &SceneNode) -> String {
    let number = |v: f64| {
        if v.is_finite() {
            (v * 10.0).round() / 10.0
        } else {
            0.0
        }
    };
    let (fx, tx) = (from.x + from.w / 2.0, to.x + to.w / 2.0);
    let (fy, ty) = if to.y >= from.y + from.h {
        (from.y + from.h, to.y)
    } else if from.y >= to.y + to.h {
        (from.y, to.y + to.h)
    } else {
        (from.y + from.h / 2.0, to.y + to.h / 2.0)
    };
    let bend = (ty - fy) / 2.0;
    let mut path = String::new();
    let _ = write!(
        path,
        "M {} {} C {} {}, {} {}, {} {}",
        number(fx),
        number(fy),
        number(fx),
        number(fy + bend),
        number(tx),
        number(ty - bend),
        number(tx),
        number(ty)
    );
    path
}

/// Colours and labels for [`to_svg`].
#[derive(Debug, Clone)]
pub struct SvgStyle {
    pub dependency_color: String,
    pub parent_color: String,
    /// Label dependency edges with the properties that carry them.
    pub edge_labels: bool,
}

/// The scene as a standalone SVG document; every label is escaped.
pub fn to_svg(scene: &Scene, style: &SvgStyle) -> String {
    let mut svg = String::new();
    let (w, h) = (scene.width.max(1.0), scene.height.max(1.0));
    let _ = writeln!(
        svg,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w:.0}\" height=\"{h:.0}\" viewBox=\"0 0 {w:.0} {h:.0}\" font-family=\"sans-serif\" font-size=\"12\">"
    );
    for (kind, color) in [
        ("dependency", &style.dependency_color),
        ("parent", &style.parent_color),
    ] {
        let _ = writeln!(
            svg,
            "<defs><marker id=\"{kind}\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" markerWidth=\"7\" markerHeight=\"7\" orient=\"auto-start-reverse\"><path d=\"M 0 0 L 10 5 L 0 10 z\" fill=\"{}\"/></marker></defs>",
            xml_escape(color)
        );
    }
    for edge in &scene.edges {
        let color = if edge.kind == "parent" {
            &style.parent_color
        } else {
            &style.dependency_color
        };
        let dash = if edge.kind == "parent" {
            " stroke-dasharray=\"4 3\""
        } else {
            ""
        };
        let _ = writeln!(
            svg,
            "<path d=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"1.3\"{dash} marker-end=\"url(#{})\"/>",
            edge.path,
            xml_escape(color),
            edge.kind
        );
        if style.edge_labels && !edge.properties.is_empty() {
            let (from, to) = (&scene.nodes[edge.from], &scene.nodes[edge.to]);
            let x = (from.x + from.w / 2.0 + to.x + to.w / 2.0) / 2.0;
            let y = (from.y + from.h + to.y) / 2.0;
            let text = visible_line(&edge.properties.join(", ")).into_owned();
            let _ = writeln!(
                svg,
                "<text x=\"{x:.1}\" y=\"{y:.1}\" fill=\"#555\" font-size=\"10\">{}</text>",
                xml_escape(&text)
            );
        }
    }
    for node in &scene.nodes {
        let _ = writeln!(
            svg,
            "<g><title>{}</title><rect x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\" rx=\"4\" fill=\"#fff\" stroke=\"#8aa0b4\"/><text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\" dominant-baseline=\"central\">{}</text></g>",
            xml_escape(&visible_line(&node.urn)),
            node.x,
            node.y,
            node.w,
            node.h,
            node.x + node.w / 2.0,
            node.y + node.h / 2.0,
            xml_escape(&node.label)
        );
    }
    svg.push_str("</svg>\n");
    svg
}

/// Text and attribute values escaped for XML.
fn xml_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use cairn_engine::state::graph::EdgeKinds;
    use cairn_engine::state::{Resource, ResourceV3};

    use super::*;

    fn resource(name: &str, parent: Option<&str>, deps: &[&str]) -> ResourceV3 {
        let urn = |n: &str| {
            let t = if n == "stack" {
                "pulumi:pulumi:Stack"
            } else {
                "pkg:index:Thing"
            };
            format!("urn:pulumi:dev::proj::{t}::{n}")
                .parse::<cairn_engine::urn::Urn>()
                .unwrap()
        };
        let mut r: ResourceV3 = serde_json::from_value(serde_json::json!({
            "urn": urn(name).to_string(),
            "type": if name == "stack" { "pulumi:pulumi:Stack" } else { "pkg:index:Thing" },
        }))
        .unwrap();
        r.parent = parent.map(urn);
        r.dependencies = deps.iter().map(|d| urn(d)).collect();
        r
    }

    fn graph(resources: &[Resource<cairn_engine::state::JsonMap>]) -> ResourceGraph {
        ResourceGraph::of(resources, EdgeKinds::default())
    }

    #[test]
    fn a_small_stack_is_drawn_whole_with_every_edge() {
        let resources = vec![
            resource("stack", None, &[]),
            resource("a", Some("stack"), &[]),
            resource("b", Some("stack"), &["a"]),
        ];
        let scene = scene(&graph(&resources), None);
        assert!(scene.whole);
        assert_eq!(scene.nodes.len(), 3);
        let kinds: Vec<_> = scene.edges.iter().map(|e| e.kind).collect();
        assert_eq!(kinds.iter().filter(|k| **k == "parent").count(), 2);
        assert_eq!(kinds.iter().filter(|k| **k == "dependency").count(), 1);
        for edge in &scene.edges {
            assert!(edge.path.starts_with("M "), "{}", edge.path);
            assert!(
                edge.path
                    .chars()
                    .all(|c| c.is_ascii_digit() || " .,-MCS".contains(c)),
                "{}",
                edge.path
            );
        }
        for node in &scene.nodes {
            assert!(node.w > 0.0 && node.h > 0.0);
            assert!(node.x + node.w <= scene.width && node.y + node.h <= scene.height);
        }
    }

    #[test]
    fn a_large_stack_is_drawn_as_a_bounded_neighbourhood() {
        let mut resources = vec![resource("stack", None, &[])];
        let names: Vec<String> = (0..WHOLE_GRAPH_LIMIT + 50)
            .map(|i| format!("r{i}"))
            .collect();
        for (i, name) in names.iter().enumerate() {
            let deps: Vec<&str> = if i > 0 {
                vec![names[i - 1].as_str()]
            } else {
                vec![]
            };
            resources.push(resource(name, Some("stack"), &deps));
        }
        let g = graph(&resources);
        let around_stack = scene(&g, None);
        assert!(!around_stack.whole);
        assert!(around_stack.focus.as_deref().unwrap().ends_with("::stack"));
        assert_eq!(around_stack.nodes.len(), NEIGHBOURHOOD_LIMIT);
        assert!(around_stack.omitted > 0);
        // Around r200: its chain neighbours two hops each way, and the stack (its parent).
        let focus = "urn:pulumi:dev::proj::pkg:index:Thing::r200";
        let around = scene(&g, Some(focus));
        assert_eq!(around.focus.as_deref(), Some(focus));
        assert!(around.nodes.len() <= NEIGHBOURHOOD_LIMIT);
        let labels: Vec<&str> = around.nodes.iter().map(|n| n.label.as_str()).collect();
        for near in ["r198", "r199", "r200", "r201", "r202", "stack"] {
            assert!(labels.contains(&near), "{near} missing from {labels:?}");
        }
    }

    #[test]
    fn an_empty_stack_draws_nothing() {
        let scene = scene(&graph(&[]), None);
        assert!(scene.nodes.is_empty() && scene.edges.is_empty());
    }
}
