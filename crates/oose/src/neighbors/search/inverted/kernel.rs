//! The distance kernel of the inverted lists (maths §6): d = (‖p‖² − 2 q·p) + shift for
//! up to [`GROUP`] queries against a tile of [`LANES`] points, each q·p one chain of
//! fused multiply-adds over the coordinates in order, so that AVX-512, AVX2 and plain
//! code give the same bits (a unit test compares them), and the lanes not above a
//! bound marked for the caller.

/// Points per tile: the lanes of the distance kernel.
pub(super) const LANES: usize = 16;
/// Queries measured against a tile at once.
pub(super) const GROUP: usize = 8;

/// Σ v², one fused multiply-add after another (the kernel's arithmetic).
pub(super) fn norm2(v: &[f32]) -> f32 {
    v.iter().fold(0.0f32, |a, &x| x.mul_add(x, a))
}

/// ‖p‖² − 2 q·p for up to [`GROUP`] queries against a tile's [`LANES`] points, q·p one
/// chain of fused multiply-adds over the coordinates in order (the same bits by every
/// instruction set).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Kernel {
    Plain,
    #[cfg(target_arch = "x86_64")]
    Avx2,
    #[cfg(target_arch = "x86_64")]
    Avx512,
}

pub(super) type Out = [[f32; LANES]; GROUP];

impl Kernel {
    /// The fastest kernel this CPU runs.
    pub(super) fn detect() -> Kernel {
        #[cfg(target_arch = "x86_64")]
        {
            // `norm2` runs fused multiply-adds beside either vector kernel.
            if std::arch::is_x86_feature_detected!("avx512f")
                && std::arch::is_x86_feature_detected!("fma")
            {
                return Kernel::Avx512;
            }
            if std::arch::is_x86_feature_detected!("avx2")
                && std::arch::is_x86_feature_detected!("fma")
            {
                return Kernel::Avx2;
            }
        }
        Kernel::Plain
    }

    /// Every kernel this CPU runs (for the test that they agree).
    #[cfg(test)]
    pub(super) fn all() -> Vec<Kernel> {
        let mut all = vec![Kernel::Plain];
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx2")
                && std::arch::is_x86_feature_detected!("fma")
            {
                all.push(Kernel::Avx2);
            }
            if std::arch::is_x86_feature_detected!("avx512f")
                && std::arch::is_x86_feature_detected!("fma")
            {
                all.push(Kernel::Avx512);
            }
        }
        all
    }

    /// Queries `qs` (row after row, each of the tile's width; at most [`GROUP`], at
    /// least one) against the tile `(data, norms)`: d = (‖p‖² − 2 q_u·p) + shift[u]
    /// into `out[u]`, and in `mask[u]` the lanes where d ≤ `worst[u]`.
    #[inline]
    pub(super) fn run(self, qs: &[f32], tile: (&[f32], &[f32]), by: &By, out: &mut Out) -> Masks {
        let (data, norms) = tile;
        // The unsafe kernels read the w values of each query and LANES × w of the tile.
        let w = data.len() / LANES;
        assert!(w > 0 && data.len() == w * LANES && norms.len() == LANES);
        assert!(qs.len().is_multiple_of(w) && (1..=GROUP).contains(&(qs.len() / w)));
        match self {
            Kernel::Plain => plain(qs, data, norms, by, out),
            // SAFETY: `detect`/`all` give these only on a CPU with the features; the
            // slices' lengths are checked above (w coordinates, LANES lanes).
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx2 => unsafe { avx2(qs, data, norms, by, out) },
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx512 => unsafe { avx512(qs, data, norms, by, out) },
        }
    }

    /// Σ v², one fused multiply-add after another ([`norm2`]), compiled for the CPU.
    pub(super) fn norm2(self, v: &[f32]) -> f32 {
        match self {
            Kernel::Plain => norm2(v),
            // SAFETY: as in `run`.
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx2 | Kernel::Avx512 => unsafe { norm2_fma(v) },
        }
    }
}

/// Each query's shift and the distance it must not exceed to be marked.
pub(super) struct By {
    pub(super) shift: [f32; GROUP],
    pub(super) worst: [f32; GROUP],
}

impl By {
    /// No shift, every lane marked that is not NaN.
    pub(super) const ALL: By = By {
        shift: [0.0; GROUP],
        worst: [f32::INFINITY; GROUP],
    };
}

/// The marked lanes of each query (bit l: lane l).
pub(super) type Masks = [u32; GROUP];

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "fma")]
unsafe fn norm2_fma(v: &[f32]) -> f32 {
    norm2(v)
}

pub(super) fn plain(qs: &[f32], data: &[f32], norms: &[f32], by: &By, out: &mut Out) -> Masks {
    let w = data.len() / LANES;
    let mut masks = [0; GROUP];
    for (u, q) in qs.chunks_exact(w).enumerate() {
        for lane in 0..LANES {
            let mut acc = 0.0f32;
            for (t, &v) in q.iter().enumerate() {
                acc = v.mul_add(data[t * LANES + lane], acc);
            }
            let d = (-2.0f32).mul_add(acc, norms[lane]) + by.shift[u];
            out[u][lane] = d;
            masks[u] |= u32::from(d <= by.worst[u]) << lane;
        }
    }
    masks
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn avx2(qs: &[f32], data: &[f32], norms: &[f32], by: &By, out: &mut Out) -> Masks {
    use std::arch::x86_64::*;
    let w = data.len() / LANES;
    let p = data.as_ptr();
    let mut masks = [0; GROUP];
    // Four queries at a time: eight accumulators of eight lanes.
    for (g, qs) in qs.chunks(4 * w).enumerate() {
        let nq = qs.len() / w;
        let q: [*const f32; 4] = std::array::from_fn(|u| qs.as_ptr().add(u.min(nq - 1) * w));
        let mut acc = [[_mm256_setzero_ps(); 2]; 4];
        for t in 0..w {
            let a = _mm256_loadu_ps(p.add(t * LANES));
            let b = _mm256_loadu_ps(p.add(t * LANES + 8));
            for u in 0..4 {
                let s = _mm256_set1_ps(*q[u].add(t));
                acc[u][0] = _mm256_fmadd_ps(s, a, acc[u][0]);
                acc[u][1] = _mm256_fmadd_ps(s, b, acc[u][1]);
            }
        }
        let m2 = _mm256_set1_ps(-2.0);
        let n0 = _mm256_loadu_ps(norms.as_ptr());
        let n1 = _mm256_loadu_ps(norms.as_ptr().add(8));
        for (u, acc) in acc.iter().enumerate().take(nq) {
            let v = 4 * g + u;
            let (s, worst) = (_mm256_set1_ps(by.shift[v]), _mm256_set1_ps(by.worst[v]));
            let d0 = _mm256_add_ps(_mm256_fmadd_ps(m2, acc[0], n0), s);
            let d1 = _mm256_add_ps(_mm256_fmadd_ps(m2, acc[1], n1), s);
            _mm256_storeu_ps(out[v].as_mut_ptr(), d0);
            _mm256_storeu_ps(out[v].as_mut_ptr().add(8), d1);
            let k0 = _mm256_movemask_ps(_mm256_cmp_ps::<_CMP_LE_OQ>(d0, worst)) as u32;
            let k1 = _mm256_movemask_ps(_mm256_cmp_ps::<_CMP_LE_OQ>(d1, worst)) as u32;
            masks[v] = k0 | (k1 << 8);
        }
    }
    masks
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn avx512(qs: &[f32], data: &[f32], norms: &[f32], by: &By, out: &mut Out) -> Masks {
    use std::arch::x86_64::*;
    let w = data.len() / LANES;
    let p = data.as_ptr();
    let nq = qs.len() / w;
    let q: [*const f32; GROUP] = std::array::from_fn(|u| qs.as_ptr().add(u.min(nq - 1) * w));
    let mut acc = [_mm512_setzero_ps(); GROUP];
    for t in 0..w {
        let a = _mm512_loadu_ps(p.add(t * LANES));
        for u in 0..GROUP {
            acc[u] = _mm512_fmadd_ps(_mm512_set1_ps(*q[u].add(t)), a, acc[u]);
        }
    }
    let m2 = _mm512_set1_ps(-2.0);
    let n = _mm512_loadu_ps(norms.as_ptr());
    let mut masks = [0; GROUP];
    for (u, acc) in acc.iter().enumerate().take(nq) {
        let d = _mm512_add_ps(_mm512_fmadd_ps(m2, *acc, n), _mm512_set1_ps(by.shift[u]));
        _mm512_storeu_ps(out[u].as_mut_ptr(), d);
        masks[u] = u32::from(_mm512_cmp_ps_mask::<_CMP_LE_OQ>(
            d,
            _mm512_set1_ps(by.worst[u]),
        ));
    }
    masks
}
