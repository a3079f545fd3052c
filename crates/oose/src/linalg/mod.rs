//! Linear algebra shared by the methods: the eigensolver with the sign rule (maths §3),
//! pivoted Cholesky for the residual kernel (maths §4), centring, Procrustes (maths §9),
//! and the column-major matrix model files hold (`stored`).

/// The product `a · b` in a new matrix, with parallelism `par`.
pub(crate) fn product(
    a: faer::MatRef<'_, f64>,
    b: faer::MatRef<'_, f64>,
    par: faer::Par,
) -> faer::Mat<f64> {
    let mut out = faer::Mat::<f64>::zeros(a.nrows(), b.ncols());
    faer::linalg::matmul::matmul(out.as_mut(), faer::Accum::Replace, a, b, 1.0, par);
    out
}

/// `impl LinOp<f64>` for a symmetric operator (it is its own conjugate transpose, so
/// `apply` and `conj_apply` are both the product) of dimension `$n`, given by
/// `$product(self, out, rhs)`: the shape faer's Lanczos takes.
macro_rules! symmetric_lin_op {
    ($ty:ty, n: |$s:ident| $n:expr, product: |$sp:ident, $out:ident, $rhs:ident| $product:expr) => {
        impl faer::matrix_free::LinOp<f64> for $ty {
            fn apply_scratch(
                &self,
                _rhs_ncols: usize,
                _par: faer::Par,
            ) -> faer::dyn_stack::StackReq {
                faer::dyn_stack::StackReq::EMPTY
            }

            fn nrows(&self) -> usize {
                let $s = self;
                $n
            }

            fn ncols(&self) -> usize {
                let $s = self;
                $n
            }

            fn apply(
                &self,
                $out: faer::MatMut<'_, f64>,
                $rhs: faer::MatRef<'_, f64>,
                _par: faer::Par,
                _stack: &mut faer::dyn_stack::MemStack,
            ) {
                let $sp = self;
                $product
            }

            fn conj_apply(
                &self,
                out: faer::MatMut<'_, f64>,
                rhs: faer::MatRef<'_, f64>,
                par: faer::Par,
                stack: &mut faer::dyn_stack::MemStack,
            ) {
                faer::matrix_free::LinOp::apply(self, out, rhs, par, stack)
            }
        }
    };
}

pub mod center;
pub(crate) mod cholesky;
pub mod eigen;
pub mod memory;
pub(crate) mod pivoted_cholesky;
pub mod procrustes;
pub(crate) mod simd;
pub(crate) mod small;
pub(crate) mod sparse;
pub(crate) mod stored;
