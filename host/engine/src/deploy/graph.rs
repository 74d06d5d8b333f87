//! The dependency graph of recorded resources: what a resource depends on, who depends on it,
//! and the order in which a set of resources can be deleted.

use std::collections::{HashMap, HashSet};

use petgraph::Direction;
use petgraph::graph::{DiGraph, NodeIndex};

use crate::state::ResourceState;
use crate::urn::Urn;

/// Every resource `resource` depends on: parent, explicit and property dependencies, the
/// `deletedWith` target, and its provider.
pub fn dependencies_of(resource: &ResourceState) -> impl Iterator<Item = &Urn> {
    resource
        .parent
        .iter()
        .chain(&resource.dependencies)
        .chain(resource.property_dependencies.values().flatten())
        .chain(&resource.deleted_with)
        .chain(resource.provider.as_ref().map(|p| &p.urn))
}

/// The protected resources and everything they depend on, transitively, in state order:
/// what `destroy --exclude-protected` leaves (as Pulumi's `getProtectedExcludes`).
pub fn protected_and_their_dependencies(resources: &[ResourceState]) -> Vec<Urn> {
    let by_urn: HashMap<&Urn, &ResourceState> = resources.iter().map(|r| (&r.urn, r)).collect();
    let mut kept: HashSet<&Urn> = HashSet::new();
    let mut stack: Vec<&ResourceState> = resources.iter().filter(|r| r.protect).collect();
    while let Some(resource) = stack.pop() {
        if !kept.insert(&resource.urn) {
            continue;
        }
        stack.extend(dependencies_of(resource).filter_map(|urn| by_urn.get(urn).copied()));
    }
    resources
        .iter()
        .filter(|r| kept.contains(&r.urn))
        .map(|r| r.urn.clone())
        .collect()
}

/// Everything the `roots` depend on, transitively, by URN, among `resources` (every copy of a
/// URN counts): what must stay while they do (Pulumi's `TransitiveDependenciesOf`).
pub fn transitive_dependencies<'r>(
    resources: impl IntoIterator<Item = &'r ResourceState>,
    roots: impl IntoIterator<Item = &'r ResourceState>,
) -> HashSet<&'r Urn> {
    let mut by_urn: HashMap<&Urn, Vec<&ResourceState>> = HashMap::new();
    for resource in resources {
        by_urn.entry(&resource.urn).or_default().push(resource);
    }
    let mut reached: HashSet<&Urn> = HashSet::new();
    let mut stack: Vec<&ResourceState> = roots.into_iter().collect();
    while let Some(resource) = stack.pop() {
        for dependency in dependencies_of(resource) {
            if reached.insert(dependency) {
                stack.extend(by_urn.get(dependency).into_iter().flatten());
            }
        }
    }
    reached
}

/// A graph over a list of resources; an edge runs from a dependency to its dependent.
pub struct DependencyGraph {
    graph: DiGraph<usize, ()>,
}

impl DependencyGraph {
    /// Builds the graph of `resources` (indices are positions in the slice). References to
    /// resources outside the slice are ignored.
    pub fn new(resources: &[&ResourceState]) -> DependencyGraph {
        let mut graph = DiGraph::with_capacity(resources.len(), resources.len());
        let nodes: Vec<NodeIndex> = (0..resources.len()).map(|i| graph.add_node(i)).collect();
        let mut by_urn: HashMap<&Urn, Vec<NodeIndex>> = HashMap::new();
        for (i, resource) in resources.iter().enumerate() {
            by_urn.entry(&resource.urn).or_default().push(nodes[i]);
        }
        for (i, resource) in resources.iter().enumerate() {
            let mut seen = HashSet::new();
            for dependency in dependencies_of(resource) {
                if !seen.insert(dependency) {
                    continue;
                }
                for &from in by_urn.get(dependency).into_iter().flatten() {
                    if from != nodes[i] {
                        graph.add_edge(from, nodes[i], ());
                    }
                }
            }
        }
        DependencyGraph { graph }
    }

    /// Deletion order: a list of antichains, dependents before what they depend on. The
    /// resources within one antichain do not depend on each other and may be deleted in
    /// parallel; antichains must run one after another. Cycles (which a valid state never has)
    /// are broken by putting the remaining resources in one final antichain.
    pub fn delete_antichains(&self) -> Vec<Vec<usize>> {
        let mut remaining_dependents: Vec<usize> = self
            .graph
            .node_indices()
            .map(|n| {
                self.graph
                    .neighbors_directed(n, Direction::Outgoing)
                    .count()
            })
            .collect();
        let mut done = vec![false; remaining_dependents.len()];
        let mut layers = Vec::new();
        let mut left = remaining_dependents.len();
        while left > 0 {
            let layer: Vec<usize> = (0..remaining_dependents.len())
                .filter(|&i| !done[i] && remaining_dependents[i] == 0)
                .collect();
            if layer.is_empty() {
                layers.push((0..done.len()).filter(|&i| !done[i]).collect());
                break;
            }
            for &i in &layer {
                done[i] = true;
                left -= 1;
                for dependency in self
                    .graph
                    .neighbors_directed(NodeIndex::new(i), Direction::Incoming)
                {
                    remaining_dependents[dependency.index()] -= 1;
                }
            }
            layers.push(layer);
        }
        layers
    }

    /// Every resource that depends on `root`, directly or transitively, in slice order (which
    /// is topological for a snapshot's resources: integrity puts dependencies first).
    pub fn transitive_dependents(&self, root: usize) -> Vec<usize> {
        let mut reached = HashSet::new();
        let mut stack = vec![NodeIndex::new(root)];
        while let Some(node) = stack.pop() {
            for next in self.graph.neighbors_directed(node, Direction::Outgoing) {
                if reached.insert(next.index()) {
                    stack.push(next);
                }
            }
        }
        let mut order: Vec<usize> = reached.into_iter().collect();
        order.sort_unstable();
        order
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::urn::TypeToken;

    fn res(name: &str, deps: &[&str]) -> ResourceState {
        let urn = |n: &str| Urn::parse(&format!("urn:pulumi:s::p::t:m:R::{n}")).unwrap();
        let mut r = ResourceState::new(urn(name), TypeToken::parse("t:m:R").unwrap(), true);
        r.dependencies = deps.iter().map(|d| urn(d)).collect();
        r
    }

    #[test]
    fn protected_resources_keep_what_they_depend_on() {
        // d (protected) depends on b, which depends on a; c depends on a but is not protected.
        let mut all = [
            res("a", &[]),
            res("b", &["a"]),
            res("c", &["a"]),
            res("d", &["b"]),
        ];
        all[3].protect = true;
        let names: Vec<String> = protected_and_their_dependencies(&all)
            .iter()
            .map(|u| u.name().to_owned())
            .collect();
        assert_eq!(names, ["a", "b", "d"]);
        all[3].protect = false;
        assert!(protected_and_their_dependencies(&all).is_empty());
    }

    #[test]
    fn deletes_run_dependents_first_in_parallel_layers() {
        // The spec's example: b dependsOn a, c uses a, d uses b.
        let all = [
            res("a", &[]),
            res("b", &["a"]),
            res("c", &["a"]),
            res("d", &["b"]),
        ];
        let refs: Vec<&ResourceState> = all.iter().collect();
        let graph = DependencyGraph::new(&refs);
        assert_eq!(
            graph.delete_antichains(),
            vec![vec![2, 3], vec![1], vec![0]]
        );
        assert_eq!(graph.transitive_dependents(0), vec![1, 2, 3]);
        assert_eq!(graph.transitive_dependents(1), vec![3]);
        assert!(graph.transitive_dependents(3).is_empty());
    }

    #[test]
    fn parents_and_providers_are_dependencies() {
        let mut child = res("child", &[]);
        child.parent = Some(res("parent", &[]).urn);
        let all = [res("parent", &[]), child];
        let refs: Vec<&ResourceState> = all.iter().collect();
        assert_eq!(
            DependencyGraph::new(&refs).delete_antichains(),
            vec![vec![1], vec![0]]
        );
    }

    #[test]
    fn independent_resources_form_one_antichain() {
        let all = [res("a", &[]), res("b", &[]), res("c", &["gone"])];
        let refs: Vec<&ResourceState> = all.iter().collect();
        assert_eq!(
            DependencyGraph::new(&refs).delete_antichains(),
            vec![vec![0, 1, 2]]
        );
    }
}
