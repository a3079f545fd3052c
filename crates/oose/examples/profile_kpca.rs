//! Times the stages of a kernel PCA fit and extension (Swiss roll N = 5000, M = 20000).
use oose::diagnostics::residual::ResidualFactor;
use oose::linalg::center::KernelMeans;
use oose::linalg::eigen::{top_eigen, Solver};
use oose::prelude::*;
use std::time::Instant;

fn main() {
    let x = oose::datasets::swiss_roll(5000, 0.05, false, 0).points;
    let z = oose::datasets::swiss_roll(20000, 0.05, false, 1).points;
    let k = Kernel::default().resolve(x.as_ref()).unwrap();
    let t = Instant::now();
    let mut g = k.gram(x.as_ref(), oose::faer::Par::rayon(0));
    println!("gram {:.3}", t.elapsed().as_secs_f64());
    let t = Instant::now();
    let means = KernelMeans::of(&g);
    let r = ResidualFactor::new(g.as_ref(), 1e-12);
    println!(
        "pivoted cholesky {:.3} (rank {})",
        t.elapsed().as_secs_f64(),
        r.rank()
    );
    means.center(&mut g);
    let t = Instant::now();
    let e = top_eigen(g.as_ref(), 10, Solver::Lanczos).unwrap();
    println!("lanczos {:.3} {:?}", t.elapsed().as_secs_f64(), e.solver);
    let m = KernelPca {
        n_components: 10,
        kernel: k,
        ..Default::default()
    }
    .fit(x.as_ref())
    .unwrap();
    let t = Instant::now();
    let _ = m.extend(z.as_ref()).unwrap();
    println!("extend {:.3}", t.elapsed().as_secs_f64());
}
