//! Diagnostics of an extension: the residual kernel / power function (SPEC §4) and the
//! comparison with retraining (SPEC §9).

pub mod residual;
pub mod retrain;
