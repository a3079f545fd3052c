//! A bounded run of the fuzz harness (`oose_cli::fuzz`): model files, `.npy` files and
//! CSV text, mutated. Zero failures: no panic, no silent non-finite answer, every
//! refusal one line naming its input. The long run is
//! `cargo run --release -p oose-cli --example fuzz -- all 100000`.

use oose_cli::fuzz::{run, seed_models, Target};
use std::sync::atomic::AtomicUsize;

const CASES: usize = 20_000;

#[test]
fn every_registered_configuration_is_a_seed_model() {
    let seeds = seed_models();
    for m in oose::model::METHODS {
        assert!(
            seeds.iter().any(|s| s.starts_with(&format!("{}/", m.name))),
            "{} has no seed model",
            m.name
        );
    }
    assert!(seeds.len() >= 30, "{}", seeds.len());
}

fn check(target: Target) {
    let progress = AtomicUsize::new(0);
    let r = run(target, CASES, 20261124, &progress);
    assert_eq!(r.cases, CASES);
    assert!(r.failures.is_empty(), "{:#?}", r.failures);
    // Both outcomes occur: the mutations reach past the first check, and are refused.
    assert!(r.accepted > CASES / 20 && r.refused > CASES / 20, "{r:?}");
}

#[test]
fn model_files() {
    check(Target::Model);
}

#[test]
fn npy_files() {
    check(Target::Npy);
}

#[test]
fn csv_text() {
    check(Target::Csv);
}
