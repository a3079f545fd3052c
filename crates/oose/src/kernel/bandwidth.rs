//! The bandwidth ε (maths §1): one type, [`Epsilon`], for every kernel in the crate, and
//! the rules that choose it from the training data.
//!
//! The median rule: kernels whose argument is r² (gaussian, (inverse) multiquadric, the
//! diffusion kernel) get the median of the squared distances; kernels whose argument is r
//! (laplacian, wendland) get the median distance, so that ε has the units of the kernel's
//! argument. Above [`SUBSAMPLE`] points the median is taken over a fixed-seed random
//! subsample. The log-slope rule (gaussian weights of the diffusion kernel only) is
//! [`log_slope_epsilon`].

use crate::error::{Error, Result};
use crate::kernel::distance::sq_distance_blocks;
use crate::model::params::Value;
use crate::rng::Rng;
use faer::MatRef;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

/// The bandwidth ε of a kernel: a rule applied to the training data once, at fit time
/// (the fitted model stores the resolved value), or a value.
///
/// ```
/// use oose::kernel::Epsilon;
/// assert_eq!(Epsilon::from_name("auto").unwrap(), Epsilon::Median);
/// assert_eq!(Epsilon::from_name("2.5").unwrap(), Epsilon::Value(2.5));
/// assert_eq!(Epsilon::from_name("inf").unwrap(), Epsilon::Value(f64::INFINITY));
/// assert!(Epsilon::from_name("-1").is_err());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, Default)]
pub enum Epsilon {
    /// The median rule (`auto`, `median`): median squared pairwise distance (median
    /// distance for kernels of r).
    #[default]
    Median,
    /// The log-slope rule of Berry, Giannakis and Harlim (`log-slope`, `bgh`): the ε
    /// maximising d log Σw / d log ε. The diffusion kernel's gaussian weights only.
    LogSlope,
    /// A fixed ε > 0. `f64::INFINITY` is accepted by sparse diffusion kernels only
    /// (every kept weight 1).
    Value(f64),
}

impl Epsilon {
    /// Parses `auto`/`median`, `log-slope`/`bgh`, `inf`/`infinity` or a number > 0.
    pub fn from_name(s: &str) -> Result<Epsilon> {
        match s {
            "auto" | "median" => Ok(Epsilon::Median),
            "log-slope" | "bgh" => Ok(Epsilon::LogSlope),
            "inf" | "infinity" => Ok(Epsilon::Value(f64::INFINITY)),
            _ => s
                .parse::<f64>()
                .map_err(|_| {
                    Error::param(
                        "epsilon",
                        format!("expected a number > 0, auto, median, log-slope or inf, got {s:?}"),
                    )
                })
                .and_then(Epsilon::value),
        }
    }

    /// A fixed ε, checked to be > 0 (and not NaN).
    pub fn value(v: f64) -> Result<Epsilon> {
        if v > 0.0 {
            Ok(Epsilon::Value(v))
        } else {
            Err(Error::param("epsilon", format!("must be > 0, got {v}")))
        }
    }

    /// The rule's name in reports: `median`, `log-slope` or `given`.
    pub fn rule(&self) -> &'static str {
        match self {
            Epsilon::Median => "median",
            Epsilon::LogSlope => "log-slope",
            Epsilon::Value(_) => "given",
        }
    }

    /// ε as a parameter value: a number, `auto` or `log-slope`.
    pub(crate) fn to_value(self) -> Value {
        match self {
            Epsilon::Median => Value::Str("auto".into()),
            Epsilon::LogSlope => Value::Str("log-slope".into()),
            Epsilon::Value(x) => Value::Float(x),
        }
    }

    /// ε from a parameter value (a number or one of [`Epsilon::from_name`]'s names).
    pub(crate) fn from_value(v: Value) -> Result<Epsilon> {
        match v {
            Value::Str(s) => Epsilon::from_name(&s),
            Value::Float(x) => Epsilon::value(x),
            Value::Int(i) => Epsilon::value(i as f64),
            other => Err(Error::param(
                "epsilon",
                format!("expected a number > 0, auto, median, log-slope or inf, got {other}"),
            )),
        }
    }

    /// Applies the rule to the training points `x`: ε, and for the log-slope rule the
    /// dimension estimate (twice the maximal slope). `of_distance`: the kernel's argument
    /// is r, not r² (the median rule then takes the median distance).
    pub(crate) fn resolve(
        self,
        x: MatRef<'_, f64>,
        of_distance: bool,
    ) -> Result<(f64, Option<f64>)> {
        let coincide = || {
            let c = crate::validate::copies(x);
            Error::param(
                "epsilon",
                if c.distinct <= 1 {
                    "the automatic rule found no positive pairwise distance (the points \
                     coincide); give ε explicitly"
                        .to_string()
                } else {
                    format!(
                        "the automatic rule found no usable pairwise distance: the {} points \
                         are {} distinct ones, the most repeated {} times, so most pairs \
                         coincide; give ε explicitly",
                        x.nrows(),
                        c.distinct,
                        c.commonest
                    )
                },
            )
        };
        let positive = |e: f64| (e > 0.0 && e.is_finite()).then_some(e);
        match self {
            Epsilon::Value(e) => Ok((e, None)),
            Epsilon::Median => {
                let m = median_sq_distance(x);
                positive(if of_distance { m.sqrt() } else { m })
                    .map(|e| (e, None))
                    .ok_or_else(coincide)
            }
            Epsilon::LogSlope => log_slope_epsilon(x)
                .map(|(e, s)| (e, Some(2.0 * s)))
                .ok_or_else(coincide),
        }
    }
}

/// The on-disk form of a kernel's ε since format 1: variant 0 the median rule (`auto`),
/// variant 1 a value. A kernel never holds the log-slope rule (it is refused when the
/// kernel is built), so the diffusion kernel's three-variant form is not needed there.
pub(crate) mod kernel_format {
    use super::Epsilon;
    use serde::{ser::Error as _, Deserialize, Deserializer, Serialize, Serializer};

    #[derive(Serialize, Deserialize)]
    enum Bandwidth {
        Auto,
        Value(f64),
    }

    pub(crate) fn serialize<S: Serializer>(e: &Epsilon, s: S) -> Result<S::Ok, S::Error> {
        match *e {
            Epsilon::Median => Bandwidth::Auto,
            Epsilon::Value(v) => Bandwidth::Value(v),
            Epsilon::LogSlope => {
                return Err(S::Error::custom(
                    "a kernel on points cannot hold the log-slope rule",
                ))
            }
        }
        .serialize(s)
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Epsilon, D::Error> {
        match Bandwidth::deserialize(d)? {
            Bandwidth::Auto => Ok(Epsilon::Median),
            Bandwidth::Value(v) if v > 0.0 => Ok(Epsilon::Value(v)),
            Bandwidth::Value(v) => Err(crate::model::refuse(format!("ε must be > 0, got {v}"))),
        }
    }
}

/// Largest number of points whose pairs are all used; above it, a subsample of this size.
pub const SUBSAMPLE: usize = 3000;

/// Median of the squared pairwise distances between distinct rows of `x` (pairs i < j).
/// Returns 0 when there are fewer than two rows or all points coincide.
pub fn median_sq_distance(x: MatRef<'_, f64>) -> f64 {
    if x.nrows() < 2 {
        return 0.0;
    }
    let mut vals = pair_sq_distance_bits(x);
    let n = vals.len();
    let (_, &mut hi, _) = vals.select_nth_unstable(n / 2);
    let hi = f64::from_bits(hi);
    if n % 2 == 1 {
        hi
    } else {
        let lo = vals[..n / 2]
            .iter()
            .copied()
            .max()
            .map_or(hi, f64::from_bits);
        0.5 * (lo + hi)
    }
}

/// The squared distances of all pairs i < j of rows of `x` (of a fixed-seed subsample
/// of [`SUBSAMPLE`] rows above that size), as the bit patterns of the doubles:
/// non-negative finite doubles order like their bits, so selection runs on integers.
fn pair_sq_distance_bits(x: MatRef<'_, f64>) -> Vec<u64> {
    let n = x.nrows();
    let idx: Vec<usize> = if n > SUBSAMPLE {
        Rng::new(0x05EE_BA4D).sample_indices(n, SUBSAMPLE)
    } else {
        (0..n).collect()
    };
    // Pairs i < j from coordinate differences (exact, and for the low dimensions of
    // typical data cheaper than a GEMM of the full m×m matrix), summed many at a time
    // (`sq_distance_blocks`), in parallel over blocks of rows i.
    let dim = x.ncols();
    let rows: Vec<f64> = idx
        .iter()
        .flat_map(|&i| (0..dim).map(move |j| x[(i, j)]))
        .collect();
    let m = idx.len();
    if dim == 0 {
        return vec![0; m * (m - 1) / 2];
    }
    let rows = &rows;
    (0..m)
        .step_by(ROW_BLOCK)
        .collect::<Vec<_>>()
        .into_par_iter()
        .flat_map_iter(|i0| {
            let a = &rows[i0 * dim..(i0 + ROW_BLOCK).min(m) * dim];
            let (mut tile, mut pack, mut bits) = (Vec::new(), Vec::new(), Vec::new());
            sq_distance_blocks(
                a,
                &rows[i0 * dim..],
                dim,
                &mut tile,
                &mut pack,
                |r, j0, d| {
                    // Row i0 + r against rows i0 + j0 + c: keep c > r.
                    bits.extend(
                        d.iter()
                            .skip((r + 1).saturating_sub(j0))
                            .map(|v| v.to_bits()),
                    );
                },
            );
            bits
        })
        .collect()
}

/// Rows per parallel task of the pairwise distance passes (each block of 256 points is
/// read once for this many rows).
const ROW_BLOCK: usize = 64;

/// The log-slope rule of Berry, Giannakis and Harlim for a gaussian kernel (maths §1):
/// the ε maximising d log S / d log ε, S(ε) = Σ_{i,j} exp(−||xᵢ − x_j||²/ε) over all
/// ordered pairs of the N points, i = j included.
///
/// S is estimated without N² work: the squared distances from a fixed-seed subsample
/// of R rows (R = 20·10⁶/N clamped to [200, 1000], all rows when N is smaller) to all N
/// points go into a histogram of 64 bins per octave (bins read off the exponent and
/// top mantissa bits, so each bin spans < 1.1 % in d²), and
/// S(ε) ≈ N + (N/R) Σ_bins count · exp(−d²_bin/ε). The slope (Σ w d²/ε)/S is evaluated
/// exactly on that histogram on a grid of 4 values per octave, then refined by
/// golden-section search in log ε. Returns (ε, maximal slope); twice the slope
/// estimates the intrinsic dimension. `None` when all points coincide.
pub fn log_slope_epsilon(x: MatRef<'_, f64>) -> Option<(f64, f64)> {
    let n = x.nrows();
    let dim = x.ncols();
    let r = if n <= 1000 {
        n
    } else {
        (20_000_000 / n).clamp(200, 1000)
    };
    let rows_idx: Vec<usize> = if r == n {
        (0..n).collect()
    } else {
        Rng::new(0x0B64_5109).sample_indices(n, r)
    };
    let all: Vec<f64> = (0..n)
        .flat_map(|i| (0..dim).map(move |j| x[(i, j)]))
        .collect();
    const SHIFT: u32 = 46; // keep 11 exponent bits and 6 mantissa bits: 64 bins/octave
    const BINS: usize = 1 << (63 - SHIFT);
    let all = &all;
    let counts: Vec<u64> = rows_idx
        .par_chunks(ROW_BLOCK)
        .fold(
            || vec![0u64; BINS],
            |mut c, ids| {
                let a: Vec<f64> = ids
                    .iter()
                    .flat_map(|&i| all[i * dim..(i + 1) * dim].iter().copied())
                    .collect();
                let (mut tile, mut pack) = (Vec::new(), Vec::new());
                sq_distance_blocks(&a, all, dim, &mut tile, &mut pack, |r, j0, d| {
                    for (j, v) in (j0..).zip(d) {
                        if j != ids[r] {
                            c[(v.to_bits() >> SHIFT) as usize] += 1;
                        }
                    }
                });
                c
            },
        )
        .reduce(
            || vec![0u64; BINS],
            |mut a, b| {
                a.iter_mut().zip(&b).for_each(|(x, y)| *x += y);
                a
            },
        );
    // (representative d², weight count·N/R); bin 0 holds exact zeros (and subnormals).
    let scale = n as f64 / r as f64;
    let bins: Vec<(f64, f64)> = counts
        .iter()
        .enumerate()
        .filter(|p| *p.1 > 0)
        .map(|(b, &c)| {
            let mid = if b == 0 {
                0.0
            } else {
                f64::from_bits(((b as u64) << SHIFT) | (1u64 << (SHIFT - 1)))
            };
            (mid, c as f64 * scale)
        })
        .collect();
    let positive: Vec<f64> = bins.iter().map(|p| p.0).filter(|&d| d > 0.0).collect();
    let lo = positive.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = positive.iter().copied().fold(0.0f64, f64::max);
    if positive.is_empty() {
        return None;
    }
    let slope = |log_eps: f64| {
        let eps = log_eps.exp2();
        let (s, ds) = bins.iter().fold((0.0, 0.0), |acc, &(d, c)| {
            let w = c * (-d / eps).exp();
            (acc.0 + w, acc.1 + w * d / eps)
        });
        ds / (n as f64 + s)
    };
    let (a, b) = ((lo.log2() - 2.0).floor(), (hi.log2() + 2.0).ceil());
    let steps = ((b - a) * 4.0) as usize;
    let (best, _) = (0..=steps)
        .map(|i| {
            let l = a + i as f64 / 4.0;
            (l, slope(l))
        })
        .max_by(|p, q| p.1.total_cmp(&q.1))?;
    // Golden-section search for the maximum on the bracketing grid interval.
    let g = 0.5 * (5f64.sqrt() - 1.0);
    let (mut l, mut r) = (best - 0.25, best + 0.25);
    let (mut c, mut d) = (r - g * (r - l), l + g * (r - l));
    let (mut fc, mut fd) = (slope(c), slope(d));
    for _ in 0..40 {
        if fc > fd {
            r = d;
            d = c;
            fd = fc;
            c = r - g * (r - l);
            fc = slope(c);
        } else {
            l = c;
            c = d;
            fc = fd;
            d = l + g * (r - l);
            fd = slope(d);
        }
    }
    let l_best = 0.5 * (l + r);
    Some((l_best.exp2(), slope(l_best)))
}

/// Median of `v` (mean of the two middle values for an even count). Reorders `v`.
pub fn median(v: &mut [f64]) -> f64 {
    let n = v.len();
    if n == 0 {
        return f64::NAN;
    }
    let cmp = |a: &f64, b: &f64| a.total_cmp(b);
    let (_, &mut hi, _) = v.select_nth_unstable_by(n / 2, cmp);
    if n % 2 == 1 {
        hi
    } else {
        let lo = v[..n / 2].iter().copied().fold(f64::NEG_INFINITY, f64::max);
        0.5 * (lo + hi)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::Kernel;

    #[test]
    fn no_usable_distance_says_whether_the_points_coincide_or_repeat() {
        // 79 copies of one point and one other: the median distance is 0, yet the
        // points do not all coincide (the log-slope rule finds the 79 other distances).
        let x = faer::Mat::from_fn(80, 2, |i, _| if i == 79 { 0.0 } else { 1.0 });
        let e = Epsilon::Median.resolve(x.as_ref(), false).unwrap_err();
        assert!(
            e.to_string()
                .contains("the 80 points are 2 distinct ones, the most repeated 79 times"),
            "{e}"
        );
        let same = faer::Mat::from_fn(5, 2, |_, _| -0.0 + 0.0);
        let e = Epsilon::Median.resolve(same.as_ref(), false).unwrap_err();
        assert!(e.to_string().contains("(the points coincide)"), "{e}");
    }

    #[test]
    fn a_kernel_keeps_its_two_variant_epsilon_on_disk() {
        // Format 1 wrote a kernel's ε as {Auto = 0, Value(f64) = 1}: variant tag, then the
        // value's little-endian bytes. The one ε type must keep those bytes.
        let auto = postcard::to_allocvec(&Kernel::Gaussian {
            epsilon: Epsilon::Median,
        })
        .unwrap();
        assert_eq!(auto, vec![0, 0]);
        let given = postcard::to_allocvec(&Kernel::gaussian(2.5)).unwrap();
        let mut want = vec![0, 1];
        want.extend_from_slice(&2.5f64.to_le_bytes());
        assert_eq!(given, want);
        for k in [Kernel::default(), Kernel::gaussian(2.5)] {
            let back: Kernel = postcard::from_bytes(&postcard::to_allocvec(&k).unwrap()).unwrap();
            assert_eq!(back, k);
        }
        // The diffusion kernel's form has three variants: the log-slope rule is tag 1.
        assert_eq!(postcard::to_allocvec(&Epsilon::LogSlope).unwrap(), vec![1]);
        assert_eq!(postcard::to_allocvec(&Epsilon::Value(1.0)).unwrap()[0], 2);
    }

    #[test]
    fn kernels_on_points_refuse_the_log_slope_rule_by_name() {
        let k = Kernel::Laplacian {
            epsilon: Epsilon::LogSlope,
        };
        let e = k.validate().unwrap_err().to_string();
        assert!(e.contains("epsilon") && e.contains("log-slope"), "{e}");
        assert!(postcard::to_allocvec(&k).is_err());
        assert!(Kernel::from_name(
            "gaussian",
            Epsilon::from_name("bgh").unwrap(),
            None,
            1.0,
            1.0,
            3
        )
        .is_err());
    }

    #[test]
    fn one_vocabulary_for_epsilon() {
        for (name, want) in [
            ("auto", Epsilon::Median),
            ("median", Epsilon::Median),
            ("log-slope", Epsilon::LogSlope),
            ("bgh", Epsilon::LogSlope),
            ("inf", Epsilon::Value(f64::INFINITY)),
            ("0.5", Epsilon::Value(0.5)),
        ] {
            let e = Epsilon::from_name(name).unwrap();
            assert_eq!(e, want, "{name}");
            assert_eq!(Epsilon::from_value(e.to_value()).unwrap(), e);
        }
        for bad in ["0", "-1", "nan", "wide"] {
            assert!(Epsilon::from_name(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn median_of_known_values() {
        assert_eq!(median(&mut [3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&mut [4.0, 1.0, 3.0, 2.0]), 2.5);
    }

    #[test]
    fn log_slope_estimates_the_dimension_of_a_grid() {
        // A 40×40 grid in the plane: twice the maximal slope is close to 2.
        let x = faer::Mat::from_fn(1600, 2, |i, j| {
            if j == 0 {
                (i % 40) as f64
            } else {
                (i / 40) as f64
            }
        });
        let (eps, slope) = log_slope_epsilon(x.as_ref()).unwrap();
        assert!(
            (2.0 * slope - 2.0).abs() < 0.25,
            "dimension {}",
            2.0 * slope
        );
        assert!(eps > 1.0 && eps < 400.0, "{eps}");
        let same = faer::Mat::from_fn(5, 2, |_, _| 1.0);
        assert!(log_slope_epsilon(same.as_ref()).is_none());
    }

    #[test]
    fn median_sq_distance_on_a_line() {
        // Points 0, 1, 2, 3: squared distances 1,1,1,4,4,9 → median (1+4)/2.
        let x = faer::Mat::from_fn(4, 1, |i, _| i as f64);
        assert_eq!(median_sq_distance(x.as_ref()), 2.5);
    }
}
