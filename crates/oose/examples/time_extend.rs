//! Median time of `Model::extend` inside Rust, for the Python-overhead benchmark
//! (benches/python_overhead.py): `time_extend MODEL POINTS NCOLS REPEATS`, POINTS being
//! raw little-endian f64 values, row-major. Prints the median in seconds.
use oose::faer::MatRef;
use oose::methods::OutOfSample;
use oose::model::Model;
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
    let mut times: Vec<f64> = (0..repeats)
        .map(|_| {
            let t = Instant::now();
            let e = model.extend(z).expect("extension");
            std::hint::black_box(e);
            t.elapsed().as_secs_f64()
        })
        .collect();
    times.sort_by(f64::total_cmp);
    println!("{:.9}", times[repeats / 2]);
}
