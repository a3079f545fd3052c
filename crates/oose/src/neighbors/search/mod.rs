//! Approximate nearest training points of new points by a walk on the training kNN
//! graph (maths §6): from the nearest of a fixed sample of seed points, best-first
//! through the graph's edges (both directions), keeping the `ef` best points met, until
//! the nearest unexpanded point is farther than the worst kept. A new point that
//! equals a training point bit for bit is found by a hash lookup, so training points
//! always get themselves at distance 0 (the extensions stay exact on them). Each row is
//! searched on its own from the same seeds: sample-wise and deterministic. A batch is
//! walked in an order that puts nearby rows one after the other (what one walk reads is
//! then in cache for the next); the order changes no row's result.

mod inverted;
mod training;

use super::descent::sq;
use super::Neighbours;
use crate::rng::Rng;
use faer::MatRef;
use rayon::prelude::*;
pub use training::{TrainingSearch, SEARCH_DEGREE};

/// Seed points every search starts from.
const SEEDS: usize = 64;
/// Points kept during a search (at least k).
const EF: usize = 32;

/// A candidate by (squared distance, index), as in the exact search.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Cand(f64, u32);
impl Eq for Cand {}
impl PartialOrd for Cand {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Cand {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&o.0).then(self.1.cmp(&o.1))
    }
}

/// A kept candidate and whether it has been expanded: 16 bytes, so that keeping one
/// moves two thirds of the bytes a `(Cand, bool)` moved.
#[derive(Clone, Copy, Debug)]
struct Kept {
    d: f64,
    i: u32,
    expanded: bool,
}

impl Kept {
    fn new(c: Cand) -> Kept {
        Kept {
            d: c.0,
            i: c.1,
            expanded: false,
        }
    }

    fn cand(&self) -> Cand {
        Cand(self.d, self.i)
    }
}

/// Asks the processor to bring the cache line of `p` into its second-level cache (a
/// hint: no effect on the result).
#[inline]
fn prefetch_line<T>(p: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: SSE is part of the x86-64 baseline, and a prefetch of a valid address reads
    // nothing into the program.
    unsafe {
        core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T1 }>(
            (p as *const T).cast(),
        );
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// Asks for every line of `row`, into the second-level cache. A node's 20–30 rows are
/// 150–200 cache lines asked for at once; with the first-level hint instead, the walk
/// took 1.5× as long (Fashion-MNIST PCA-50, one thread, measured on this project's
/// 2-core AMD EPYC machine).
#[inline]
fn prefetch(row: &[f64]) {
    for line in row.chunks(8) {
        prefetch_line(&line[0]);
    }
}

/// Searches walked together by one thread ([`GraphIndex::search`]): while the rows one
/// walk asked for are on their way from memory, the others measure theirs. Measured on
/// Fashion-MNIST (60000 training images, PCA-50; the 10000 test images, k = 16; 2-core
/// Intel Xeon, two threads): 0.13 s against 0.16 s for the walk as it was (a row at a
/// time, 32-bit stamps, the seeds measured one by one). Of that, eight walks at a time
/// against one in this scheme gained 0.4–6 % (three alternations, one thread and two,
/// every one in favour of eight).
const GROUP: usize = 8;

/// Which training points each of the [`GROUP`] searches under way has measured: bit g of
/// a point's mark for slot g's search. A search clears its bits when it ends (it lists
/// what it marked), so one array of bytes serves every search of a block of rows.
struct Marks(Vec<u8>);

/// One search under way in a slot of a group (`live`): its row and point, its kept list
/// (the `ef` nearest met so far, nearest first), the first entry not yet expanded, the
/// points asked for and not yet measured, and every point it has marked.
struct Walk<'z> {
    live: bool,
    row: usize,
    z: &'z [f64],
    pool: Vec<Kept>,
    first: usize,
    fresh: Vec<u32>,
    marked: Vec<u32>,
}

/// The search structure over the rows of a training matrix.
#[derive(Clone, Debug, PartialEq)]
pub struct GraphIndex {
    /// Training points, row-major.
    x: Vec<f64>,
    width: usize,
    offsets: Vec<usize>,
    adjacent: Vec<u32>,
    seeds: Vec<u32>,
    /// The rows by the hash of their bits ([`RowTable`]).
    rows: RowTable,
    /// The order a batch is searched in (see `search`).
    order: Order,
}

/// Where a batch's rows are walked in turn: by cells of width `cell` (the third) along
/// the training points' column of largest variance (the first), then along the second
/// largest (the second).
type Order = (usize, usize, f64);

pub(crate) fn row_hash(r: impl Iterator<Item = f64>) -> u64 {
    let mut h: u64 = 0xCBF2_9CE4_8422_2325;
    for v in r {
        h ^= v.to_bits();
        h = h.wrapping_mul(0x0000_0100_0000_01B3).rotate_left(29);
    }
    h
}

impl GraphIndex {
    /// The index of the rows of `x` over the kNN lists `graph` (row i's neighbours;
    /// indices < N), with its seeds drawn by `seed`.
    pub fn new(x: MatRef<'_, f64>, graph: &[Vec<usize>], seed: u64) -> GraphIndex {
        let lists: Vec<Vec<u32>> = graph
            .iter()
            .map(|r| r.iter().map(|&j| j as u32).collect())
            .collect();
        GraphIndex::from_lists(x, |i| &lists[i], seed)
    }

    /// [`GraphIndex::new`] with row i's list given by `list(i)`. Built on a model's
    /// first extension (on every one of the CLI's), so built from flat arrays filled
    /// by counting rather than a growing list per point, with one flat table of row
    /// hashes ([`RowTable`]) rather than a hash map of lists; the edges on one thread
    /// while the rows are copied and hashed on another.
    fn from_lists<'a>(
        x: MatRef<'_, f64>,
        list: impl Fn(usize) -> &'a [u32] + Sync,
        seed: u64,
    ) -> GraphIndex {
        let n = x.nrows();
        let ((offsets, adjacent), (rows_x, rows, order)) =
            rayon::join(|| both_ways(n, &list), || hashed_rows(x));
        let mut seeds: Vec<u32> = Rng::new(seed)
            .sample_indices(n, SEEDS.min(n))
            .into_iter()
            .map(|i| i as u32)
            .collect();
        seeds.sort_unstable();
        GraphIndex {
            x: rows_x,
            width: x.ncols(),
            offsets,
            adjacent,
            seeds,
            rows,
            order,
        }
    }

    /// The training rows whose bits hash as `z`'s (candidates for being `z`).
    #[cfg(test)]
    fn same_hash(&self, z: &[f64]) -> impl Iterator<Item = u32> + '_ {
        self.rows.get(row_hash(z.iter().copied()))
    }

    fn point(&self, i: u32) -> &[f64] {
        let i = i as usize;
        &self.x[i * self.width..(i + 1) * self.width]
    }

    /// The (approximate) k nearest training points of every row of `queries`: indices
    /// and Euclidean distances, nearest first.
    pub fn search(&self, queries: MatRef<'_, f64>, k: usize) -> Neighbours {
        let n = self.offsets.len() - 1;
        let w = self.width;
        let k = k.min(n);
        // Nearby queries one after the other, so that the rows one walk reads are
        // still in cache for the next (the walk 15 % faster on Fashion-MNIST). Each
        // row's walk is its own: the order changes no result.
        let (a, b, cell) = self.order;
        let key = |q: usize| ((queries[(q, a)] / cell).floor(), queries[(q, b)]);
        let mut order: Vec<usize> = (0..queries.nrows()).collect();
        if w > 0 {
            order.sort_by(|&p, &q| {
                let (kp, kq) = (key(p), key(q));
                kp.0.total_cmp(&kq.0)
                    .then(kp.1.total_cmp(&kq.1))
                    .then(p.cmp(&q))
            });
        }
        // Blocks of 256 rows: each block allocates its marks once and walks its rows
        // GROUP at a time.
        let rows = crate::linalg::row_major(queries);
        let found: Vec<(Vec<usize>, Vec<f64>)> = order
            .par_chunks(256)
            .flat_map_iter(|block| {
                let block: Vec<&[f64]> = block.iter().map(|&q| &rows[q * w..(q + 1) * w]).collect();
                let mut marks = Marks(vec![0; n]);
                let mut out = vec![(Vec::new(), Vec::new()); block.len()];
                self.walks(&block, k, &mut marks, &mut out);
                out
            })
            .collect();
        let mut out: Neighbours = (vec![Vec::new(); order.len()], vec![Vec::new(); order.len()]);
        for (&q, (i, d)) in order.iter().zip(found) {
            out.0[q] = i;
            out.1[q] = d;
        }
        out
    }

    /// [`sq`], with AVX when `AVX` (the caller checked that the CPU has it).
    #[inline(always)]
    fn distance<const AVX: bool>(a: &[f64], b: &[f64]) -> f64 {
        #[cfg(target_arch = "x86_64")]
        if AVX {
            // SAFETY: `AVX` is true only on a CPU with AVX (`walks`).
            return unsafe { super::descent::sq_avx(a, b) };
        }
        sq(a, b)
    }

    /// Keeps `c` in `pool` (the `ef` nearest met so far, nearest first, with whether
    /// each has been expanded) when it is among them; `first` is lowered to its place
    /// when it lands before the first unexpanded entry.
    #[inline(always)]
    fn keep(&self, c: Cand, ef: usize, pool: &mut Vec<Kept>, first: &mut usize) {
        if pool.len() < ef || c < pool[pool.len() - 1].cand() {
            // The worst goes when the list is full; c moves down from the end past
            // every entry after it (one pass that finds its place and shifts; the
            // search then the shift called memmove, 7 % of the walk for ~20 entries).
            if pool.len() >= ef {
                pool.pop();
            }
            pool.push(Kept::new(c));
            let mut at = pool.len() - 1;
            while at > 0 && c < pool[at - 1].cand() {
                pool[at] = pool[at - 1];
                at -= 1;
            }
            pool[at] = Kept::new(c);
            *first = (*first).min(at);
            // Its edges' offset, for when it is expanded.
            prefetch_line(&self.offsets[c.1 as usize]);
        }
    }

    /// The squared distances of `z` to the training points `fresh` into `out`: with
    /// AVX four at a time ([`super::descent::sq4_avx`], the bits of one at a time).
    #[inline(always)]
    fn distances<const AVX: bool>(&self, z: &[f64], fresh: &[u32], out: &mut Vec<f64>) {
        out.clear();
        #[cfg(target_arch = "x86_64")]
        if AVX {
            for q in fresh.chunks_exact(4) {
                let rows = [q[0], q[1], q[2], q[3]].map(|i| self.point(i));
                // SAFETY: `AVX` is true only on a CPU with AVX (`walks`).
                out.extend(unsafe { super::descent::sq4_avx(z, rows) });
            }
        }
        let rest = &fresh[out.len()..];
        out.extend(
            rest.iter()
                .map(|&i| Self::distance::<AVX>(z, self.point(i))),
        );
    }

    /// The k nearest of each of `rows` into `out` (the same place), by the walks
    /// compiled for AVX where the CPU has it (the same bits: [`super::descent::sq_avx`]).
    fn walks(
        &self,
        rows: &[&[f64]],
        k: usize,
        marks: &mut Marks,
        out: &mut [(Vec<usize>, Vec<f64>)],
    ) {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx") {
            // SAFETY: the CPU has AVX (just checked).
            return unsafe { self.walks_avx(rows, k, marks, out) };
        }
        self.walk::<false>(rows, k, marks, out)
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx")]
    unsafe fn walks_avx(
        &self,
        rows: &[&[f64]],
        k: usize,
        marks: &mut Marks,
        out: &mut [(Vec<usize>, Vec<f64>)],
    ) {
        self.walk::<true>(rows, k, marks, out)
    }

    /// Starts the search for row `row` (point `z`) in `walk`, slot `g`: the training
    /// points equal to z bit for bit, then the seeds, to be measured and kept in this
    /// order.
    fn start<'z>(
        &self,
        walk: &mut Walk<'z>,
        row: usize,
        z: &'z [f64],
        g: usize,
        marks: &mut Marks,
    ) {
        walk.live = true;
        walk.row = row;
        walk.z = z;
        walk.pool.clear();
        walk.first = 0;
        walk.fresh.clear();
        walk.marked.clear();
        let bit = 1u8 << g;
        let equal = self.rows.equal(&self.x, z);
        for i in equal.chain(self.seeds.iter().copied()) {
            if marks.0[i as usize] & bit == 0 {
                marks.0[i as usize] |= bit;
                walk.fresh.push(i);
                walk.marked.push(i);
            }
        }
    }

    /// Best-first walks of `rows` from the seeds, [`GROUP`] at a time: each expands the
    /// nearest kept point not yet expanded, until every kept point has been (a kept list
    /// of ef sorted entries). One step of a walk measures and keeps the points its last
    /// step asked for, then expands its next point and asks for the rows of that point's
    /// unmarked neighbours; the other walks' steps run while those rows arrive. A walk's
    /// steps are the same whatever walks share its group (its own marks, its own list),
    /// so each row's result is that of walking it alone.
    #[inline(always)]
    fn walk<const AVX: bool>(
        &self,
        rows: &[&[f64]],
        k: usize,
        marks: &mut Marks,
        out: &mut [(Vec<usize>, Vec<f64>)],
    ) {
        let ef = EF.max(k);
        let mut walks: Vec<Walk<'_>> = Vec::with_capacity(GROUP);
        let mut next_row = 0;
        for g in 0..GROUP.min(rows.len()) {
            let mut walk = Walk {
                live: false,
                row: 0,
                z: &[],
                pool: Vec::with_capacity(ef + 1),
                first: 0,
                fresh: Vec::new(),
                marked: Vec::new(),
            };
            self.start(&mut walk, next_row, rows[next_row], g, marks);
            next_row += 1;
            walks.push(walk);
        }
        let mut measured = Vec::new();
        let mut active = walks.len();
        while active > 0 {
            for (g, walk) in walks.iter_mut().enumerate() {
                if !walk.live {
                    continue;
                }
                self.distances::<AVX>(walk.z, &walk.fresh, &mut measured);
                for (&j, &d) in walk.fresh.iter().zip(&measured) {
                    self.keep(Cand(d, j), ef, &mut walk.pool, &mut walk.first);
                }
                walk.fresh.clear();
                if !self.expand(walk, g, marks) {
                    continue;
                }
                // Done: its k nearest, its marks cleared, and the next row in its slot.
                let bit = 1u8 << g;
                for &i in &walk.marked {
                    marks.0[i as usize] &= !bit;
                }
                walk.pool.truncate(k);
                out[walk.row] = (
                    walk.pool.iter().map(|c| c.i as usize).collect(),
                    walk.pool.iter().map(|c| c.d.sqrt()).collect(),
                );
                if next_row < rows.len() {
                    self.start(walk, next_row, rows[next_row], g, marks);
                    next_row += 1;
                } else {
                    walk.live = false;
                    active -= 1;
                }
            }
        }
    }

    /// Expands `walk`'s nearest kept point not yet expanded: marks its unmarked
    /// neighbours (slot `g`) and asks for their rows, to be measured at the walk's next
    /// step. Returns whether the walk is done (every kept point expanded).
    #[inline(always)]
    fn expand(&self, walk: &mut Walk<'_>, g: usize, marks: &mut Marks) -> bool {
        let pool = &mut walk.pool;
        while walk.first < pool.len() && pool[walk.first].expanded {
            walk.first += 1;
        }
        let Some(entry) = pool.get_mut(walk.first) else {
            return true;
        };
        entry.expanded = true;
        let i = entry.i as usize;
        let next = &self.adjacent[self.offsets[i]..self.offsets[i + 1]];
        // The edges of the node likely to be expanded next, for the walk's next step.
        if let Some(n) = pool[walk.first + 1..].iter().find(|e| !e.expanded) {
            if let Some(a) = self.adjacent.get(self.offsets[n.i as usize]) {
                prefetch_line(a);
            }
        }
        // The rows are scattered over the training matrix: ask for all those not yet
        // marked now, measure them at the walk's next step (independent chains), then
        // keep them in the list's order, as when each is measured and kept in turn.
        let bit = 1u8 << g;
        for &j in next {
            let m = &mut marks.0[j as usize];
            if *m & bit == 0 {
                *m |= bit;
                prefetch(self.point(j));
                walk.fresh.push(j);
                walk.marked.push(j);
            }
        }
        false
    }
}

/// Each of `n` points' edges both ways (`list(i)`: row i's list), as offsets into one
/// flat array: a point's segment holds its own list and the points whose lists hold
/// it, merged in increasing order without repeats.
fn both_ways<'a>(n: usize, list: impl Fn(usize) -> &'a [u32]) -> (Vec<usize>, Vec<u32>) {
    // Segments sized by counting, then filled: the own list, then the listing points
    // (increasing, as i increases); then each segment's two parts merged in place.
    let mut start = vec![0usize; n + 1];
    for i in 0..n {
        start[i + 1] += list(i).len();
        for &j in list(i) {
            start[j as usize + 1] += 1;
        }
    }
    for i in 0..n {
        start[i + 1] += start[i];
    }
    let mut adjacent = vec![0u32; start[n]];
    let mut fill: Vec<usize> = (0..n)
        .map(|i| {
            let own = list(i);
            adjacent[start[i]..start[i] + own.len()].copy_from_slice(own);
            start[i] + own.len()
        })
        .collect();
    for i in 0..n {
        for &j in list(i) {
            adjacent[fill[j as usize]] = i as u32;
            fill[j as usize] += 1;
        }
    }
    let mut offsets = Vec::with_capacity(n + 1);
    offsets.push(0);
    let mut len = 0;
    let mut own = Vec::new();
    for i in 0..n {
        let (mid, to) = (start[i] + list(i).len(), start[i + 1]);
        own.clear();
        own.extend_from_slice(&adjacent[start[i]..mid]);
        own.sort_unstable();
        let (mut a, mut b) = (0, mid);
        let mut last = None;
        while a < own.len() || b < to {
            let v = if b == to || (a < own.len() && own[a] <= adjacent[b]) {
                a += 1;
                own[a - 1]
            } else {
                b += 1;
                adjacent[b - 1]
            };
            // In place: with c values taken, the write lands at or before
            // start[i] + c − 1 ≤ b − 1 (a ≤ own.len()), an entry already read.
            if last != Some(v) {
                adjacent[len] = v;
                len += 1;
                last = Some(v);
            }
        }
        offsets.push(len);
    }
    adjacent.truncate(len);
    (offsets, adjacent)
}

/// The rows of `x` row-major, their [`RowTable`] and the batch order of
/// [`batch_order`].
fn hashed_rows(x: MatRef<'_, f64>) -> (Vec<f64>, RowTable, Order) {
    let w = x.ncols();
    let rows_x = crate::linalg::row_major(x);
    let rows = RowTable::of_rows(&rows_x, w);
    (rows_x, rows, batch_order(x))
}

/// The training rows by the hash of their bits: an open-addressing table of at least
/// twice as many slots as rows, a slot holding the hash's upper half and the row + 1
/// (0: empty), probed linearly from the hash's lower bits. A lookup costs one or two
/// cache misses; the binary search over a sorted table of (hash, row) it replaces made
/// about sixteen dependent ones, 7 % of the walk's time (Fashion-MNIST, 60000 rows).
/// Equal rows are all found (in any order: the walk keeps its candidates by distance,
/// then index, so the order of visits changes no result).
#[derive(Clone, Debug, PartialEq)]
struct RowTable {
    slots: Vec<(u32, u32)>,
}

impl RowTable {
    /// The table of `n` rows whose hashes are `hashes` (row 0's first).
    fn new(hashes: impl Iterator<Item = u64>, n: usize) -> RowTable {
        let mut slots = vec![(0u32, 0u32); (2 * n).next_power_of_two().max(2)];
        let mask = slots.len() - 1;
        for (i, h) in hashes.enumerate() {
            let mut s = h as usize & mask;
            while slots[s].1 != 0 {
                s = (s + 1) & mask;
            }
            slots[s] = ((h >> 32) as u32, i as u32 + 1);
        }
        RowTable { slots }
    }

    /// The table of the rows of `x` (row-major, width `w`).
    fn of_rows(x: &[f64], w: usize) -> RowTable {
        let n = x.len().checked_div(w).unwrap_or(0);
        RowTable::new(
            (0..n).map(|i| row_hash(x[i * w..(i + 1) * w].iter().copied())),
            n,
        )
    }

    /// The rows of `x` (row-major, the table's rows) equal to `z` bit for bit.
    fn equal<'a>(&'a self, x: &'a [f64], z: &'a [f64]) -> impl Iterator<Item = u32> + 'a {
        let w = z.len();
        self.get(row_hash(z.iter().copied()))
            .filter(move |&i| x[i as usize * w..(i as usize + 1) * w] == *z)
    }

    /// The rows whose hash may be `h` (the upper half equal; the caller compares bits).
    fn get(&self, h: u64) -> impl Iterator<Item = u32> + '_ {
        let mask = self.slots.len() - 1;
        let tag = (h >> 32) as u32;
        let start = h as usize & mask;
        (0..self.slots.len())
            .map(move |t| self.slots[(start + t) & mask])
            .take_while(|s| s.1 != 0)
            .filter(move |s| s.0 == tag)
            .map(|s| s.1 - 1)
    }
}

/// The columns of largest and second largest variance of `x` and half the standard
/// deviation of the first: the cells [`GraphIndex::search`] orders a batch by.
fn batch_order(x: MatRef<'_, f64>) -> Order {
    let n = x.nrows().max(1) as f64;
    let var = |c: usize| {
        let mean = x.col(c).iter().sum::<f64>() / n;
        x.col(c)
            .iter()
            .map(|v| (v - mean) * (v - mean))
            .sum::<f64>()
            / n
    };
    let mut by: Vec<(f64, usize)> = (0..x.ncols()).map(|c| (var(c), c)).collect();
    by.sort_by(|p, q| q.0.total_cmp(&p.0).then(p.1.cmp(&q.1)));
    let a = by.first().map_or(0, |v| v.1);
    let b = by.get(1).map_or(a, |v| v.1);
    let cell = by.first().map_or(0.0, |v| v.0.sqrt() / 2.0);
    (
        a,
        b,
        if cell.is_finite() && cell > 0.0 {
            cell
        } else {
            1.0
        },
    )
}

#[cfg(test)]
mod tests;
