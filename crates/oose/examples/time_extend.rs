//! Median time of `Model::extend` inside Rust, for the Python-overhead benchmark
//! (benches/python_overhead.py): `time_extend MODEL POINTS NCOLS REPEATS`, POINTS being
//! raw little-endian f64 values, row-major. Prints the median in seconds. With
//! `TIME_EXTEND_OUT=FILE`, also writes the extension's coordinates (row-major), residual
//! and reconstruction error as raw little-endian f64 values (to compare builds bit for
//! bit). With `TIME_EXTEND_COORDINATES=1`, only the coordinates are asked for
//! (`ExtendOptions::coordinates_only`, what `transform` without diagnostics asks).
use oose::faer::MatRef;
use oose::model::{ExtendOptions, Model};
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 5 {
        eprintln!("usage: time_extend MODEL POINTS NCOLS REPEATS");
        std::process::exit(2);
    }
    let model =
        Model::from_bytes(&std::fs::read(&args[1]).expect("model file")).expect("a model file");
    let raw = std::fs::read(&args[2]).expect("points file");
    let values: Vec<f64> = raw
        .chunks_exact(8)
        .map(|b| f64::from_le_bytes(b.try_into().unwrap()))
        .collect();
    let ncols: usize = args[3].parse().expect("NCOLS");
    let repeats: usize = args[4].parse().expect("REPEATS");
    let z = MatRef::from_row_major_slice(&values, values.len() / ncols, ncols);
    let opts = ExtendOptions {
        coordinates_only: std::env::var("TIME_EXTEND_COORDINATES").is_ok_and(|v| v == "1"),
        ..Default::default()
    };
    let mut times: Vec<f64> = (0..repeats)
        .map(|_| {
            let t = Instant::now();
            let e = model.extend_options(z, &opts).expect("extension");
            std::hint::black_box(e);
            t.elapsed().as_secs_f64()
        })
        .collect();
    if let Ok(path) = std::env::var("TIME_EXTEND_OUT") {
        let e = model.extend_options(z, &opts).expect("extension");
        let c = &e.coordinates;
        let values = (0..c.nrows())
            .flat_map(|i| (0..c.ncols()).map(move |j| c[(i, j)]))
            .chain(e.residual.iter().copied())
            .chain(e.reconstruction_error.iter().copied());
        let bytes: Vec<u8> = values.flat_map(f64::to_le_bytes).collect();
        std::fs::write(path, bytes).expect("output file");
    }
    times.sort_by(f64::total_cmp);
    println!("{:.9}", times[repeats / 2]);
}
