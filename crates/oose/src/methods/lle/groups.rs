//! Groups of training points that M cannot tie together (maths §14, *Groups*): each
//! gives M a null vector of its own, which the bottom eigenvectors would be spent on.
//!
//! - standard LLE: the closed classes of the k-nearest-neighbour graph followed from
//!   each point to its neighbours (a null vector of M is a v with vᵢ = Σⱼ wᵢⱼ vⱼ, free
//!   on each closed class);
//! - modified LLE: the connected components of that graph (its several weight vectors a
//!   point tie the rest; measured equal to M's null space on digits, k = 5 … 12);
//! - LTSA and Hessian LLE: the groups of points joined by sharing a neighbourhood (a
//!   point's own neighbourhood does not hold it): each group's affine maps are free.

use super::LleMethod;
use crate::error::{Error, Result};
use crate::linalg::sparse::{components, components_from};

/// Checks that M's null space is the constant alone, or (standard and modified LLE) the
/// constant and one vector telling two groups apart, which is noted in `warnings`; a
/// larger null space is an error naming `n_neighbors` (the embedding would be a rotation
/// of it that nothing in the data decides) and the smallest number of neighbours up to
/// 4k that fits, found on `wider(4k)`, each point's 4k nearest others.
pub(super) fn check(
    method: &LleMethod,
    idx: &[Vec<usize>],
    warnings: &mut Vec<String>,
    wider: impl FnOnce(usize) -> Result<Vec<Vec<usize>>>,
) -> Result<()> {
    let refusal = match verdict(method, idx) {
        Ok(None) => return Ok(()),
        Ok(Some(note)) => {
            warnings.push(note);
            return Ok(());
        }
        Err(refusal) => refusal,
    };
    let k = idx.first().map_or(0, Vec::len);
    let top = (4 * k).min(idx.len().saturating_sub(1));
    let fits = if top > k {
        let wide = wider(top)?;
        (k + 1..=top).find(|&kk| {
            let prefix: Vec<Vec<usize>> = wide.iter().map(|r| r[..kk].to_vec()).collect();
            verdict(method, &prefix).is_ok()
        })
    } else {
        None
    };
    let advice = match fits {
        Some(kk) => format!(" (here n_neighbors = {kk} is the smallest that fits)"),
        None => format!(" (here none up to {top} fits)"),
    };
    Err(Error::param("n_neighbors", refusal + &advice))
}

/// Ok(None): M's null space is the constant; Ok(Some(note)): and one vector telling two
/// groups apart (standard and modified LLE); Err(why): more.
fn verdict(method: &LleMethod, idx: &[Vec<usize>]) -> std::result::Result<Option<String>, String> {
    let n = idx.len();
    let k = idx.first().map_or(0, Vec::len);
    let (sizes, what) = match method {
        LleMethod::Standard => (
            closed_classes(idx),
            "closed groups (each point's neighbours inside its own group)",
        ),
        LleMethod::Modified { .. } => {
            let edges = idx
                .iter()
                .enumerate()
                .flat_map(|(i, r)| r.iter().map(move |&j| (i, j)));
            (components(n, adjacency(n, edges)).1, "connected components")
        }
        LleMethod::Ltsa | LleMethod::Hessian { .. } => {
            // Each neighbourhood's members joined (each to its first); with k ≥ 2, which
            // both variants need, a point alone in its group is in no neighbourhood.
            let edges = idx
                .iter()
                .filter_map(|r| r.split_first())
                .flat_map(|(&first, rest)| rest.iter().map(move |&j| (first, j)));
            let (label, sizes) = components(n, adjacency(n, edges));
            if sizes.len() <= 1 {
                return Ok(None);
            }
            let lonely: Vec<usize> = (0..n).filter(|&i| sizes[label[i]] == 1).collect();
            return Err(if lonely.is_empty() {
                format!(
                    "{}: the {k}-point neighbourhoods fall into {} groups that share no \
                     point (sizes {}), and each group's affine maps are free: the embedding \
                     is not determined; use more neighbours",
                    title(method),
                    sizes.len(),
                    sizes_list(&sizes)
                )
            } else {
                let shown: Vec<String> = lonely.iter().take(5).map(|i| i.to_string()).collect();
                format!(
                    "{}: {} point(s) ({}{}) are in no other point's neighbourhood, so nothing \
                     places them; use more neighbours",
                    title(method),
                    lonely.len(),
                    shown.join(", "),
                    if lonely.len() > 5 { ", …" } else { "" }
                )
            });
        }
    };
    let name = title(method);
    match sizes.len() {
        0 | 1 => Ok(None),
        2 => Ok(Some(format!(
            "{name}: the {k}-nearest-neighbour graph has 2 {what}, sizes {}: the first \
             coordinate only tells the two apart (constant on each); more neighbours \
             (n_neighbors) join them",
            sizes_list(&sizes)
        ))),
        c => Err(format!(
            "{name}: the {k}-nearest-neighbour graph has {c} {what}, sizes {}; M has a null \
             vector for each, so the first {} coordinates would only tell the groups apart, \
             in a rotation that nothing in the data decides; use more neighbours, or embed \
             the groups one by one",
            sizes_list(&sizes),
            c - 1
        )),
    }
}

/// The variant's name in messages.
fn title(method: &LleMethod) -> &'static str {
    match method {
        LleMethod::Standard => "standard LLE",
        LleMethod::Modified { .. } => "modified LLE",
        LleMethod::Ltsa => "LTSA",
        LleMethod::Hessian { .. } => "Hessian LLE",
    }
}

/// At most eight sizes, then how many more.
fn sizes_list(sizes: &[usize]) -> String {
    let shown: Vec<String> = sizes.iter().take(8).map(|s| s.to_string()).collect();
    let more = sizes.len().saturating_sub(8);
    if more > 0 {
        format!("[{}, … {more} more]", shown.join(", "))
    } else {
        format!("[{}]", shown.join(", "))
    }
}

/// The neighbours of each of `n` vertices in the undirected graph of `edges`, as
/// [`components`] reads them.
fn adjacency(
    n: usize,
    edges: impl Iterator<Item = (usize, usize)>,
) -> impl Fn(usize, &mut dyn FnMut(usize)) {
    let mut adj = vec![Vec::new(); n];
    for (i, j) in edges {
        adj[i].push(j);
        adj[j].push(i);
    }
    move |v, visit| adj[v].iter().for_each(|&w| visit(w))
}

/// Sizes of the closed classes of the graph i → idx[i], largest first: its strongly
/// connected components with no edge out of them (Kosaraju's two passes, iterative).
fn closed_classes(idx: &[Vec<usize>]) -> Vec<usize> {
    let n = idx.len();
    // Pass 1: vertices in order of finishing a depth-first search.
    let mut order = Vec::with_capacity(n);
    let mut seen = vec![false; n];
    let mut stack: Vec<(usize, usize)> = Vec::new();
    for s in 0..n {
        if seen[s] {
            continue;
        }
        seen[s] = true;
        stack.push((s, 0));
        while let Some((v, next)) = stack.last_mut() {
            if let Some(&w) = idx[*v].get(*next) {
                *next += 1;
                if !seen[w] {
                    seen[w] = true;
                    stack.push((w, 0));
                }
            } else {
                order.push(*v);
                stack.pop();
            }
        }
    }
    // Pass 2: on the reversed graph, latest finish first, each search is one component.
    let mut rev = vec![Vec::new(); n];
    for (i, row) in idx.iter().enumerate() {
        row.iter().for_each(|&j| rev[j].push(i));
    }
    let (comp, sizes) = components_from(order.iter().rev().copied(), n, |v, visit| {
        rev[v].iter().for_each(|&w| visit(w))
    });
    let mut open = vec![false; sizes.len()];
    for (i, row) in idx.iter().enumerate() {
        if row.iter().any(|&j| comp[j] != comp[i]) {
            open[comp[i]] = true;
        }
    }
    let mut closed: Vec<usize> = (0..sizes.len())
        .filter(|&c| !open[c])
        .map(|c| sizes[c])
        .collect();
    closed.sort_unstable_by(|a, b| b.cmp(a));
    closed
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two triangles 0-1-2 and 3-4-5 (each point's two neighbours in its own), and
    /// points 6, 7 that look into both.
    fn two_triangles() -> Vec<Vec<usize>> {
        vec![
            vec![1, 2],
            vec![0, 2],
            vec![0, 1],
            vec![4, 5],
            vec![3, 5],
            vec![3, 4],
            vec![0, 3],
            vec![6, 5],
        ]
    }

    /// The wider search of `check` on n points whose distance is |i − j|.
    fn by_index(n: usize) -> impl FnOnce(usize) -> Result<Vec<Vec<usize>>> {
        move |k| {
            Ok((0..n)
                .map(|i| {
                    let mut o: Vec<usize> = (0..n).filter(|&j| j != i).collect();
                    o.sort_by_key(|&j| (i.abs_diff(j), j));
                    o.truncate(k);
                    o
                })
                .collect())
        }
    }

    #[test]
    fn closed_classes_are_the_strong_components_nothing_leaves() {
        assert_eq!(closed_classes(&two_triangles()), vec![3, 3]);
        // 2 → 3 opens the first triangle: 0, 1, 2 now lead into the second.
        let mut g = two_triangles();
        g[2] = vec![0, 3];
        assert_eq!(closed_classes(&g), vec![3]);
        // One cycle through everything.
        let cycle: Vec<Vec<usize>> = (0..50).map(|i| vec![(i + 1) % 50]).collect();
        assert_eq!(closed_classes(&cycle), vec![50]);
    }

    #[test]
    fn two_groups_warn_and_three_are_refused_by_n_neighbors() {
        let mut w = Vec::new();
        check(&LleMethod::Standard, &two_triangles(), &mut w, by_index(8)).unwrap();
        assert_eq!(w.len(), 1);
        assert!(
            w[0].contains("2 closed groups") && w[0].contains("[3, 3]"),
            "{}",
            w[0]
        );
        // Modified LLE: the two triangles are one component through 6 and 7.
        let mut w = Vec::new();
        check(
            &LleMethod::modified(),
            &two_triangles(),
            &mut w,
            by_index(8),
        )
        .unwrap();
        assert!(w.is_empty());
        let mut g = two_triangles();
        g.extend([vec![9, 10], vec![8, 10], vec![8, 9]]);
        let e = check(&LleMethod::Standard, &g, &mut w, by_index(g.len()))
            .unwrap_err()
            .to_string();
        // Ordered by index, three neighbours make one closed group of all 11 points.
        assert!(
            e.contains("n_neighbors")
                && e.contains("3 closed groups")
                && e.ends_with("(here n_neighbors = 3 is the smallest that fits)"),
            "{e}"
        );
        let mut w = Vec::new();
        check(&LleMethod::modified(), &g, &mut w, by_index(g.len())).unwrap();
        assert!(
            w.len() == 1 && w[0].contains("2 connected components"),
            "{w:?}"
        );
        g.extend([vec![12, 13], vec![11, 13], vec![11, 12]]);
        let e = check(&LleMethod::modified(), &g, &mut w, by_index(g.len()))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("3 connected components") && e.contains("[8, 3, 3]"),
            "{e}"
        );
    }

    #[test]
    fn ltsa_and_hessian_refuse_unjoined_neighbourhoods() {
        // Every point is in a neighbourhood, but {0,1,2} and {3,4,5} share none.
        let g = two_triangles()[..6].to_vec();
        for m in [LleMethod::Ltsa, LleMethod::hessian()] {
            let e = check(&m, &g, &mut Vec::new(), by_index(6))
                .unwrap_err()
                .to_string();
            assert!(e.contains("2 groups") && e.contains("[3, 3]"), "{e}");
        }
        // Point 5 in no neighbourhood.
        let lonely: Vec<Vec<usize>> = (0..6).map(|i| vec![(i + 1) % 5, (i + 2) % 5]).collect();
        let e = check(&LleMethod::hessian(), &lonely, &mut Vec::new(), by_index(6))
            .unwrap_err()
            .to_string();
        assert!(e.contains("(5)") && e.contains("n_neighbors"), "{e}");
    }
}
