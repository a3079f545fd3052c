//! Diagnostics of an extension: the residual kernel / power function (maths §4) and the
//! comparison with retraining (maths §9), and the theory diagnostics (batch discrepancy,
//! exactness criterion, interlacing; maths §4).

pub(crate) mod direction;
pub mod novelty;
pub mod residual;
pub mod retrain;
pub mod theory;
