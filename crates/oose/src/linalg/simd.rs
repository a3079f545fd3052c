//! Runtime choice of vector width for the hand-written loops (faer dispatches its own).

/// Runs `f` inside a function compiled for the widest vectors the CPU has on x86-64
/// (AVX-512F, else AVX2), so that the loops the compiler vectorises in `f` use 8- or
/// 4-wide vectors; elsewhere, or with neither, calls `f` as it is. `f` should be an
/// `#[inline(always)]` closure, so that its body is compiled in that context. FMA is not
/// enabled and the compiler does not reorder floating-point sums: every product and sum
/// is rounded the same whichever way `f` runs, so the bits do not depend on the CPU.
#[inline(always)]
pub(crate) fn vectorized<R>(f: impl FnOnce() -> R) -> R {
    widest::<false, R>(f)
}

/// [`vectorized`] for loops written with fused multiply-adds (`f64::mul_add`): AVX-512F
/// (which has them), else AVX2 with FMA, else `f` as it is (where a fused multiply-add
/// is a library call: the same bits, slowly).
#[inline(always)]
pub(crate) fn vectorized_fma<R>(f: impl FnOnce() -> R) -> R {
    widest::<true, R>(f)
}

/// `f` compiled for AVX-512F, else AVX2 (with FMA when `FMA`: else a CPU with AVX2 but
/// no FMA runs `f` as it is), else as it is.
#[inline(always)]
fn widest<const FMA: bool, R>(f: impl FnOnce() -> R) -> R {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512f") {
            // SAFETY: the CPU has AVX-512F (just checked), the one feature `avx512` enables.
            return unsafe { avx512(f) };
        }
        if std::arch::is_x86_feature_detected!("avx2") {
            if !FMA {
                // SAFETY: the CPU has AVX2 (just checked), the one feature `avx2` enables.
                return unsafe { avx2(f) };
            }
            if std::arch::is_x86_feature_detected!("fma") {
                // SAFETY: the CPU has AVX2 and FMA (just checked), the features
                // `avx2_fma` enables.
                return unsafe { avx2_fma(f) };
            }
        }
    }
    f()
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn avx2_fma<R>(f: impl FnOnce() -> R) -> R {
    f()
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn avx512<R>(f: impl FnOnce() -> R) -> R {
    f()
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn avx2<R>(f: impl FnOnce() -> R) -> R {
    f()
}

/// `f` run on every path this CPU has: plain, then AVX2 and AVX-512F where present (for
/// the tests that every path gives the same bits).
#[cfg(test)]
pub(crate) fn each_path<R>(f: impl Fn() -> R + Copy) -> Vec<(&'static str, R)> {
    let mut out = vec![("plain", f())];
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2 (just checked).
            out.push(("avx2", unsafe { avx2(f) }));
        }
        if std::arch::is_x86_feature_detected!("avx512f") {
            // SAFETY: the CPU has AVX-512F (just checked).
            out.push(("avx512", unsafe { avx512(f) }));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn vectorized_returns_what_the_closure_returns() {
        let x: Vec<f64> = (0..1001).map(|i| i as f64 * 0.5).collect();
        let plain: f64 = x.iter().map(|v| v * v).sum();
        let vec = super::vectorized(
            #[inline(always)]
            || x.iter().map(|v| v * v).sum::<f64>(),
        );
        assert_eq!(vec, plain);
        for (path, v) in super::each_path(
            #[inline(always)]
            || x.iter().map(|v| v * v).sum::<f64>(),
        ) {
            assert_eq!(v.to_bits(), plain.to_bits(), "{path}");
        }
    }
}
