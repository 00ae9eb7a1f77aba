//! The oracle's module graph: imports point one way (operations -> wire base -> vocabulary), no
//! operation imports another (what operations share lives in the wire base or in a shared
//! module no operation owns), and no two oracle modules import each other, directly or around a
//! circle. Unit-test modules (`tests`, `*_tests`, `privacy_canary`) may import anything.
//!
//! The graph is read from the source: every `crate::a::b` and `super::a` path outside a comment
//! names the deepest module of `oracle/src` it reaches; a reference from a module to one of its
//! own ancestors (a child using its family's shared items) is not an edge. A path the resolution
//! misses makes the check weaker, never wrong: it can only drop an edge.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use super::files::rust_sources;

type Graph = BTreeMap<String, BTreeSet<String>>;

/// The module path of a source file below `src` (`trace/mod.rs` -> `trace`; `lib.rs` -> ``).
fn module_of(src: &Path, file: &Path) -> String {
    let rel = file
        .strip_prefix(src)
        .expect("below src")
        .with_extension("");
    let mut parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if matches!(
        parts.last().map(String::as_str),
        Some("mod" | "lib" | "main")
    ) {
        parts.pop();
    }
    parts.join("::")
}

/// The `[a-z0-9_]` identifiers of a path that starts at `at` in `line`, split on `::`.
fn path_after(line: &str, at: usize) -> Vec<&str> {
    let rest = &line[at..];
    let end = rest
        .find(|c: char| !(c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == ':'))
        .unwrap_or(rest.len());
    rest[..end].split("::").filter(|s| !s.is_empty()).collect()
}

/// The deepest known module that `prefix` followed by `path` names.
fn resolve(modules: &BTreeSet<String>, prefix: &[&str], path: &[&str]) -> Option<String> {
    (1..=path.len()).rev().find_map(|k| {
        let name = prefix
            .iter()
            .chain(&path[..k])
            .copied()
            .collect::<Vec<_>>()
            .join("::");
        modules.contains(&name).then_some(name)
    })
}

/// The edges from `module` (whose text is `text`) to the other modules it names.
fn edges_of(modules: &BTreeSet<String>, module: &str, text: &str) -> BTreeSet<String> {
    let own: Vec<&str> = module.split("::").filter(|s| !s.is_empty()).collect();
    // `super` from `a/b.rs` (module a::b) is `a`; from `a/b/mod.rs` (also a::b) it is `a` too.
    let parent = &own[..own.len().saturating_sub(1)];
    let mut out = BTreeSet::new();
    for line in text.lines().filter(|l| !l.trim_start().starts_with("//")) {
        for (at, _) in line.match_indices("crate::") {
            if let Some(m) = resolve(modules, &[], &path_after(line, at + "crate::".len())) {
                out.insert(m);
            }
        }
        for (at, _) in line.match_indices("super::") {
            if at >= 7 && &line[at - 7..at] == "super::" {
                continue; // `super::super::`: rare, and resolved from the first `super::`
            }
            if let Some(m) = resolve(modules, parent, &path_after(line, at + "super::".len())) {
                out.insert(m);
            }
        }
    }
    out.retain(|m| m != module && !is_ancestor(m, module));
    out
}

fn is_ancestor(a: &str, of: &str) -> bool {
    a.is_empty() || of.starts_with(&format!("{a}::"))
}

/// Whether `m` is a unit-test module (compiled only into the library's test binary), whose
/// imports the layering does not constrain.
fn is_test_module(m: &str) -> bool {
    let last = m.rsplit("::").next().unwrap_or(m);
    last == "tests" || last.ends_with("_tests") || last == "privacy_canary"
}

/// The oracle's module graph, read from its sources (unit-test modules left out), and its
/// operation modules: those that define an operation (`impl Operation for`).
fn oracle_modules() -> (Graph, BTreeSet<String>) {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("oracle/src");
    let mut files = Vec::new();
    rust_sources(&src, &mut files);
    let modules: BTreeSet<String> = files.iter().map(|f| module_of(&src, f)).collect();
    let mut operations = BTreeSet::new();
    let graph = files
        .iter()
        .filter(|f| !is_test_module(&module_of(&src, f)))
        .map(|f| {
            let m = module_of(&src, f);
            let text = std::fs::read_to_string(f).expect("read a source file");
            if text.contains("impl Operation for ") {
                operations.insert(m.clone());
            }
            let e = edges_of(&modules, &m, &text);
            (m, e)
        })
        .collect();
    (graph, operations)
}

/// The oracle's module graph, read from its sources.
fn oracle_graph() -> Graph {
    oracle_modules().0
}

/// The operation `m` belongs to: itself or its nearest ancestor that defines an operation.
fn operation_of<'a>(operations: &'a BTreeSet<String>, m: &str) -> Option<&'a String> {
    operations
        .iter()
        .filter(|o| *o == m || is_ancestor(o, m))
        .max_by_key(|o| o.len())
}

/// The edges from (a module of) one operation to (a module of) another.
fn operations_importing_others(g: &Graph, operations: &BTreeSet<String>) -> Vec<String> {
    let mut out = Vec::new();
    for (a, bs) in g {
        let Some(from) = operation_of(operations, a) else {
            continue;
        };
        for b in bs {
            if operation_of(operations, b).is_some_and(|to| to != from) {
                out.push(format!("{a} -> {b}"));
            }
        }
    }
    out
}

/// One circle of the graph (`a -> b -> a`), if there is any.
fn a_circle(g: &Graph) -> Option<Vec<String>> {
    fn visit(
        g: &Graph,
        u: &str,
        state: &mut BTreeMap<String, u8>,
        stack: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        state.insert(u.to_owned(), 1);
        stack.push(u.to_owned());
        for v in g.get(u).into_iter().flatten() {
            match state.get(v) {
                Some(1) => {
                    let from = stack.iter().position(|s| s == v).expect("on the stack");
                    let mut circle = stack[from..].to_vec();
                    circle.push(v.clone());
                    return Some(circle);
                }
                Some(_) => {}
                None => {
                    if let Some(c) = visit(g, v, state, stack) {
                        return Some(c);
                    }
                }
            }
        }
        stack.pop();
        state.insert(u.to_owned(), 2);
        None
    }
    let mut state = BTreeMap::new();
    g.keys().find_map(|u| {
        if state.contains_key(u) {
            None
        } else {
            visit(g, u, &mut state, &mut Vec::new())
        }
    })
}

/// The top-level family of a module (`ops::leases::run` -> `ops`).
fn family(m: &str) -> &str {
    m.split("::").next().unwrap_or(m)
}

/// The families each family may import: operations -> wire base; the corpus, the trace checker
/// and the schemas over operations; the CLI over everything.
const MAY_IMPORT: [(&str, &[&str]); 9] = [
    ("wire", &[]),
    ("ops", &["wire"]),
    ("corpus", &["ops", "wire"]),
    ("trace", &["ops", "wire"]),
    ("schema", &["corpus", "ops", "wire"]),
    ("workload", &["corpus", "ops", "wire"]),
    ("vectors", &["corpus"]),
    (
        "cli",
        &["corpus", "ops", "schema", "trace", "wire", "workload"],
    ),
    (
        "",
        &[
            "cli", "corpus", "ops", "schema", "trace", "vectors", "wire", "workload",
        ],
    ),
];

fn wrong_way(g: &Graph) -> Vec<String> {
    let allowed: BTreeMap<&str, &[&str]> = MAY_IMPORT.into_iter().collect();
    let mut out = Vec::new();
    for (a, bs) in g {
        for b in bs {
            let (fa, fb) = (family(a), family(b));
            if fa != fb && !allowed.get(fa).is_some_and(|ok| ok.contains(&fb)) {
                out.push(format!("{a} -> {b}"));
            }
        }
    }
    out
}

#[test]
fn no_two_oracle_modules_import_each_other() {
    let g = oracle_graph();
    assert!(
        g.len() > 40,
        "the oracle's modules were found: {:?}",
        g.keys()
    );
    assert!(
        g["cli::check"].contains("trace"),
        "the graph sees imports: {:?}",
        g["cli::check"]
    );
    if let Some(c) = a_circle(&g) {
        panic!("an import circle among oracle modules: {}", c.join(" -> "));
    }
}

#[test]
fn oracle_imports_point_one_way() {
    let wrong = wrong_way(&oracle_graph());
    assert!(wrong.is_empty(), "imports against the layering: {wrong:?}");
}

#[test]
fn no_operation_imports_another() {
    let (g, operations) = oracle_modules();
    assert!(
        operations.len() >= 21 && operations.contains("ops::node"),
        "the operations were found: {operations:?}"
    );
    let wrong = operations_importing_others(&g, &operations);
    assert!(wrong.is_empty(), "operations importing another: {wrong:?}");
}

#[test]
fn the_module_graph_checks_can_fail() {
    let modules: BTreeSet<String> = [
        "",
        "wire",
        "wire::input",
        "wire::convert",
        "ops",
        "ops::verify",
    ]
    .map(str::to_owned)
    .into();
    let e = edges_of(
        &modules,
        "wire::input",
        "// crate::ops is only a comment\nuse super::convert::entry; use crate::ops::verify::Case;",
    );
    assert_eq!(
        e,
        ["ops::verify", "wire::convert"].map(str::to_owned).into()
    );
    let mut g: Graph = BTreeMap::new();
    g.insert("wire::input".into(), e);
    g.insert("wire::convert".into(), ["wire::input".to_owned()].into());
    assert_eq!(
        a_circle(&g),
        Some(
            ["wire::convert", "wire::input", "wire::convert"]
                .map(str::to_owned)
                .to_vec()
        )
    );
    assert_eq!(wrong_way(&g), ["wire::input -> ops::verify"]);
    // One operation (or a module of it) importing another is found; its own modules, the
    // operations' root and modules no operation owns are not.
    let operations: BTreeSet<String> = ["ops::node", "ops::trust", "ops::artifacts::offload"]
        .map(str::to_owned)
        .into();
    let mut g: Graph = BTreeMap::new();
    g.insert(
        "ops::trust".into(),
        [
            "ops::node::drive",
            "ops",
            "ops::artifacts::offload_decision",
        ]
        .map(str::to_owned)
        .into(),
    );
    g.insert("ops::node::drive".into(), ["ops::node".to_owned()].into());
    g.insert(
        "ops::artifacts::offload".into(),
        ["ops::artifacts::offload_decision".to_owned()].into(),
    );
    assert_eq!(
        operations_importing_others(&g, &operations),
        ["ops::trust -> ops::node::drive"]
    );
}
