//! A small multilayer perceptron on faer's GEMM: dense layers, the activations of
//! maths §16 (identity, tanh, sigmoid, ReLU), batched forward and backward passes for
//! training in float64 or float32 ([`Real`]), Adam, and a row-by-row forward pass in
//! float64 for extension (each row's result is a fixed sequence of operations: the
//! same bits whatever the batch).

use crate::linalg::stored::StoredMat;
use crate::rng::Rng;
use faer::linalg::matmul::matmul;
use faer::{Accum, Mat, Par};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

/// A floating-point type the network trains in: float64, or float32 (half the memory
/// traffic and twice the vector width of float64 in every product, so about twice as
/// fast; the weights it ends with are stored as float64, exactly).
pub(crate) trait Real:
    faer::traits::RealField + num_traits::Float + Send + Sync + std::iter::Sum + 'static
{
    /// `v` rounded to this type.
    fn of(v: f64) -> Self;
    /// The value as a float64 (exact).
    fn widen(self) -> f64;
}

impl Real for f64 {
    fn of(v: f64) -> f64 {
        v
    }
    fn widen(self) -> f64 {
        self
    }
}

impl Real for f32 {
    fn of(v: f64) -> f32 {
        v as f32
    }
    fn widen(self) -> f64 {
        f64::from(self)
    }
}

/// A layer's activation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Activation {
    /// f(z) = z.
    Identity,
    /// f(z) = tanh z.
    Tanh,
    /// f(z) = 1 / (1 + e^{−z}).
    Sigmoid,
    /// f(z) = max(z, 0).
    Relu,
}

impl Activation {
    /// Every name, in the order of the variants.
    pub const NAMES: [&'static str; 4] = ["identity", "tanh", "sigmoid", "relu"];

    /// The name every interface uses.
    pub fn name(&self) -> &'static str {
        match self {
            Activation::Identity => "identity",
            Activation::Tanh => "tanh",
            Activation::Sigmoid => "sigmoid",
            Activation::Relu => "relu",
        }
    }

    /// The activation of a name in [`Activation::NAMES`].
    pub fn from_name(name: &str) -> Option<Self> {
        Some(match name {
            "identity" => Activation::Identity,
            "tanh" => Activation::Tanh,
            "sigmoid" => Activation::Sigmoid,
            "relu" => Activation::Relu,
            _ => return None,
        })
    }

    fn value<T: Real>(&self, z: T) -> T {
        match self {
            Activation::Identity => z,
            Activation::Tanh => z.tanh(),
            Activation::Sigmoid => T::one() / (T::one() + (-z).exp()),
            Activation::Relu => z.max(T::zero()),
        }
    }

    /// `v ← f(v + bias)` over a slice (the match hoisted out of the loop).
    fn apply_biased<T: Real>(&self, v: &mut [T], bias: T) {
        match self {
            Activation::Identity => v.iter_mut().for_each(|z| *z += bias),
            Activation::Relu => v.iter_mut().for_each(|z| *z = (*z + bias).max(T::zero())),
            _ => v.iter_mut().for_each(|z| *z = self.value(*z + bias)),
        }
    }

    /// `v ← f(v)` over a slice.
    fn apply<T: Real>(&self, v: &mut [T]) {
        match self {
            Activation::Identity => {}
            Activation::Relu => v.iter_mut().for_each(|z| *z = z.max(T::zero())),
            _ => v.iter_mut().for_each(|z| *z = self.value(*z)),
        }
    }

    /// `delta ← delta · f′`, f′ written in terms of the outputs a = f(z).
    fn scale_by_derivative<T: Real>(&self, delta: &mut [T], a: &[T]) {
        match self {
            Activation::Identity => {}
            Activation::Tanh => delta
                .iter_mut()
                .zip(a)
                .for_each(|(d, &a)| *d *= T::one() - a * a),
            Activation::Sigmoid => delta
                .iter_mut()
                .zip(a)
                .for_each(|(d, &a)| *d *= a * (T::one() - a)),
            Activation::Relu => delta.iter_mut().zip(a).for_each(|(d, &a)| {
                *d *= if a > T::zero() { T::one() } else { T::zero() };
            }),
        }
    }
}

/// One dense layer: a = f(x W + b), W in×out, stored transposed (`wt` is out×in, so
/// that row i of W, the weights leaving input i, is one contiguous column).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct Layer {
    pub wt: StoredMat,
    pub b: Vec<f64>,
    pub activation: Activation,
}

/// Layers applied in order.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct Mlp {
    pub layers: Vec<Layer>,
}

/// A column of an owned matrix as a slice (its rows are contiguous).
fn slice<T>(c: faer::ColMut<'_, T>) -> &mut [T] {
    c.try_as_col_major_mut()
        .expect("an owned matrix's columns are contiguous")
        .as_slice_mut()
}

/// Threads for a product of m×k by k×n: one below 2¹⁸ multiply-adds (a 128-point
/// batch through a layer of 64 × 2), where handing out the work costs more than it
/// saves; all of them above. faer splits the output, not the sum, so either way each
/// entry is the same sum in the same order.
fn par(m: usize, k: usize, n: usize) -> Par {
    if m * k * n < 1 << 18 {
        Par::Seq
    } else {
        Par::rayon(0)
    }
}

/// Adam's first and second moments of one layer's weights and biases.
type Moments<T> = (Mat<T>, Mat<T>, Vec<T>, Vec<T>);

/// The parameters of an [`Mlp`] while it trains (faer matrices of `T`), with their
/// gradients and Adam's moments.
pub(crate) struct Trainable<T: Real> {
    pub w: Vec<Mat<T>>,
    pub b: Vec<Vec<T>>,
    pub activations: Vec<Activation>,
    grad_w: Vec<Mat<T>>,
    grad_b: Vec<Vec<T>>,
    moments: Vec<Moments<T>>,
    step: i32,
}

impl<T: Real> Trainable<T> {
    /// Widths w₀ → w₁ → … with `activations[l]` on layer l; Glorot-uniform weights
    /// (He-uniform before a ReLU), zero biases, drawn from `rng` layer by layer (in
    /// float64, then rounded to `T`: both precisions start from the same draws).
    pub fn new(widths: &[usize], activations: &[Activation], rng: &mut Rng) -> Self {
        let w: Vec<Mat<T>> = widths
            .windows(2)
            .zip(activations)
            .map(|(io, act)| {
                let (i, o) = (io[0], io[1]);
                let a = if *act == Activation::Relu {
                    (6.0 / i as f64).sqrt()
                } else {
                    (6.0 / (i + o) as f64).sqrt()
                };
                Mat::from_fn(i, o, |_, _| T::of(a * (2.0 * rng.uniform() - 1.0)))
            })
            .collect();
        let b: Vec<Vec<T>> = widths[1..].iter().map(|&o| vec![T::zero(); o]).collect();
        let zeros = |m: &Mat<T>| Mat::zeros(m.nrows(), m.ncols());
        let zero_vec = |v: &Vec<T>| vec![T::zero(); v.len()];
        Trainable {
            grad_w: w.iter().map(zeros).collect(),
            grad_b: b.iter().map(zero_vec).collect(),
            moments: w
                .iter()
                .zip(&b)
                .map(|(m, v)| (zeros(m), zeros(m), zero_vec(v), zero_vec(v)))
                .collect(),
            w,
            b,
            activations: activations.to_vec(),
            step: 0,
        }
    }

    /// The activations of every layer for the rows of `x` (entry 0 is `x`).
    pub fn forward(&self, x: Mat<T>) -> Vec<Mat<T>> {
        let mut acts = vec![x];
        for ((w, b), act) in self.w.iter().zip(&self.b).zip(&self.activations) {
            let prev = acts.last().expect("the input is there");
            let mut z = Mat::zeros(prev.nrows(), w.ncols());
            matmul(
                z.as_mut(),
                Accum::Replace,
                prev.as_ref(),
                w.as_ref(),
                T::one(),
                par(prev.nrows(), w.nrows(), w.ncols()),
            );
            for (j, &bj) in b.iter().enumerate() {
                act.apply_biased(z.col_as_slice_mut(j), bj);
            }
            acts.push(z);
        }
        acts
    }

    /// Back-propagates `d_out` (∂loss/∂ last activation) through the layers whose
    /// activations `acts` are, storing the gradients; returns ∂loss/∂input when
    /// `input_gradient` is set (else `None`: the first layer's product is skipped).
    pub fn backward(
        &mut self,
        acts: &[Mat<T>],
        d_out: Mat<T>,
        input_gradient: bool,
    ) -> Option<Mat<T>> {
        let mut delta = d_out;
        for l in (0..self.w.len()).rev() {
            let a = &acts[l + 1];
            let act = self.activations[l];
            for j in 0..delta.ncols() {
                act.scale_by_derivative(delta.col_as_slice_mut(j), a.col_as_slice(j));
            }
            matmul(
                self.grad_w[l].as_mut(),
                Accum::Replace,
                acts[l].transpose(),
                delta.as_ref(),
                T::one(),
                par(acts[l].ncols(), delta.nrows(), delta.ncols()),
            );
            for (j, g) in self.grad_b[l].iter_mut().enumerate() {
                *g = delta.col_as_slice(j).iter().copied().sum();
            }
            if l == 0 && !input_gradient {
                return None;
            }
            let mut prev = Mat::zeros(delta.nrows(), self.w[l].nrows());
            matmul(
                prev.as_mut(),
                Accum::Replace,
                delta.as_ref(),
                self.w[l].transpose(),
                T::one(),
                par(delta.nrows(), delta.ncols(), self.w[l].nrows()),
            );
            delta = prev;
        }
        Some(delta)
    }

    /// One Adam step (β₁ = 0.9, β₂ = 0.999, ε = 1e-8) with the stored gradients; the
    /// step size and the bias corrections are rounded to `T` once per step.
    pub fn adam(&mut self, lr: f64) {
        const B1: f64 = 0.9;
        const B2: f64 = 0.999;
        self.step += 1;
        let (b1, b2, eps) = (T::of(B1), T::of(B2), T::of(1e-8));
        let (c1, c2) = (
            T::of(1.0 - B1.powi(self.step)),
            T::of(1.0 - B2.powi(self.step)),
        );
        let (lr, one) = (T::of(lr), T::one());
        let update = |p: &mut [T], g: &[T], m: &mut [T], v: &mut [T]| {
            crate::linalg::simd::vectorized(
                #[inline(always)]
                || {
                    for (((p, &g), m), v) in p.iter_mut().zip(g).zip(m).zip(v) {
                        *m = b1 * *m + (one - b1) * g;
                        *v = b2 * *v + (one - b2) * g * g;
                        *p -= lr * (*m / c1) / ((*v / c2).sqrt() + eps);
                    }
                },
            )
        };
        for l in 0..self.w.len() {
            let (mw, vw, mb, vb) = &mut self.moments[l];
            let gw = &self.grad_w[l];
            // Column by column on the threads: each entry's update is its own, so the
            // result does not depend on how the columns are shared out.
            self.w[l]
                .par_col_iter_mut()
                .zip(mw.par_col_iter_mut())
                .zip(vw.par_col_iter_mut())
                .enumerate()
                .for_each(|(j, ((p, m), v))| {
                    update(slice(p), gw.col_as_slice(j), slice(m), slice(v));
                });
            update(&mut self.b[l], &self.grad_b[l], mb, vb);
        }
    }

    /// The network as stored in a model (float64: a float32 weight widens exactly).
    pub fn to_mlp(&self) -> Mlp {
        Mlp {
            layers: self
                .w
                .iter()
                .zip(&self.b)
                .zip(&self.activations)
                .map(|((w, b), a)| Layer {
                    wt: StoredMat::from_mat(
                        Mat::from_fn(w.ncols(), w.nrows(), |i, j| w[(j, i)].widen()).as_ref(),
                    ),
                    b: b.iter().map(|v| v.widen()).collect(),
                    activation: *a,
                })
                .collect(),
        }
    }
}

impl Mlp {
    /// The outputs of a block of rows. Output j of a layer is b_j + Σᵢ xᵢ Wᵢⱼ summed
    /// over i in order, then the activation: a fixed sequence of operations for each
    /// row, so a row gives the same bits alone or in any block. The rows only share
    /// each weight row's trip from memory (a layer of 784×256 weights is larger
    /// than the caches; one row at a time, the pass would stream it per row).
    pub fn forward_block(&self, rows: Vec<Vec<f64>>) -> Vec<Vec<f64>> {
        crate::linalg::simd::vectorized(
            #[inline(always)]
            || {
                let mut cur = rows;
                for layer in &self.layers {
                    let mut out: Vec<Vec<f64>> = cur.iter().map(|_| layer.b.clone()).collect();
                    for i in 0..layer.wt.ncols() {
                        let w = layer.wt.col(i);
                        for (o, x) in out.iter_mut().zip(&cur) {
                            let v = x[i];
                            for (o, w) in o.iter_mut().zip(w) {
                                *o += v * w;
                            }
                        }
                    }
                    for o in &mut out {
                        layer.activation.apply(o);
                    }
                    cur = out;
                }
                cur
            },
        )
    }

    /// Input and output widths, and whether every layer's shapes chain.
    pub fn widths(&self) -> Option<(usize, usize)> {
        let first = self.layers.first()?.wt.ncols();
        let mut width = first;
        for l in &self.layers {
            if l.wt.ncols() != width || l.b.len() != l.wt.nrows() || !l.wt.is_consistent() {
                return None;
            }
            width = l.wt.nrows();
        }
        Some((first, width))
    }
}
