//! Times the stages of an Isomap fit and extension (Swiss roll N = 5000, M = 5000, k = 10).
use oose::linalg::eigen::{top_eigen, Solver};
use oose::methods::isomap::Isomap;
use oose::methods::OutOfSample;
use oose::neighbors::{knn, Graph};
use std::time::Instant;

fn main() {
    let x = oose::datasets::swiss_roll(5000, 0.05, false, 0).points;
    let z = oose::datasets::swiss_roll(5000, 0.05, false, 1).points;
    let t = Instant::now();
    let (idx, dist) = knn(x.as_ref(), x.as_ref(), 10, true);
    println!("knn {:.3}", t.elapsed().as_secs_f64());
    let t = Instant::now();
    let g = Graph::from_knn(&idx, &dist);
    let geo = g.all_shortest_paths();
    println!("dijkstra {:.3}", t.elapsed().as_secs_f64());
    let n = 5000;
    let t = Instant::now();
    let mut b = oose::faer::Mat::from_fn(n, n, |i, j| -0.5 * geo[i * n + j] * geo[i * n + j]);
    let means = oose::linalg::center::KernelMeans::of(&b);
    means.center(&mut b);
    println!("gamma+center {:.3}", t.elapsed().as_secs_f64());
    let t = Instant::now();
    let e = top_eigen(b.as_ref(), 2, Solver::Lanczos).unwrap();
    println!("lanczos {:.3} {:?}", t.elapsed().as_secs_f64(), e.values);
    let t = Instant::now();
    let m = Isomap::default().fit(x.as_ref()).unwrap();
    println!("fit {:.3}", t.elapsed().as_secs_f64());
    let t = Instant::now();
    let _ = m.extend(z.as_ref()).unwrap();
    println!("extend {:.3}", t.elapsed().as_secs_f64());
    let t = Instant::now();
    let bytes = oose::model::Model::from(m).to_bytes();
    println!(
        "serialise {:.3} ({} MB)",
        t.elapsed().as_secs_f64(),
        bytes.len() >> 20
    );
}
