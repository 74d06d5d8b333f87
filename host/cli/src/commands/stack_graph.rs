//! `cairn stack graph`: the stack's resources and how they depend on each other, as the DOT
//! text Pulumi's `stack graph` writes (for Graphviz) or as an SVG picture Cairn lays out itself.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result, anyhow, bail};
use cairn_console::layout::{self, SvgStyle};
use cairn_engine::state::graph::{
    DEPENDENCY_EDGE_COLOR, DotStyle, EdgeKinds, PARENT_EDGE_COLOR, ResourceGraph,
};
use clap::{Args, ValueEnum};

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

/// From how many resources the SVG layout takes seconds (it grows faster than linearly:
/// measured 0.23 s for 1,000 resources, 1.1 s for 3,000, 5.8 s for 10,000;
/// `cargo bench -p cairn-console --bench console`).
const SLOW_LAYOUT_FROM: usize = 5_000;

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
            "note: laying out {} resources takes seconds (10,000 take about 6); `--format dot` \
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

/// The graph laid out and drawn as SVG, with the console's layout; every label is escaped.
fn to_svg(graph: &ResourceGraph, style: &DotStyle) -> Result<String> {
    for (flag, value) in [
        ("dependency-edge-color", &style.dependency_edge_color),
        ("parent-edge-color", &style.parent_edge_color),
    ] {
        if !is_svg_colour(value) {
            bail!("--{flag}: {value:?} is not a colour (a name such as `red`, or `#RRGGBB`)");
        }
    }
    let every: Vec<usize> = (0..graph.nodes.len()).collect();
    let scene = layout::lay_out(graph, &every, |urn| {
        if style.short_node_name {
            urn.name().to_owned()
        } else {
            urn.as_str().to_owned()
        }
    });
    Ok(layout::to_svg(
        &scene,
        &SvgStyle {
            dependency_color: style.dependency_edge_color.clone(),
            parent_color: style.parent_edge_color.clone(),
            edge_labels: true,
        },
    ))
}

/// A colour SVG understands: a name (letters only) or `#RGB` / `#RRGGBB`.
fn is_svg_colour(value: &str) -> bool {
    match value.strip_prefix('#') {
        Some(hex) => matches!(hex.len(), 3 | 6) && hex.chars().all(|c| c.is_ascii_hexdigit()),
        None => !value.is_empty() && value.chars().all(|c| c.is_ascii_alphabetic()),
    }
}
