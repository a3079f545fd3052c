//! A small, pinned pseudo-random generator (xoshiro256++ seeded by SplitMix64).
//!
//! Hand-written on purpose: maths §10 asks that generator, seed and noise be pinned for
//! every data set and benchmark, and a crate's generator may change between versions.
//! The sequence produced for a seed is part of this crate's stable behaviour.

/// Deterministic generator of uniform and normal variates.
#[derive(Clone, Debug)]
pub struct Rng {
    s: [u64; 4],
    spare_normal: Option<f64>,
}

impl Rng {
    /// A generator whose whole stream is fixed by `seed`.
    pub fn new(seed: u64) -> Self {
        let mut sm = seed;
        let mut next = || {
            sm = sm.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = sm;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        };
        Rng {
            s: [next(), next(), next(), next()],
            spare_normal: None,
        }
    }

    /// The next raw 64-bit output.
    pub fn next_u64(&mut self) -> u64 {
        let s = &mut self.s;
        let result = s[0].wrapping_add(s[3]).rotate_left(23).wrapping_add(s[0]);
        let t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = s[3].rotate_left(45);
        result
    }

    /// Uniform on [0, 1) with 53 random bits.
    pub fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Standard normal (polar Box–Muller; the second variate is kept for the next call).
    pub fn normal(&mut self) -> f64 {
        if let Some(z) = self.spare_normal.take() {
            return z;
        }
        loop {
            let u = 2.0 * self.uniform() - 1.0;
            let v = 2.0 * self.uniform() - 1.0;
            let s = u * u + v * v;
            if s > 0.0 && s < 1.0 {
                let f = (-2.0 * s.ln() / s).sqrt();
                self.spare_normal = Some(v * f);
                return u * f;
            }
        }
    }

    /// An n×d matrix of standard normal draws (filled as `Mat::from_fn` visits it).
    pub fn normal_mat(&mut self, n: usize, d: usize) -> faer::Mat<f64> {
        faer::Mat::from_fn(n, d, |_, _| self.normal())
    }

    /// Uniform integer in `0..n` (n > 0), by rejection so that it is unbiased.
    pub fn below(&mut self, n: usize) -> usize {
        let n = n as u64;
        let zone = u64::MAX - (u64::MAX % n);
        loop {
            let x = self.next_u64();
            if x < zone {
                return (x % n) as usize;
            }
        }
    }

    /// `k` distinct indices from `0..n`, in increasing order (partial Fisher–Yates).
    pub fn sample_indices(&mut self, n: usize, k: usize) -> Vec<usize> {
        let k = k.min(n);
        let mut idx: Vec<usize> = (0..n).collect();
        for i in 0..k {
            let j = i + self.below(n - i);
            idx.swap(i, j);
        }
        idx.truncate(k);
        idx.sort_unstable();
        idx
    }
}

impl Rng {
    /// `k` distinct indices from `0..n`, in increasing order, in O(k) memory (Floyd's
    /// algorithm): for sampling a few rows of a very large N.
    pub fn sample_sparse(&mut self, n: usize, k: usize) -> Vec<usize> {
        let k = k.min(n);
        let mut set = std::collections::HashSet::with_capacity(k);
        for j in n - k..n {
            let t = self.below(j + 1);
            if !set.insert(t) {
                set.insert(j);
            }
        }
        let mut idx: Vec<usize> = set.into_iter().collect();
        idx.sort_unstable();
        idx
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Mean and variance of 200 000 draws of `draw`, each checked by `check`.
    fn moments(mut draw: impl FnMut() -> f64, check: impl Fn(f64) -> bool) -> (f64, f64) {
        let n = 200_000;
        let (mut s, mut s2) = (0.0, 0.0);
        for _ in 0..n {
            let u = draw();
            assert!(check(u), "{u}");
            s += u;
            s2 += u * u;
        }
        let mean = s / n as f64;
        (mean, s2 / n as f64 - mean * mean)
    }

    #[test]
    fn uniform_moments() {
        let mut r = Rng::new(7);
        let (mean, var) = moments(|| r.uniform(), |u| (0.0..1.0).contains(&u));
        assert!((mean - 0.5).abs() < 5e-3, "{mean}");
        assert!((var - 1.0 / 12.0).abs() < 2e-3, "{var}");
    }

    #[test]
    fn normal_moments() {
        let mut r = Rng::new(11);
        let (mean, var) = moments(|| r.normal(), f64::is_finite);
        assert!(mean.abs() < 1e-2, "{mean}");
        assert!((var - 1.0).abs() < 2e-2, "{var}");
    }

    #[test]
    fn same_seed_same_stream_and_distinct_samples() {
        let a: Vec<u64> = {
            let mut r = Rng::new(3);
            (0..5).map(|_| r.next_u64()).collect()
        };
        let b: Vec<u64> = {
            let mut r = Rng::new(3);
            (0..5).map(|_| r.next_u64()).collect()
        };
        assert_eq!(a, b);
        let s = Rng::new(1).sample_indices(100, 30);
        assert_eq!(s.len(), 30);
        assert!(s.windows(2).all(|w| w[0] < w[1]));
    }
}
