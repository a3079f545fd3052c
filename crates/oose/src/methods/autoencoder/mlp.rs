//! A small multilayer perceptron on faer's GEMM: dense layers, the activations of
//! maths §16 (identity, tanh, sigmoid, ReLU), batched forward and backward passes for
//! training, Adam, and a row-by-row forward pass for extension (each row's result is a
//! fixed sequence of operations: the same bits whatever the batch).

use crate::linalg::stored::StoredMat;
use crate::rng::Rng;
use faer::linalg::matmul::matmul;
use faer::{Accum, Mat, MatRef, Par};
use serde::{Deserialize, Serialize};

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

    fn apply(&self, z: f64) -> f64 {
        match self {
            Activation::Identity => z,
            Activation::Tanh => z.tanh(),
            Activation::Sigmoid => 1.0 / (1.0 + (-z).exp()),
            Activation::Relu => z.max(0.0),
        }
    }

    /// f′ written in terms of the output a = f(z).
    fn derivative(&self, a: f64) -> f64 {
        match self {
            Activation::Identity => 1.0,
            Activation::Tanh => 1.0 - a * a,
            Activation::Sigmoid => a * (1.0 - a),
            Activation::Relu => f64::from(u8::from(a > 0.0)),
        }
    }
}

/// One dense layer: a = f(x W + b), W in×out.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct Layer {
    pub w: StoredMat,
    pub b: Vec<f64>,
    pub activation: Activation,
}

/// Layers applied in order.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct Mlp {
    pub layers: Vec<Layer>,
}

/// Adam's first and second moments of one layer's weights and biases.
type Moments = (Mat<f64>, Mat<f64>, Vec<f64>, Vec<f64>);

/// The parameters of an [`Mlp`] while it trains (faer matrices), with their gradients
/// and Adam's moments.
pub(crate) struct Trainable {
    pub w: Vec<Mat<f64>>,
    pub b: Vec<Vec<f64>>,
    pub activations: Vec<Activation>,
    grad_w: Vec<Mat<f64>>,
    grad_b: Vec<Vec<f64>>,
    moments: Vec<Moments>,
    step: i32,
}

impl Trainable {
    /// Widths w₀ → w₁ → … with `activations[l]` on layer l; Glorot-uniform weights
    /// (He-uniform before a ReLU), zero biases, drawn from `rng` layer by layer.
    pub fn new(widths: &[usize], activations: &[Activation], rng: &mut Rng) -> Self {
        let w: Vec<Mat<f64>> = widths
            .windows(2)
            .zip(activations)
            .map(|(io, act)| {
                let (i, o) = (io[0], io[1]);
                let a = if *act == Activation::Relu {
                    (6.0 / i as f64).sqrt()
                } else {
                    (6.0 / (i + o) as f64).sqrt()
                };
                Mat::from_fn(i, o, |_, _| a * (2.0 * rng.uniform() - 1.0))
            })
            .collect();
        let b: Vec<Vec<f64>> = widths[1..].iter().map(|&o| vec![0.0; o]).collect();
        let zeros = |m: &Mat<f64>| Mat::zeros(m.nrows(), m.ncols());
        Trainable {
            grad_w: w.iter().map(zeros).collect(),
            grad_b: b.iter().map(|v| vec![0.0; v.len()]).collect(),
            moments: w
                .iter()
                .zip(&b)
                .map(|(m, v)| (zeros(m), zeros(m), vec![0.0; v.len()], vec![0.0; v.len()]))
                .collect(),
            w,
            b,
            activations: activations.to_vec(),
            step: 0,
        }
    }

    /// The activations of every layer for the rows of `x` (entry 0 is `x`).
    pub fn forward(&self, x: Mat<f64>) -> Vec<Mat<f64>> {
        let mut acts = vec![x];
        for ((w, b), act) in self.w.iter().zip(&self.b).zip(&self.activations) {
            let prev = acts.last().expect("the input is there");
            let mut z = Mat::zeros(prev.nrows(), w.ncols());
            matmul(
                z.as_mut(),
                Accum::Replace,
                prev.as_ref(),
                w.as_ref(),
                1.0,
                Par::rayon(0),
            );
            for j in 0..z.ncols() {
                for i in 0..z.nrows() {
                    z[(i, j)] = act.apply(z[(i, j)] + b[j]);
                }
            }
            acts.push(z);
        }
        acts
    }

    /// Back-propagates `d_out` (∂loss/∂ last activation) through the layers whose
    /// activations `acts` are, storing the gradients; returns ∂loss/∂input.
    pub fn backward(&mut self, acts: &[Mat<f64>], d_out: Mat<f64>) -> Mat<f64> {
        let mut delta = d_out;
        for l in (0..self.w.len()).rev() {
            let a = &acts[l + 1];
            let act = self.activations[l];
            if act != Activation::Identity {
                for j in 0..delta.ncols() {
                    for i in 0..delta.nrows() {
                        delta[(i, j)] *= act.derivative(a[(i, j)]);
                    }
                }
            }
            matmul(
                self.grad_w[l].as_mut(),
                Accum::Replace,
                acts[l].transpose(),
                delta.as_ref(),
                1.0,
                Par::rayon(0),
            );
            for (j, g) in self.grad_b[l].iter_mut().enumerate() {
                *g = (0..delta.nrows()).map(|i| delta[(i, j)]).sum();
            }
            let mut prev = Mat::zeros(delta.nrows(), self.w[l].nrows());
            matmul(
                prev.as_mut(),
                Accum::Replace,
                delta.as_ref(),
                self.w[l].transpose(),
                1.0,
                Par::rayon(0),
            );
            delta = prev;
        }
        delta
    }

    /// One Adam step (β₁ = 0.9, β₂ = 0.999, ε = 1e-8) with the stored gradients.
    pub fn adam(&mut self, lr: f64) {
        const B1: f64 = 0.9;
        const B2: f64 = 0.999;
        const EPS: f64 = 1e-8;
        self.step += 1;
        let c1 = 1.0 - B1.powi(self.step);
        let c2 = 1.0 - B2.powi(self.step);
        let update = |p: &mut f64, g: f64, m: &mut f64, v: &mut f64| {
            *m = B1 * *m + (1.0 - B1) * g;
            *v = B2 * *v + (1.0 - B2) * g * g;
            *p -= lr * (*m / c1) / ((*v / c2).sqrt() + EPS);
        };
        for l in 0..self.w.len() {
            let (mw, vw, mb, vb) = &mut self.moments[l];
            let (w, gw) = (&mut self.w[l], &self.grad_w[l]);
            for j in 0..w.ncols() {
                for i in 0..w.nrows() {
                    update(&mut w[(i, j)], gw[(i, j)], &mut mw[(i, j)], &mut vw[(i, j)]);
                }
            }
            for j in 0..self.b[l].len() {
                update(&mut self.b[l][j], self.grad_b[l][j], &mut mb[j], &mut vb[j]);
            }
        }
    }

    /// The network as stored in a model.
    pub fn to_mlp(&self) -> Mlp {
        Mlp {
            layers: self
                .w
                .iter()
                .zip(&self.b)
                .zip(&self.activations)
                .map(|((w, b), a)| Layer {
                    w: StoredMat::from_mat(w.as_ref()),
                    b: b.clone(),
                    activation: *a,
                })
                .collect(),
        }
    }
}

impl Mlp {
    /// The output for one input row, layer by layer in a fixed order of operations.
    pub fn forward_row(&self, x: &[f64]) -> Vec<f64> {
        let mut cur = x.to_vec();
        for layer in &self.layers {
            let w: MatRef<'_, f64> = layer.w.view();
            cur = (0..w.ncols())
                .map(|j| {
                    let col = w.col(j);
                    let z = cur
                        .iter()
                        .enumerate()
                        .fold(layer.b[j], |s, (i, &v)| s + v * col[i]);
                    layer.activation.apply(z)
                })
                .collect();
        }
        cur
    }

    /// Input and output widths, and whether every layer's shapes chain.
    pub fn widths(&self) -> Option<(usize, usize)> {
        let first = self.layers.first()?.w.nrows();
        let mut width = first;
        for l in &self.layers {
            if l.w.nrows() != width || l.b.len() != l.w.ncols() || !l.w.is_consistent() {
                return None;
            }
            width = l.w.ncols();
        }
        Some((first, width))
    }
}
