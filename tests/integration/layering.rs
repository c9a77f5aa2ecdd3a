//! The crate's module graph, read from its sources: no import circles between modules, and
//! no layer importing a higher one (ARCHITECTURE.md's table).
//!
//! An edge `a -> b` is any path `crate::b::…` (in a `use`, nested braces expanded, or inline)
//! or `super::…` resolved from module `a`, mapped to the longest module that exists. Edges to
//! a module's own ancestors are not counted (a `mod.rs` declares and re-exports its children;
//! reaching a sibling through the parent's re-export is still an edge to the parent only).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use crate::common::repo_path;

/// Module path (`datafusion::format`) of a source file under `src/`.
fn module_of(rel: &Path) -> String {
    let mut parts: Vec<String> = rel.iter().map(|p| p.to_string_lossy().into_owned()).collect();
    let last = parts.pop().unwrap_or_default();
    let stem = last.trim_end_matches(".rs");
    if stem != "mod" && stem != "lib" {
        parts.push(stem.to_string());
    }
    parts.join("::")
}

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// Strip `//` comments (doc comments included) and string literals, so that paths named in
/// prose or messages do not count.
fn code_only(src: &str) -> String {
    let mut out = String::with_capacity(src.len());
    for line in src.lines() {
        let mut in_str = false;
        let mut prev = ' ';
        let mut kept = String::new();
        let chars: Vec<char> = line.chars().collect();
        let mut i = 0;
        while i < chars.len() {
            let c = chars[i];
            if !in_str && c == '/' && chars.get(i + 1) == Some(&'/') {
                break;
            }
            if c == '"' && prev != '\\' {
                in_str = !in_str;
            } else if !in_str {
                kept.push(c);
            }
            prev = if prev == '\\' && c == '\\' { ' ' } else { c };
            i += 1;
        }
        out.push_str(&kept);
        out.push('\n');
    }
    out
}

/// Expand `a::{b, c::{d, e}}` into `a::b`, `a::c::d`, `a::c::e`.
fn expand(tree: &str) -> Vec<String> {
    let tree = tree.trim();
    let Some(open) = tree.find('{') else { return vec![tree.to_string()] };
    let prefix = &tree[..open];
    let inner = tree[open + 1..].trim_end().strip_suffix('}').unwrap_or(&tree[open + 1..]);
    let mut items = Vec::new();
    let (mut depth, mut start) = (0, 0);
    for (i, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                items.push(&inner[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    items.push(&inner[start..]);
    items.into_iter().filter(|s| !s.trim().is_empty()).flat_map(expand).map(|s| format!("{prefix}{s}")).collect()
}

/// Every `crate::…` / `super::…` path of a file's code, as segment lists (absolute).
fn paths_in(code: &str, module: &str) -> Vec<Vec<String>> {
    let mut raw = Vec::new();
    // `use` statements (possibly multi-line, with nested braces).
    let mut rest = code;
    while let Some(i) = rest.find("use ") {
        let before = rest[..i].chars().last();
        let after = &rest[i + 4..];
        rest = after;
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        let Some(end) = after.find(';') else { break };
        let stmt: String = after[..end].split_whitespace().collect::<Vec<_>>().join(" ");
        if stmt.starts_with("crate::") || stmt.starts_with("super::") {
            raw.extend(expand(&stmt));
        }
    }
    // Inline paths.
    for key in ["crate::", "super::"] {
        let mut from = 0;
        while let Some(i) = code[from..].find(key) {
            let at = from + i;
            from = at + key.len();
            if code[..at].chars().last().is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
                continue;
            }
            let path: String = code[at..].chars().take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':').collect();
            raw.push(path);
        }
    }
    let here: Vec<String> = if module.is_empty() { vec![] } else { module.split("::").map(str::to_string).collect() };
    raw.into_iter()
        .filter_map(|p| {
            let p = p.split(" as ").next().unwrap_or("").trim().to_string();
            let mut segs: Vec<&str> = p.split("::").filter(|s| !s.is_empty()).collect();
            let mut base: Vec<String> = Vec::new();
            match segs.first() {
                Some(&"crate") => {
                    segs.remove(0);
                }
                Some(&"super") => {
                    base = here.clone();
                    while segs.first() == Some(&"super") {
                        segs.remove(0);
                        base.pop()?;
                    }
                }
                _ => return None,
            }
            base.extend(segs.into_iter().map(str::to_string));
            Some(base)
        })
        .collect()
}

/// The module graph of `src/`: module -> modules it imports.
fn module_graph() -> BTreeMap<String, BTreeSet<String>> {
    let src = repo_path("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let modules: BTreeMap<String, std::path::PathBuf> =
        files.iter().map(|f| (module_of(f.strip_prefix(&src).unwrap()), f.clone())).collect();
    let mut graph = BTreeMap::new();
    for (m, f) in &modules {
        let code = code_only(&std::fs::read_to_string(f).unwrap());
        let mut deps = BTreeSet::new();
        for path in paths_in(&code, m) {
            // Longest prefix that is a module.
            let target = (1..=path.len()).rev().map(|n| path[..n].join("::")).find(|p| modules.contains_key(p));
            let Some(t) = target else { continue };
            let ancestor = m == &t || m.starts_with(&format!("{t}::"));
            if !ancestor && !t.is_empty() {
                deps.insert(t);
            }
        }
        graph.insert(m.clone(), deps);
    }
    graph
}

/// Strongly connected components with more than one module (Tarjan).
fn cycles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct State<'a> {
        g: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on: BTreeSet<&'a str>,
        next: usize,
        out: Vec<Vec<String>>,
    }
    fn visit<'a>(s: &mut State<'a>, v: &'a str) {
        s.index.insert(v, s.next);
        s.low.insert(v, s.next);
        s.next += 1;
        s.stack.push(v);
        s.on.insert(v);
        for w in s.g.get(v).into_iter().flatten() {
            let w = w.as_str();
            if !s.index.contains_key(w) {
                visit(s, w);
                let lw = s.low[w];
                let lv = s.low.get_mut(v).unwrap();
                *lv = (*lv).min(lw);
            } else if s.on.contains(w) {
                let iw = s.index[w];
                let lv = s.low.get_mut(v).unwrap();
                *lv = (*lv).min(iw);
            }
        }
        if s.low[v] == s.index[v] {
            let mut comp = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on.remove(w);
                comp.push(w.to_string());
                if w == v {
                    break;
                }
            }
            if comp.len() > 1 {
                comp.sort();
                s.out.push(comp);
            }
        }
    }
    let mut s = State {
        g: graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        next: 0,
        out: Vec::new(),
    };
    for v in graph.keys() {
        if !s.index.contains_key(v.as_str()) {
            visit(&mut s, v);
        }
    }
    s.out
}

/// The layer of a module: its first path segment's rank (ARCHITECTURE.md).
fn layer(module: &str) -> Option<(usize, &'static str)> {
    const LAYERS: [(&str, usize); 19] = [
        ("error", 0),
        ("format", 1),
        ("iotdb", 2),
        ("crypto", 2),
        ("compression", 2),
        ("encoding", 2),
        ("read", 3),
        ("stats", 3),
        ("write", 3),
        ("arrow", 4),
        ("summary", 4),
        ("datadir", 5),
        ("file", 5),
        ("io", 5),
        ("plan", 5),
        ("stores", 5),
        ("writer", 5),
        ("datafusion", 6),
        ("", 7),
    ];
    let top = module.split("::").next().unwrap_or("");
    LAYERS.iter().find(|(n, _)| *n == top).map(|&(n, r)| (r, n))
}

#[test]
fn test_no_import_circles_between_modules() {
    let graph = module_graph();
    assert!(graph.len() > 50, "{} modules found", graph.len());
    assert!(graph["datafusion::opener"].iter().any(|d| d.starts_with("format")), "the graph misses known edges");
    let found = cycles(&graph);
    assert!(found.is_empty(), "import circles: {found:#?}");
}

#[test]
fn test_no_layer_imports_a_higher_one() {
    let graph = module_graph();
    let mut bad = Vec::new();
    for (m, deps) in &graph {
        let Some((rank, _)) = layer(m) else { continue };
        for d in deps {
            if let Some((drank, dname)) = layer(d) {
                if drank > rank {
                    bad.push(format!("{m} imports {d} (layer '{dname}' is above it)"));
                }
            }
        }
    }
    assert!(bad.is_empty(), "{bad:#?}");
}

#[test]
fn test_path_expansion_and_resolution() {
    assert_eq!(expand("crate::a::{b, c::{d, e}}"), ["crate::a::b", "crate::a::c::d", "crate::a::c::e"]);
    let p = paths_in("use super::{x::Y, z};\nfn f() { crate::q::r(); }", "m::n");
    assert!(p.contains(&vec!["m".to_string(), "x".into(), "Y".into()]), "{p:?}");
    assert!(p.contains(&vec!["m".to_string(), "z".into()]), "{p:?}");
    assert!(p.contains(&vec!["q".to_string(), "r".into()]), "{p:?}");
    assert_eq!(code_only("let s = \"crate::x\"; // crate::y\nuse crate::z;"), "let s = ; \nuse crate::z;\n");
}
