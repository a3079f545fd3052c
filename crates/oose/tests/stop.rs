//! A stop request (Ctrl-C in Python: `oose::progress::request_stop`) ends every long
//! stage of a fit with `Error::Interrupted`: the exact kNN search, Isomap's all-pairs
//! Dijkstra, Lanczos, t-SNE's iterations, UMAP's epochs, the novelty score's search.
//! One test in its own binary: the request is process-wide, so it must not run beside
//! other tests.

use oose::linalg::eigen::Solver;
use oose::methods::isomap::Isomap;
use oose::methods::kernel_pca::KernelPca;
use oose::methods::lle::LocallyLinearEmbedding;
use oose::methods::OutOfSample;
use oose::model::params::Values;
use oose::model::{Input, Model};
use oose::neighbors::{knn_graph, GraphMethod};
use oose::prelude::Error;

fn interrupted<T: std::fmt::Debug>(what: &str, r: oose::Result<T>) {
    match r {
        Err(Error::Interrupted) => eprintln!("{what}: interrupted"),
        other => panic!("{what}: {other:?}"),
    }
}

#[test]
fn a_stop_request_interrupts_every_long_stage_and_is_withdrawn() {
    // Above 16 dimensions (brute force) and below (kd-tree).
    let wide = oose::datasets::three_d_clusters(300, 3, 0).points;
    let wide = oose::faer::Mat::from_fn(300, 20, |i, j| wide[(i, j % 3)] + 0.01 * j as f64);
    let roll = oose::datasets::swiss_roll(300, 0.05, false, 0).points;
    oose::progress::request_stop();
    for x in [wide.as_ref(), roll.as_ref()] {
        interrupted("knn graph", knn_graph(x, 10, GraphMethod::Exact, 0));
        interrupted(
            "isomap",
            Isomap {
                n_neighbors: 10,
                ..Default::default()
            }
            .fit(x),
        );
        interrupted(
            "lle",
            LocallyLinearEmbedding {
                n_neighbors: 10,
                ..Default::default()
            }
            .fit(x),
        );
        interrupted(
            "kpca (Lanczos)",
            KernelPca {
                solver: Solver::Lanczos,
                ..Default::default()
            }
            .fit(x),
        );
        // PCA has no long stage of its own; its model's novelty search stops.
        interrupted(
            "pca model",
            Model::fit("pca", &Values::new(), Input::Points(x)),
        );
        interrupted(
            "t-SNE",
            Model::fit(
                "tsne",
                &Values::new().with("perplexity", 10.0),
                Input::Points(x),
            ),
        );
        interrupted("UMAP", Model::fit("umap", &Values::new(), Input::Points(x)));
    }
    // Extension is not a fit: it does not stop.
    oose::progress::clear_stop();
    let m = Model::fit("isomap", &Values::new(), Input::Points(roll.as_ref())).unwrap();
    oose::progress::request_stop();
    assert_eq!(
        m.extend(roll.as_ref().subrows(0, 5))
            .unwrap()
            .coordinates
            .nrows(),
        5
    );
    oose::progress::clear_stop();
    // Withdrawn: the same fits succeed.
    let lle = LocallyLinearEmbedding {
        n_neighbors: 10,
        ..Default::default()
    };
    assert!(lle.fit(wide.as_ref()).is_ok());
    assert!(Model::fit("pca", &Values::new(), Input::Points(roll.as_ref())).is_ok());
}
