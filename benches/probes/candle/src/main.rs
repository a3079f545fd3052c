//! Trains 784 → 256 → 64 → 2 → 64 → 256 → 784 (ReLU, linear code and output), Adam 1e-3,
//! batch 128, float64, on N uniform random rows (the time per epoch does not depend on
//! the values), and prints the median time per epoch.
use candle_core::{DType, Device, Module, Tensor};
use candle_nn::{linear, AdamW, Optimizer, ParamsAdamW, VarBuilder, VarMap};
use std::time::Instant;

fn main() -> candle_core::Result<()> {
    let args: Vec<usize> = std::env::args().skip(1).map(|a| a.parse().unwrap()).collect();
    let (n, epochs) = (args[0], args[1]);
    let dev = Device::Cpu;
    let map = VarMap::new();
    let vb = VarBuilder::from_varmap(&map, DType::F64, &dev);
    let widths = [784, 256, 64, 2, 64, 256, 784];
    let layers: Vec<_> = widths
        .windows(2)
        .enumerate()
        .map(|(i, w)| linear(w[0], w[1], vb.pp(format!("l{i}"))))
        .collect::<candle_core::Result<_>>()?;
    let forward = |x: &Tensor| -> candle_core::Result<Tensor> {
        let mut h = x.clone();
        for (i, l) in layers.iter().enumerate() {
            h = l.forward(&h)?;
            if i != 2 && i != 5 {
                h = h.relu()?;
            }
        }
        Ok(h)
    };
    let params = ParamsAdamW { lr: 1e-3, weight_decay: 0.0, ..Default::default() };
    let mut opt = AdamW::new(map.all_vars(), params)?;
    let data = Tensor::rand(0f64, 1f64, (n, 784), &dev)?;
    let mut times = Vec::new();
    for epoch in 0..epochs {
        let t = Instant::now();
        let mut start = 0;
        while start < n {
            let b = 128.min(n - start);
            // A permutation would cost the same index_select; contiguous batches here.
            let idx: Vec<u32> = (start as u32..(start + b) as u32).map(|i| (i * 7919 + epoch as u32) % n as u32).collect();
            let xb = data.index_select(&Tensor::new(idx.as_slice(), &dev)?, 0)?;
            let loss = (forward(&xb)? - &xb)?.sqr()?.sum(1)?.mean_all()?;
            opt.backward_step(&loss)?;
            start += b;
        }
        times.push(t.elapsed().as_secs_f64());
    }
    times.sort_by(|a, b| a.partial_cmp(b).unwrap());
    println!("candle 0.11, float64, N = {n}: {:.3} s per epoch (median of {epochs})", times[epochs / 2]);
    Ok(())
}
