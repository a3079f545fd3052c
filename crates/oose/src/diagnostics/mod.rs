//! Diagnostics of an extension: the residual kernel / power function (SPEC §4) and the
//! comparison with retraining (SPEC §9), and the theory diagnostics (batch discrepancy,
//! exactness criterion, interlacing; SPEC §4).

pub mod residual;
pub mod retrain;
pub mod theory;
