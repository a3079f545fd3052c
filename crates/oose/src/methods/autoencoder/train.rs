//! Training (maths §16): standardisation with the training statistics, a held-out
//! validation fraction, minibatch Adam on the mean squared reconstruction error (plus
//! β·KL for the variational autoencoder), early stopping on the validation loss with
//! the best weights kept, and a typed error when the loss stops being finite.

use super::mlp::{Activation, Mlp, Real, Trainable};
use super::{Precision, Settings};
use crate::error::{Error, Result};
use crate::rng::Rng;
use faer::{Mat, MatRef};

/// What training returns.
pub(super) struct Trained {
    pub encoder: Mlp,
    pub decoder: Mlp,
    /// Mean training loss per point of every epoch run.
    pub train_loss: Vec<f64>,
    /// Mean validation loss per point of every epoch run (empty without validation).
    pub validation_loss: Vec<f64>,
    /// The epoch (1-based) whose weights were kept.
    pub best_epoch: usize,
}

/// Column means and scales (the standard deviation, 1 for a constant column: it is
/// then 0 after centring, and stays 0).
pub(super) fn statistics(x: MatRef<'_, f64>) -> (Vec<f64>, Vec<f64>) {
    let n = x.nrows() as f64;
    (0..x.ncols())
        .map(|c| {
            let mean = (0..x.nrows()).map(|i| x[(i, c)]).sum::<f64>() / n;
            let var = (0..x.nrows())
                .map(|i| (x[(i, c)] - mean).powi(2))
                .sum::<f64>()
                / n;
            let sd = var.sqrt();
            (mean, if sd > 0.0 && sd.is_finite() { sd } else { 1.0 })
        })
        .unzip()
}

/// A Fisher–Yates shuffle of `v` from `rng`.
fn shuffle(v: &mut [usize], rng: &mut Rng) {
    for i in (1..v.len()).rev() {
        v.swap(i, rng.below(i + 1));
    }
}

/// The widths and activations of encoder and decoder.
fn architecture(s: &Settings, width: usize) -> [(Vec<usize>, Vec<Activation>); 2] {
    let d = s.n_components;
    let code = if s.variational { 2 * d } else { d };
    let hidden = &s.layers;
    let mut enc = vec![width];
    enc.extend(hidden);
    enc.push(code);
    let mut dec = vec![d];
    dec.extend(hidden.iter().rev());
    dec.push(width);
    let acts = |n: usize| {
        let mut a = vec![s.activation; n - 2];
        a.push(Activation::Identity);
        a
    };
    let (ea, da) = (acts(enc.len()), acts(dec.len()));
    [(enc, ea), (dec, da)]
}

/// Refuses a network whose training would not fit in memory (a hidden layer of 10⁹
/// units), naming the size, before anything is allocated: the weights with their
/// gradients and Adam's two moments in `T`, the best weights kept in float64, and three
/// values per unit and point of a batch and of the validation rows.
fn plan_memory<T>(s: &Settings, enc: &[usize], dec: &[usize], n: usize) -> Result<()> {
    let weights = |w: &[usize]| -> u128 {
        w.windows(2)
            .map(|p| p[0] as u128 * p[1] as u128 + p[1] as u128)
            .sum()
    };
    let units: u128 = enc.iter().chain(dec).map(|&w| w as u128).sum();
    let t = std::mem::size_of::<T>() as u128;
    let rows = s.batch_size.min(n) as u128 + (n as f64 * s.validation_fraction) as u128;
    let needed = (weights(enc) + weights(dec)) * (4 * t + 8) + 3 * units * rows * t;
    crate::linalg::memory::plan_bytes("the autoencoder's training", needed)
}

/// Loss of a batch (sum over its points, accumulated in float64) and, when `grad` is
/// set, one Adam step on it. `eps` gives the reparameterisation noise of each point (VAE).
fn batch_loss<T: Real>(
    s: &Settings,
    enc: &mut Trainable<T>,
    dec: &mut Trainable<T>,
    xb: Mat<T>,
    eps: Option<&Mat<T>>,
    grad: bool,
) -> f64 {
    let (b, d) = (xb.nrows(), s.n_components);
    let (zero, half, one) = (T::zero(), T::of(0.5), T::one());
    let enc_acts = enc.forward(xb.clone());
    let code = enc_acts.last().expect("layers").clone();
    // z: the code (AE) or μ + σ∘ε (VAE; μ alone without noise).
    let z = if s.variational {
        Mat::from_fn(b, d, |i, j| {
            let e = eps.map_or(zero, |e| e[(i, j)]);
            code[(i, j)] + (half * code[(i, j + d)]).exp() * e
        })
    } else {
        code.clone()
    };
    let dec_acts = dec.forward(z);
    let out = dec_acts.last().expect("layers");
    let mut loss = 0.0;
    for j in 0..out.ncols() {
        for i in 0..b {
            loss += (out[(i, j)] - xb[(i, j)]).widen().powi(2);
        }
    }
    if s.variational {
        for i in 0..b {
            for j in 0..d {
                let (mu, lv) = (code[(i, j)].widen(), code[(i, j + d)].widen());
                loss += s.beta * 0.5 * (mu * mu + lv.exp() - lv - 1.0);
            }
        }
    }
    if grad {
        let scale = T::of(2.0 / b as f64);
        let d_out = Mat::from_fn(b, out.ncols(), |i, j| scale * (out[(i, j)] - xb[(i, j)]));
        let dz = dec.backward(&dec_acts, d_out, true).expect("asked for");
        dec.adam(s.learning_rate);
        let d_code = if s.variational {
            let kl = T::of(s.beta / b as f64);
            Mat::from_fn(b, 2 * d, |i, j| {
                if j < d {
                    dz[(i, j)] + kl * code[(i, j)]
                } else {
                    let k = j - d;
                    let lv = code[(i, j)];
                    let e = eps.map_or(zero, |e| e[(i, k)]);
                    dz[(i, k)] * e * half * (half * lv).exp() + kl * half * (lv.exp() - one)
                }
            })
        } else {
            dz
        };
        enc.backward(&enc_acts, d_code, false);
        enc.adam(s.learning_rate);
    }
    loss
}

/// Trains on the standardised rows of `z`, in the settings' precision.
pub(super) fn train(s: &Settings, z: MatRef<'_, f64>) -> Result<Trained> {
    match s.precision {
        Precision::Float64 => train_in::<f64>(s, z),
        Precision::Float32 => train_in::<f32>(s, z),
    }
}

/// Trains in `T`: the data, weights, gradients and Adam's moments are `T`; the losses
/// are summed in float64.
fn train_in<T: Real>(s: &Settings, z: MatRef<'_, f64>) -> Result<Trained> {
    let n = z.nrows();
    let mut rng = Rng::new(s.seed);
    let [(ew, ea), (dw, da)] = architecture(s, z.ncols());
    plan_memory::<T>(s, &ew, &dw, n)?;
    let mut enc = Trainable::<T>::new(&ew, &ea, &mut rng);
    let mut dec = Trainable::<T>::new(&dw, &da, &mut rng);
    let mut order: Vec<usize> = (0..n).collect();
    shuffle(&mut order, &mut rng);
    let n_val = ((n as f64) * s.validation_fraction).floor() as usize;
    let n_val = if n_val >= 1 && n - n_val >= 1 {
        n_val
    } else {
        0
    };
    let (val, mut fit) = (order[..n_val].to_vec(), order[n_val..].to_vec());
    // One point per column, so that a batch is gathered from contiguous memory and
    // transposed once by faer (a gather from column-major rows touches a cache line per
    // value).
    let by_point = Mat::from_fn(z.ncols(), n, |c, i| T::of(z[(i, c)]));
    let rows = |idx: &[usize]| {
        let mut t = Mat::<T>::zeros(z.ncols(), idx.len());
        for (j, &r) in idx.iter().enumerate() {
            t.col_as_slice_mut(j)
                .copy_from_slice(by_point.col_as_slice(r));
        }
        t.transpose().to_owned()
    };
    let val_x = rows(&val);
    let mut train_loss = Vec::new();
    let mut validation_loss = Vec::new();
    let mut best: Option<(f64, usize, Mlp, Mlp)> = None;
    for epoch in 1..=s.epochs {
        crate::progress::check()?;
        shuffle(&mut fit, &mut rng);
        let mut total = 0.0;
        for chunk in fit.chunks(s.batch_size) {
            let xb = rows(chunk);
            let eps = s.variational.then(|| {
                let e = rng.normal_mat(chunk.len(), s.n_components);
                Mat::from_fn(e.nrows(), e.ncols(), |i, j| T::of(e[(i, j)]))
            });
            total += batch_loss(s, &mut enc, &mut dec, xb, eps.as_ref(), true);
        }
        let loss = total / fit.len() as f64;
        if !loss.is_finite() {
            return Err(Error::Unsolved {
                what: "the autoencoder's training",
                status: "diverged",
                detail: format!(
                    "the training loss is {loss} at epoch {epoch} with learning_rate = {:?}; \
                     lower learning_rate",
                    s.learning_rate
                ),
            });
        }
        train_loss.push(loss);
        let mut note = String::new();
        if n_val > 0 {
            // μ alone for the VAE's validation loss (no noise: comparable across epochs).
            let v = batch_loss(s, &mut enc, &mut dec, val_x.clone(), None, false) / n_val as f64;
            validation_loss.push(v);
            note = format!(", validation loss {v:.6}");
            if best.as_ref().is_none_or(|b| v < b.0) {
                best = Some((v, epoch, enc.to_mlp(), dec.to_mlp()));
            } else if best.as_ref().is_some_and(|b| epoch - b.1 >= s.patience) {
                crate::progress::report(|| {
                    format!(
                        "{}: epoch {epoch}: no better validation loss in {} epochs, stopping",
                        s.label, s.patience
                    )
                });
                break;
            }
        }
        crate::progress::report(|| {
            format!(
                "{}: epoch {epoch}/{}, loss {loss:.6}{note}",
                s.label, s.epochs
            )
        });
    }
    let (best_epoch, encoder, decoder) = match best {
        Some((_, e, enc_best, dec_best)) => (e, enc_best, dec_best),
        None => (train_loss.len(), enc.to_mlp(), dec.to_mlp()),
    };
    Ok(Trained {
        encoder,
        decoder,
        train_loss,
        validation_loss,
        best_epoch,
    })
}
