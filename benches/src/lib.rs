//! Host crate for the benchmarks in this folder (see benches/README.md).
