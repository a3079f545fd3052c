//! Linear algebra shared by the methods: the eigensolver with the sign rule (SPEC §3),
//! pivoted Cholesky for the residual kernel (SPEC §4), centring, Procrustes (SPEC §9).

pub mod center;
pub mod eigen;
pub mod pivoted_cholesky;
pub mod procrustes;
pub(crate) mod simd;
pub mod sparse;
