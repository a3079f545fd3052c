//! Runtime choice of vector width for the hand-written loops (faer dispatches its own).

/// Runs `f` inside a function compiled for AVX2 when the CPU has it (x86-64), so that
/// the loops the compiler vectorises in `f` use 4-wide vectors; elsewhere, or without
/// AVX2, calls `f` as it is. `f` should be an `#[inline(always)]` closure, so that its
/// body is compiled in that context. FMA is not enabled: every product and sum is
/// rounded the same whichever way `f` runs.
#[inline(always)]
pub(crate) fn vectorized<R>(f: impl FnOnce() -> R) -> R {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        #[target_feature(enable = "avx2")]
        unsafe fn avx2<R>(f: impl FnOnce() -> R) -> R {
            f()
        }
        // SAFETY: the CPU has AVX2 (just checked), the one feature `avx2` enables.
        return unsafe { avx2(f) };
    }
    f()
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
    }
}
