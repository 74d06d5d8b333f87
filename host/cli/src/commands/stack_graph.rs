//! `cairn stack graph`: the stack's resources and how they depend on each other, as the DOT
//! text Pulumi's `stack graph` writes (for Graphviz) or as an SVG picture Cairn lays out itself.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result, anyhow, bail};
use cairn_engine::state::graph::{
    DEPENDENCY_EDGE_COLOR, DotStyle, EdgeKind, EdgeKinds, PARENT_EDGE_COLOR, ResourceGraph,
};
use cairn_engine::text::visible_line;
use clap::{Args, ValueEnum};
use layout::backends::svg::SVGWriter;
use layout::core::base::Orientation;
use layout::core::color::Color;
use layout::core::geometry::{get_size_for_str, pad_shape_scalar};
use layout::core::style::StyleAttr;
use layout::std_shapes::shapes::{Arrow, Element, ShapeKind};
use layout::topo::layout::VisualGraph;

use crate::stack::Stack;
use crate::terminal::errln;
use crate::workspace::Workspace;

#[derive(Debug, Args)]
pub struct GraphArgs {
    /// Where to write the graph (standard output if absent).
    #[arg(value_name = "FILE")]
    file: Option<PathBuf>,
    /// `dot` (Graphviz's language, as `pulumi stack graph` writes it) or `svg` (a picture);
    /// by default `svg` for a FILE ending in `.svg`, else `dot`.
    #[arg(long, value_enum)]
    format: Option<GraphFormat>,
    /// Leave out the edges from a child to its parent.
    #[arg(long)]
    ignore_parent_edges: bool,
    /// Leave out the edges from a resource to what depends on it.
    #[arg(long)]
    ignore_dependency_edges: bool,
    /// The colour of dependency edges (a name or `#RRGGBB`).
    #[arg(long, value_name = "COLOR", default_value = DEPENDENCY_EDGE_COLOR)]
    dependency_edge_color: String,
    /// The colour of parent edges (a name or `#RRGGBB`).
    #[arg(long, value_name = "COLOR", default_value = PARENT_EDGE_COLOR)]
    parent_edge_color: String,
    /// Label each resource with its name instead of its URN.
    #[arg(long)]
    short_node_name: bool,
    /// DOT statements to put right after the graph's header (`--format dot`).
    #[arg(long, value_name = "DOT")]
    dot_fragment: Option<String>,
}

/// From how many resources the SVG layout gets slow (it grows faster than linearly: measured
/// 0.35 s for 1,000 resources, 5 s for 3,000, 139 s for 10,000).
const SLOW_LAYOUT_FROM: usize = 2_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum GraphFormat {
    Dot,
    Svg,
}

pub fn run(workspace: &Workspace, args: GraphArgs) -> Result<()> {
    let format = args.format.unwrap_or_else(|| {
        let svg = args
            .file
            .as_deref()
            .and_then(Path::extension)
            .is_some_and(|e| e.eq_ignore_ascii_case("svg"));
        if svg {
            GraphFormat::Svg
        } else {
            GraphFormat::Dot
        }
    });
    if format == GraphFormat::Svg && args.dot_fragment.is_some() {
        bail!("--dot-fragment applies to --format dot only");
    }
    let stack = Stack::current(workspace)?;
    // The stored form: the graph needs URNs and dependencies only, so no secret is decrypted.
    let deployment = workspace
        .backend
        .latest_as_stored(stack.project(), &stack.name)?
        .ok_or_else(|| {
            anyhow!(
                "stack {:?} has no deployment to draw: run `cairn up` first",
                stack.name
            )
        })?;
    let kinds = EdgeKinds {
        ignore_dependency_edges: args.ignore_dependency_edges,
        ignore_parent_edges: args.ignore_parent_edges,
    };
    let graph = ResourceGraph::of(&deployment.resources, kinds);
    let style = DotStyle {
        short_node_name: args.short_node_name,
        dependency_edge_color: args.dependency_edge_color,
        parent_edge_color: args.parent_edge_color,
        fragment: args.dot_fragment,
    };
    if format == GraphFormat::Svg && graph.nodes.len() > SLOW_LAYOUT_FROM {
        errln!(
            "note: laying out {} resources takes a while (10,000 take minutes); `--format dot` \
             with Graphviz's `dot -Tsvg` is faster for a stack this large",
            graph.nodes.len()
        );
    }
    let text = match format {
        GraphFormat::Dot => graph.to_dot(&style),
        GraphFormat::Svg => to_svg(&graph, &style)?,
    };
    match &args.file {
        Some(path) => {
            std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))?;
            errln!("Wrote stack dependency graph to `{}`", path.display());
        }
        None => std::io::stdout().write_all(text.as_bytes())?,
    }
    Ok(())
}

/// The graph laid out and drawn as SVG. Every label goes through the SVG writer's escaping,
/// so a name holding markup stays text.
fn to_svg(graph: &ResourceGraph, style: &DotStyle) -> Result<String> {
    let color = |flag: &str, value: &str| {
        Color::from_name(value).ok_or_else(|| {
            anyhow!("--{flag}: {value:?} is not a colour (a name such as `red`, or `#RRGGBB`)")
        })
    };
    let dependency = color("dependency-edge-color", &style.dependency_edge_color)?;
    let parent = color("parent-edge-color", &style.parent_edge_color)?;
    let mut picture = VisualGraph::new(Orientation::TopToBottom);
    let look = StyleAttr::simple();
    let handles: Vec<_> = graph
        .nodes
        .iter()
        .map(|node| {
            let label = if style.short_node_name {
                node.urn.name()
            } else {
                node.urn.as_str()
            };
            // The writer escapes markup; characters unsafe to show are made visible first.
            let label = visible_line(label);
            let size = pad_shape_scalar(get_size_for_str(&label, look.font_size), 10.0);
            picture.add_node(Element::create(
                ShapeKind::new_box(&label),
                look.clone(),
                Orientation::LeftToRight,
                size,
            ))
        })
        .collect();
    for node in &graph.nodes {
        for edge in &node.edges {
            let mut arrow = Arrow::simple(&visible_line(&edge.properties.join(", ")));
            arrow.look.line_color = match edge.kind {
                EdgeKind::Dependency => dependency,
                EdgeKind::Parent => parent,
            };
            picture.add_edge(arrow, handles[edge.from], handles[edge.to]);
        }
    }
    if graph.nodes.is_empty() {
        // Nothing to lay out (the layout wants a node): an empty picture.
        return Ok(
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"0\" height=\"0\"></svg>\n".into(),
        );
    }
    let mut svg = SVGWriter::new();
    picture.do_it(false, false, false, &mut svg);
    Ok(svg.finalize())
}
