//! Times the stages of a kernel PCA fit and extension (Swiss roll N = 5000, M = 20000).
use oose::diagnostics::residual::ResidualFactor;
use oose::linalg::center::KernelMeans;
use oose::linalg::eigen::{top_eigen, Solver};
use oose::prelude::*;
use std::time::Instant;

fn main() {
    let x = oose::datasets::swiss_roll(5000, 0.05, false, 0).points;
    let z = oose::datasets::swiss_roll(20000, 0.05, false, 1).points;
    let t = Instant::now();
    let k = Kernel::default().resolve(x.as_ref()).unwrap();
    println!("resolve epsilon {:.3}", t.elapsed().as_secs_f64());
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
    let t = Instant::now();
    let m = KernelPca {
        n_components: 10,
        kernel: k,
        ..Default::default()
    }
    .fit(x.as_ref())
    .unwrap();
    println!(
        "fit (auto) {:.3} {:?} eig {:?}",
        t.elapsed().as_secs_f64(),
        m.solver_used(),
        &m.eigenvalues()[..3]
    );
    let t = Instant::now();
    let _ = m.extend(z.as_ref()).unwrap();
    println!("extend {:.3}", t.elapsed().as_secs_f64());
    let xs = oose::kernel::distance::row_sq_norms(x.as_ref());
    let zc = z.as_ref().subrows(0, 400);
    let zs = oose::kernel::distance::row_sq_norms(zc);
    let seq = oose::faer::Par::Seq;
    let t = Instant::now();
    for _ in 0..10 {
        let _ = oose::kernel::distance::inner_products(zc, x.as_ref(), seq);
    }
    println!("gemm 400x5000 x10 {:.3}", t.elapsed().as_secs_f64());
    let t = Instant::now();
    for _ in 0..10 {
        let _ = oose::kernel::distance::sq_distances(zc, &zs, x.as_ref(), &xs, seq);
    }
    println!("sqdist 400x5000 x10 {:.3}", t.elapsed().as_secs_f64());
    let t = Instant::now();
    let mut kz = k.block(zc, &zs, x.as_ref(), &xs, seq);
    for _ in 0..9 {
        kz = k.block(zc, &zs, x.as_ref(), &xs, seq);
    }
    println!("block 400x5000 x10 {:.3}", t.elapsed().as_secs_f64());
    let kzz = vec![1.0; 400];
    let t = Instant::now();
    for _ in 0..10 {
        let _ = r.residuals(kz.as_ref(), &kzz);
    }
    println!("residuals 400 x10 {:.3}", t.elapsed().as_secs_f64());
}
