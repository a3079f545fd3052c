use super::*;
use crate::rng::Rng;
use faer::Mat;

/// One coordinate: on a grid of `cells` integers (many exact ties) or standard normal.
fn coordinate(r: &mut Rng, grid: bool, cells: f64) -> f64 {
    if grid {
        (r.uniform() * cells).floor()
    } else {
        r.normal()
    }
}

/// The rows `ids` of `x`, one after another (a group of queries).
fn gather(x: faer::MatRef<'_, f64>, ids: &[u32]) -> Vec<f64> {
    ids.iter()
        .flat_map(|&i| x.row(i as usize).iter().copied().collect::<Vec<_>>())
        .collect()
}

/// Every query against brute force, on data with many exact ties (a coarse grid)
/// and on continuous data, in dimensions served by the tree and by brute force.
/// An index of `x` with each point's ball: its k-th nearest squared distance (itself
/// included), found by the index without balls; and those squared radii.
fn with_own_balls(x: MatRef<'_, f64>, k: usize, s: &mut Scratch) -> (PointIndex, Vec<f64>) {
    let plain = PointIndex::new(x);
    let r2: Vec<f64> = (0..x.nrows())
        .map(|i| plain.kth_sq_dist(plain.row(i), k, s))
        .collect();
    (PointIndex::with_balls(x, &r2), r2)
}

/// A group's answers: the links from `mirror_group`, and the k-th distances from
/// `kth_group` when checked.
type GroupAnswers<'a> = (&'a Links, Option<&'a [f64]>);

/// Asserts that the group answers `out` of `mirror_group` (and `kth` of `kth_group`,
/// when given) are each query's single-query mirror links and k-th.
fn assert_mirror_as_single(
    idx: &PointIndex,
    qs: &[f64],
    k: usize,
    s: &mut Scratch,
    (out, kth): GroupAnswers<'_>,
    what: &str,
) {
    let dim = idx.row(0).len();
    assert_eq!(out.len(), qs.len() / dim, "one list per query, {what}");
    for ((t, q), links) in qs.chunks_exact(dim).enumerate().zip(out.iter()) {
        let mut one = Vec::new();
        let r2t = idx.mirror_links(q, k, s, &mut one);
        if let Some(kth) = kth {
            assert_eq!(kth[t], r2t, "k-th of query {t}, {what}");
        }
        let mut got = links.to_vec();
        got.sort_by_key(|p| p.0);
        assert_eq!(got, one, "mirror links of query {t}, {what}");
    }
}

#[test]
fn queries_match_brute_force() {
    let mut r = Rng::new(5);
    for (dim, n, grid) in [
        (1, 500, true),
        (2, 300, false),
        (2, 400, true),
        (3, 300, false),
        (3, 1000, true),
        (20, 300, false),
        (20, 600, true),
    ] {
        let x = Mat::from_fn(n, dim, |_, _| coordinate(&mut r, grid, 6.0));
        let idx = PointIndex::new(x.as_ref());
        let r2: Vec<f64> = (0..n).map(|_| r.uniform() * 2.0).collect();
        let balls = PointIndex::with_balls(x.as_ref(), &r2);
        let mut s = Scratch::default();
        for q in 0..40 {
            // Queries off the data, and (every third) on a data point.
            let qv: Vec<f64> = if q % 3 == 0 {
                idx.row(q * 7 % n).to_vec()
            } else {
                (0..dim).map(|_| coordinate(&mut r, grid, 6.0)).collect()
            };
            let all: Vec<f64> = (0..n).map(|i| sq_dist(&qv, idx.row(i))).collect();
            let mut sorted = all.clone();
            sorted.sort_by(f64::total_cmp);
            let k = 1 + q % 9;
            assert_eq!(idx.kth_sq_dist(&qv, k, &mut s), sorted[k - 1]);
            let mut one = Vec::new();
            idx.kth_group(&qv, k, &mut s, &mut one);
            assert_eq!(one, vec![sorted[k - 1]], "grouped k-th, dim {dim}, k {k}");
            let r2k = sorted[k - 1];
            let mut got = Vec::new();
            idx.within(&qv, r2k, &mut s, &mut got);
            let mut got: Vec<usize> = got.into_iter().map(|p| p.0).collect();
            got.sort();
            let want: Vec<usize> = (0..n).filter(|&i| all[i] <= r2k).collect();
            assert_eq!(got, want, "kNN ball, dim {dim}, k {k}");
            let mut got = Vec::new();
            idx.within(&qv, 1.5, &mut s, &mut got);
            let mut got: Vec<usize> = got.into_iter().map(|p| p.0).collect();
            got.sort();
            let want: Vec<usize> = (0..n).filter(|&i| all[i] <= 1.5).collect();
            assert_eq!(got, want);
            let mut links = Vec::new();
            let r2q = balls.mirror_links(&qv, k, &mut s, &mut links);
            assert_eq!(r2q, sorted[k - 1]);
            let want: Vec<usize> = (0..n).filter(|&i| all[i] <= r2q.max(r2[i])).collect();
            assert_eq!(links.iter().map(|p| p.0).collect::<Vec<_>>(), want);
            assert!(links.iter().all(|&(i, d)| d == all[i]));
            let mut got = Vec::new();
            balls.containing(&qv, &mut s, &mut got);
            let mut got: Vec<usize> = got.into_iter().map(|p| p.0).collect();
            got.sort();
            let want: Vec<usize> = (0..n).filter(|&i| all[i] <= r2[i]).collect();
            assert_eq!(got, want);
        }
    }
}

/// The grouped mirror search gives exactly the single-query links, whatever the
/// grouping (locality groups of several sizes, and one arbitrary group), on
/// continuous data and on a grid with ties, in tree and brute-force dimensions.
#[test]
fn mirror_group_matches_single_queries() {
    let mut r = Rng::new(11);
    for (dim, n, grid) in [
        (2, 600, false),
        (3, 800, true),
        (3, 500, false),
        (17, 200, false),
        (17, 600, true),
        (300, 300, false),
    ] {
        let draw = |r: &mut Rng| coordinate(r, grid, 6.0);
        let x = Mat::from_fn(n, dim, |_, _| draw(&mut r));
        let k = 7;
        let mut s = Scratch::default();
        let (idx, r2) = with_own_balls(x.as_ref(), k, &mut s);
        let z = Mat::from_fn(300, dim, |_, _| draw(&mut r) * 1.2);
        let mut hits = 0;
        for leaf in [1, 5, 16, 300] {
            let (order, bounds) = locality_groups(z.as_ref(), leaf);
            let mut seen = order.clone();
            seen.sort();
            assert_eq!(seen, (0..300).collect::<Vec<u32>>());
            assert_eq!((bounds[0], *bounds.last().unwrap()), (0, 300));
            for g in bounds.windows(2) {
                assert!(
                    g[0] < g[1] && g[1] - g[0] <= leaf,
                    "group {g:?}, leaf {leaf}"
                );
                let qs = gather(z.as_ref(), &order[g[0]..g[1]]);
                let mut out = Links::new();
                idx.mirror_group(&qs, k, &mut s, &mut out);
                assert_eq!(out.len(), g[1] - g[0]);
                let what = format!("dim {dim}, leaf {leaf}");
                assert_mirror_as_single(&idx, &qs, k, &mut s, (&out, None), &what);
                // Radius queries of the group: the points and their order of the
                // single query, for every query.
                let radius = 2.0 * r2.iter().fold(0.0, |a: f64, &b| a.max(b));
                let mut out = Links::new();
                idx.within_group(&qs, radius, &mut s, &mut out);
                assert_eq!(out.len(), g[1] - g[0]);
                for (q, found) in qs.chunks_exact(dim).zip(out.iter()) {
                    let mut one = Vec::new();
                    idx.within(q, radius, &mut s, &mut one);
                    hits += one.len();
                    assert_eq!(found, one, "within, dim {dim}, leaf {leaf}");
                }
            }
        }
        assert!(hits >= 4 * 300, "radius queries that find points: {hits}");
    }
}

/// The fit's grouped passes over the indexed points themselves: k-th nearest
/// distances and then the symmetric-rule links, against brute force, with the
/// balls added to the built index (`into_balls`).
#[test]
fn grouped_kth_and_links_over_the_points_match_brute_force() {
    let mut r = Rng::new(13);
    for (dim, n, grid) in [
        (2, 700, false),
        (3, 900, true),
        (3, 40, false),
        (18, 150, false),
        (18, 700, true),
        (260, 300, false),
    ] {
        let x = Mat::from_fn(n, dim, |_, _| coordinate(&mut r, grid, 7.0));
        let k = 9.min(n);
        let idx = PointIndex::new(x.as_ref());
        let mut s = Scratch::default();
        let order = idx.spatial_order().to_vec();
        let bounds = idx.leaf_groups();
        assert_eq!((bounds[0], *bounds.last().unwrap()), (0, n));
        let rows = |g: &[usize]| gather(x.as_ref(), &order[g[0]..g[1]]);
        let mut r2 = vec![0.0; n];
        for g in bounds.windows(2) {
            let mut out = Vec::new();
            idx.kth_group(&rows(g), k, &mut s, &mut out);
            for (&i, v) in order[g[0]..g[1]].iter().zip(out) {
                r2[i as usize] = v;
            }
        }
        let pts: Vec<Vec<f64>> = (0..n).map(|i| idx.row(i).to_vec()).collect();
        let d = |i: usize, j: usize| sq_dist(&pts[i], &pts[j]);
        for (i, &ri) in r2.iter().enumerate() {
            let mut all: Vec<f64> = (0..n).map(|j| d(i, j)).collect();
            all.sort_by(f64::total_cmp);
            assert_eq!(ri, all[k - 1], "k-th distance of point {i}, dim {dim}");
        }
        let balls = idx.into_balls(&r2);
        for g in bounds.windows(2) {
            let mut out = Links::new();
            let r2q: Vec<f64> = order[g[0]..g[1]].iter().map(|&i| r2[i as usize]).collect();
            balls.links_group(&rows(g), &r2q, &mut s, &mut out);
            assert_eq!(out.len(), g[1] - g[0]);
            for (&i, links) in order[g[0]..g[1]].iter().zip(out.iter()) {
                let i = i as usize;
                let mut got = links.to_vec();
                got.sort_by_key(|p| p.0);
                let want: Vec<(usize, f64)> = (0..n)
                    .filter(|&j| d(i, j) <= r2[i].max(r2[j]))
                    .map(|j| (j, d(i, j)))
                    .collect();
                assert_eq!(got, want, "links of point {i}, dim {dim}");
            }
        }
    }
}

/// Clustered points: `centres` centres, each point a centre plus noise of scale
/// `noise`, on the integer grid when `grid` (many exact ties).
fn clusters(r: &mut Rng, n: usize, dim: usize, centres: usize, noise: f64, grid: bool) -> Mat<f64> {
    let c = Mat::from_fn(centres, dim, |_, _| r.normal() * 20.0);
    let mut x = Mat::from_fn(n, dim, |i, j| c[(i % centres, j)] + r.normal() * noise);
    if grid {
        x = Mat::from_fn(n, dim, |i, j| x[(i, j)].round());
    }
    x
}

/// The one-pass fit of the symmetric kNN graph: each point's ball (its k nearest,
/// ties included) from `balls_group`, and the rows built from the balls by
/// `rows_from_balls`, against brute force; in tree dimensions, in brute-force ones
/// below the screen, and in screened ones (clustered, so that the screen answers most
/// blocks: checked), on continuous data and on a grid with ties.
#[test]
fn balls_and_the_rows_built_from_them_match_brute_force() {
    use crate::methods::diffusion_maps::weights::rows_from_balls;
    let mut r = Rng::new(17);
    for (dim, n, grid) in [
        (3, 600, true),
        (5, 500, false),
        (20, 400, true),
        (40, 1500, false),
        (40, 1500, true),
        (120, 900, false),
    ] {
        let x = clusters(&mut r, n, dim, 7, 1.5, grid);
        let k = 8;
        let idx = PointIndex::new(x.as_ref());
        let mut s = Scratch::default();
        let order = idx.spatial_order().to_vec();
        let screened = brute::SCREENED_BLOCKS.with(|c| c.get());
        let mut r2 = vec![0.0; n];
        let mut balls = vec![Vec::new(); n];
        for g in idx.leaf_groups().windows(2) {
            let qs = gather(x.as_ref(), &order[g[0]..g[1]]);
            let (mut out, mut found) = (Vec::new(), Links::new());
            idx.balls_group(&qs, k, &mut s, &mut out, &mut found);
            let mut kth = Vec::new();
            idx.kth_group(&qs, k, &mut s, &mut kth);
            assert_eq!(kth, out, "kth_group and balls_group, dim {dim}");
            assert_eq!(found.len(), g[1] - g[0]);
            for ((&i, ball), v) in order[g[0]..g[1]].iter().zip(found.iter()).zip(out) {
                r2[i as usize] = v;
                balls[i as usize] = ball.to_vec();
            }
        }
        if dim >= brute::SCREEN_DIM {
            let used = brute::SCREENED_BLOCKS.with(|c| c.get()) - screened;
            let blocks = n.div_ceil(64) * n.div_ceil(256);
            assert!(
                2 * used >= blocks,
                "screened {used} of {blocks} blocks, dim {dim}"
            );
        }
        let d = |i: usize, j: usize| sq_dist(idx.row(i), idx.row(j));
        for i in 0..n {
            let mut all: Vec<f64> = (0..n).map(|j| d(i, j)).collect();
            all.sort_by(f64::total_cmp);
            assert_eq!(r2[i], all[k - 1], "k-th distance of point {i}, dim {dim}");
            let mut got = balls[i].clone();
            got.sort_by_key(|p| p.0);
            let want: Vec<(usize, f64)> = (0..n)
                .filter(|&j| d(i, j) <= r2[i])
                .map(|j| (j, d(i, j)))
                .collect();
            assert_eq!(got, want, "ball of point {i}, dim {dim}");
        }
        let rows = rows_from_balls(balls);
        for (i, row) in rows.iter().enumerate() {
            let want: Vec<(u32, f64)> = (0..n)
                .filter(|&j| d(i, j) <= r2[i].max(r2[j]))
                .map(|j| (j as u32, d(i, j)))
                .collect();
            assert_eq!(*row, want, "row of point {i}, dim {dim}");
        }
    }
}

/// The screened scan answers every grouped query as the unscreened single query does
/// (clustered data in 64 dimensions, far from the origin too, where the screen's
/// allowance grows and more blocks are summed whole), with the group's products formed
/// for all points at once (k-nearest searches start from their bound) and block by
/// block.
#[test]
fn screened_group_queries_match_single_queries() {
    let mut r = Rng::new(19);
    // (offset, grid, scale): far from the origin, and beyond the screen's magnitudes
    // (summed exactly, every pair; at 1e154 from the origin the squared norms
    // overflow while the distances do not).
    let cases = [
        (0.0, false, 1.0),
        (0.0, true, 1.0),
        (1e4, false, 1.0),
        (0.0, false, 1e-150),
        (0.0, false, 1e155),
        (1e154, false, 1.0),
    ];
    for (whole, (offset, grid, scale)) in [true, false]
        .into_iter()
        .flat_map(|w| cases.map(|c| (w, c)))
    {
        let saved = brute::WHOLE_LIMIT.with(|c| c.get());
        brute::WHOLE_LIMIT.with(|c| c.set(if whole { saved } else { 0 }));
        let (n, dim, k) = (1200, 64, 6);
        let x = clusters(&mut r, n, dim, 5, 2.0, grid);
        let x = Mat::from_fn(n, dim, |i, j| (x[(i, j)] + offset) * scale);
        let mut s = Scratch::default();
        let (idx, r2) = with_own_balls(x.as_ref(), k, &mut s);
        let z = clusters(&mut r, 130, dim, 5, 3.0, grid);
        let z = Mat::from_fn(130, dim, |i, j| (z[(i, j)] + offset) * scale);
        let qs = gather(z.as_ref(), &(0..130).collect::<Vec<u32>>());
        let screened = brute::SCREENED_BLOCKS.with(|c| c.get());
        let mut out = Links::new();
        idx.mirror_group(&qs, k, &mut s, &mut out);
        let radius = r2.iter().fold(0.0, |a: f64, &b| a.max(b));
        let mut within = Links::new();
        idx.within_group(&qs, radius, &mut s, &mut within);
        let mut kth = Vec::new();
        idx.kth_group(&qs, k, &mut s, &mut kth);
        let r2q = kth.clone();
        let mut links = Links::new();
        idx.links_group(&qs, &r2q, &mut s, &mut links);
        let ran = brute::SCREENED_BLOCKS.with(|c| c.get()) > screened;
        if offset == 0.0 {
            assert_eq!(ran, scale == 1.0, "the screen ran at scale {scale}");
        }
        let what = format!("offset {offset}");
        assert_mirror_as_single(&idx, &qs, k, &mut s, (&out, Some(&kth)), &what);
        assert_eq!((within.len(), links.len()), (130, 130));
        let lists = within.iter().zip(links.iter());
        for ((t, q), (found, linked)) in qs.chunks_exact(dim).enumerate().zip(lists) {
            let mut one = Vec::new();
            idx.within(q, radius, &mut s, &mut one);
            assert_eq!(found, one, "within, query {t}");
            let want: Vec<(usize, f64)> = (0..n)
                .map(|j| (j, sq_dist(q, idx.row(j))))
                .filter(|&(j, d)| d <= r2q[t].max(r2[j]))
                .collect();
            let mut got = linked.to_vec();
            got.sort_by_key(|p| p.0);
            assert_eq!(got, want, "links of query {t}, offset {offset}");
        }
        brute::WHOLE_LIMIT.with(|c| c.set(saved));
    }
}

#[test]
fn spatial_order_is_a_permutation() {
    let x = Rng::new(9).normal_mat(1000, 3);
    let idx = PointIndex::new(x.as_ref());
    let mut o: Vec<u32> = idx.spatial_order().to_vec();
    o.sort();
    assert_eq!(o, (0..1000).collect::<Vec<u32>>());
}

/// With the group's products formed for all points, a group whose queries keep few
/// pairs sums them in one call per query, and a group where a query keeps more than a
/// quarter of the points (here: copies of one row) goes block by block: both answer as
/// single queries do.
#[test]
fn groups_with_crowded_and_sparse_screens_match_single_queries() {
    let mut r = Rng::new(23);
    let (n, dim, k) = (600, 40, 5);
    let spread = clusters(&mut r, n, dim, 4, 2.0, false);
    // Rows 0..360 are one point, far from the rest, which spread out in clusters.
    let far = |j: usize| spread[(0, j)] + 1000.0;
    let x = Mat::from_fn(n, dim, |i, j| if i < 360 { far(j) } else { spread[(i, j)] });
    let mut s = Scratch::default();
    let (idx, _) = with_own_balls(x.as_ref(), k, &mut s);
    // Queries: copies of the repeated point, then points among the others.
    let z = Mat::from_fn(128, dim, |i, j| {
        if i < 64 {
            far(j)
        } else {
            spread[(360 + 3 * (i - 64), j)] + 0.1
        }
    });
    let one_call = brute::ONE_CALL_GROUPS.with(|c| c.get());
    for g in [0..64u32, 64..128] {
        let qs = gather(z.as_ref(), &g.collect::<Vec<u32>>());
        let before = brute::ONE_CALL_GROUPS.with(|c| c.get());
        let mut out = Links::new();
        idx.mirror_group(&qs, k, &mut s, &mut out);
        let mut kth = Vec::new();
        idx.kth_group(&qs, k, &mut s, &mut kth);
        let crowded = qs[0] == far(0);
        let calls = brute::ONE_CALL_GROUPS.with(|c| c.get()) - before;
        assert_eq!(calls, if crowded { 0 } else { 2 }, "crowded: {crowded}");
        let what = format!("crowded: {crowded}");
        assert_mirror_as_single(&idx, &qs, k, &mut s, (&out, Some(&kth)), &what);
    }
    assert_eq!(brute::ONE_CALL_GROUPS.with(|c| c.get()) - one_call, 2);
}
