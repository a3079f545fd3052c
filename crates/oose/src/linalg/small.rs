//! Small dense symmetric positive definite systems (k×k, row-major; k of the order of a
//! neighbourhood): Cholesky factorisation in place and the two triangular solves. Used
//! where one such system is solved per point (LLE's barycentric weights, t-SNE's local
//! interpolation), so the arithmetic and its order are fixed here once.

/// Overwrites the lower triangle of the k×k row-major `a` with its Cholesky factor L
/// (A = L Lᵀ); false when a pivot is not a positive finite number.
pub(crate) fn cholesky_in_place(a: &mut [f64], k: usize) -> bool {
    for j in 0..k {
        let mut d = a[j * k + j];
        for p in 0..j {
            d -= a[j * k + p] * a[j * k + p];
        }
        if d.is_nan() || d <= 0.0 || d.is_infinite() {
            return false;
        }
        let d = d.sqrt();
        a[j * k + j] = d;
        for i in j + 1..k {
            let mut s = a[i * k + j];
            for p in 0..j {
                s -= a[i * k + p] * a[j * k + p];
            }
            a[i * k + j] = s / d;
        }
    }
    true
}

/// Solves L Lᵀ x = b with the factor from [`cholesky_in_place`].
pub(crate) fn cholesky_solve(l: &[f64], k: usize, b: &[f64]) -> Vec<f64> {
    let mut w = b.to_vec();
    for i in 0..k {
        let mut s = w[i];
        for p in 0..i {
            s -= l[i * k + p] * w[p];
        }
        w[i] = s / l[i * k + i];
    }
    for i in (0..k).rev() {
        let mut s = w[i];
        for p in i + 1..k {
            s -= l[p * k + i] * w[p];
        }
        w[i] = s / l[i * k + i];
    }
    w
}

#[cfg(test)]
mod tests {
    #[test]
    fn solves_a_positive_definite_system_and_refuses_an_indefinite_one() {
        let a = [4.0, 2.0, 0.0, 2.0, 5.0, 1.0, 0.0, 1.0, 3.0];
        let mut l = a;
        assert!(super::cholesky_in_place(&mut l, 3));
        let x = super::cholesky_solve(&l, 3, &[1.0, 2.0, 3.0]);
        for i in 0..3 {
            let ax: f64 = (0..3).map(|j| a[i * 3 + j] * x[j]).sum();
            assert!((ax - [1.0, 2.0, 3.0][i]).abs() < 1e-14);
        }
        let mut b = [1.0, 2.0, 2.0, 1.0];
        assert!(!super::cholesky_in_place(&mut b, 2));
    }
}
