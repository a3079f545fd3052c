//! Tests of the kernel blocks and parameters.

use super::*;

/// A reused buffer (here full of NaN and larger than the block) is overwritten
/// entirely, with the bits of a fresh block, sequential or parallel, for a radial
/// kernel and an inner-product one; and those values are the kernel's, from its
/// definition (`direct`), to 1e-14.
#[test]
fn block_into_a_dirty_buffer_is_bitwise_a_fresh_block() {
    let a = Mat::from_fn(300, 3, |i, j| ((i * 7 + j * 3) % 11) as f64 * 0.3 - 1.0);
    let b = Mat::from_fn(250, 3, |i, j| ((i * 5 + j) % 13) as f64 * 0.2 - 0.5);
    let (a_sq, b_sq) = (row_sq_norms(a.as_ref()), row_sq_norms(b.as_ref()));
    for kernel in [
        Kernel::gaussian(1.5),
        Kernel::Polynomial {
            gamma: 0.5,
            coef0: 1.0,
            degree: 2,
        },
    ] {
        for par in [Par::Seq, Par::rayon(2)] {
            let fresh = kernel.block(a.as_ref(), &a_sq, b.as_ref(), &b_sq, par);
            let mut buffer = vec![f64::NAN; 300 * 250 + 17];
            let out = MatMut::from_column_major_slice_mut(&mut buffer[..300 * 250], 300, 250);
            kernel.block_into(out, a.as_ref(), &a_sq, b.as_ref(), &b_sq, par);
            for j in 0..250 {
                let bj: Vec<f64> = (0..3).map(|c| b[(j, c)]).collect();
                for i in 0..300 {
                    assert_eq!(buffer[i + 300 * j].to_bits(), fresh[(i, j)].to_bits());
                    let ai: Vec<f64> = (0..3).map(|c| a[(i, c)]).collect();
                    let want = direct(&kernel, &ai, &bj);
                    assert!((fresh[(i, j)] - want).abs() <= 1e-14 * want.abs().max(1.0));
                }
            }
        }
    }
}

pub(crate) fn direct(k: &Kernel, x: &[f64], y: &[f64]) -> f64 {
    let r2: f64 = x.iter().zip(y).map(|(a, b)| (a - b) * (a - b)).sum();
    let g: f64 = x.iter().zip(y).map(|(a, b)| a * b).sum();
    let r = r2.sqrt();
    match *k {
        Kernel::Gaussian {
            epsilon: Epsilon::Value(e),
        } => (-r2 / e).exp(),
        Kernel::Laplacian {
            epsilon: Epsilon::Value(e),
        } => (-r / e).exp(),
        Kernel::InverseMultiquadric {
            epsilon: Epsilon::Value(e),
            beta,
        }
        | Kernel::Multiquadric {
            epsilon: Epsilon::Value(e),
            beta,
        } => (1.0 + r2 / e).powf(beta),
        Kernel::Wendland {
            epsilon: Epsilon::Value(e),
        } => {
            let s = (1.0 - r / e).max(0.0);
            s.powi(4) * (4.0 * r / e + 1.0)
        }
        Kernel::Linear => g,
        Kernel::Polynomial {
            gamma,
            coef0,
            degree,
        } => (gamma * g + coef0).powi(degree as i32),
        _ => unreachable!(),
    }
}

pub(crate) fn all_kernels() -> Vec<Kernel> {
    let e = Epsilon::Value(2.5);
    vec![
        Kernel::Gaussian { epsilon: e },
        Kernel::Laplacian { epsilon: e },
        Kernel::InverseMultiquadric {
            epsilon: e,
            beta: -0.5,
        },
        Kernel::Multiquadric {
            epsilon: e,
            beta: 1.5,
        },
        Kernel::Wendland { epsilon: e },
        Kernel::Linear,
        Kernel::Polynomial {
            gamma: 0.5,
            coef0: 1.0,
            degree: 3,
        },
    ]
}

#[test]
fn block_matches_pointwise_definition() {
    let a = Mat::from_fn(9, 3, |i, j| ((i * 7 + j * 3) as f64 * 0.37).sin());
    let b = Mat::from_fn(6, 3, |i, j| ((i * 5 + j) as f64 * 0.71).cos());
    for k in all_kernels() {
        let m = k.block_between(a.as_ref(), b.as_ref(), Par::Seq);
        for i in 0..9 {
            for j in 0..6 {
                let xi: Vec<f64> = (0..3).map(|c| a[(i, c)]).collect();
                let yj: Vec<f64> = (0..3).map(|c| b[(j, c)]).collect();
                let want = direct(&k, &xi, &yj);
                assert!(
                    (m[(i, j)] - want).abs() < 1e-12 * (1.0 + want.abs()),
                    "{}",
                    k.name()
                );
            }
        }
        let g = k.gram(a.as_ref(), Par::rayon(0));
        for i in 0..9 {
            let xi: Vec<f64> = (0..3).map(|c| a[(i, c)]).collect();
            assert!((g[(i, i)] - k.diag_value(xi.iter().map(|v| v * v).sum())).abs() < 1e-12);
        }
    }
}

#[test]
fn parameter_domains() {
    assert!(Kernel::gaussian(0.0).validate().is_err());
    assert!(Kernel::gaussian(-1.0).validate().is_err());
    assert!(Kernel::gaussian(f64::NAN).validate().is_err());
    assert!(Kernel::InverseMultiquadric {
        epsilon: Epsilon::Median,
        beta: 0.5
    }
    .validate()
    .is_err());
    assert!(Kernel::Multiquadric {
        epsilon: Epsilon::Median,
        beta: 2.0
    }
    .validate()
    .is_err());
    assert!(Kernel::Polynomial {
        gamma: 1.0,
        coef0: 0.0,
        degree: 0
    }
    .validate()
    .is_err());
    assert!(Kernel::gaussian(1.0).validate().is_ok());
}

#[test]
fn auto_bandwidth_uses_units_of_the_argument() {
    let x = Mat::from_fn(4, 1, |i, _| i as f64);
    let g = Kernel::Gaussian {
        epsilon: Epsilon::Median,
    }
    .resolve(x.as_ref())
    .unwrap();
    assert_eq!(g.epsilon(), Some(2.5));
    let l = Kernel::Laplacian {
        epsilon: Epsilon::Median,
    }
    .resolve(x.as_ref())
    .unwrap();
    assert!((l.epsilon().unwrap() - 2.5f64.sqrt()).abs() < 1e-15);
    let same = Mat::<f64>::zeros(3, 2);
    assert!(Kernel::default().resolve(same.as_ref()).is_err());
}
