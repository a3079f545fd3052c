//! Writes the compatibility fixtures of `tests/fixtures/` (issue: one place per method):
//! one model file per method and variant, the new points they extend, and the expected
//! extension (coordinates and every diagnostic column, as the bits of each f64).
//!
//! Run once, by the code of the day the format was fixed; never again over existing
//! files (the test `tests/fixtures.rs` then checks every later build against them). A
//! new method or variant adds new files: `cargo run --example write_fixtures -- NAME`
//! writes only the fixtures whose name starts with NAME and refuses to overwrite.

use oose::datasets::s_curve;
use oose::extend::{Extension, Strategy};
use oose::faer::{Mat, MatRef};
use oose::kernel::{Epsilon, Kernel};
use oose::linalg::eigen::Solver;
use oose::methods::diffusion_maps::{
    Density, DiffusionKernel, DiffusionMaps, LaplacianEigenmaps, OnIsolated, Output, Sparsity,
};
use oose::methods::interpolate::Interpolator;
use oose::methods::isomap::Isomap;
use oose::methods::kernel_pca::KernelPca;
use oose::methods::landmark_mds::{LandmarkMds, Landmarks};
use oose::methods::lle::{LleMethod, LocallyLinearEmbedding};
use oose::methods::mds::{ClassicalMds, Proximity};
use oose::methods::pca::Pca;
use oose::methods::spectral_clustering::SpectralClustering;
use oose::methods::tsne::Tsne;
use oose::methods::umap::Umap;
use oose::methods::OutOfSample;
use oose::model::{FittedMethod, Model};
use std::fmt::Write as _;
use std::path::Path;

/// One fixture: a model, the rows it extends, and how.
struct Fixture {
    name: &'static str,
    model: Model,
    input: Mat<f64>,
    /// Extra diagonal k(z, z) for a precomputed kernel.
    diagonal: Option<Vec<f64>>,
    /// Strategies to record (projection always; restricted where the model has it).
    restricted: bool,
}

fn hex_rows(m: MatRef<'_, f64>) -> String {
    let mut s = format!("{} {}\n", m.nrows(), m.ncols());
    for i in 0..m.nrows() {
        let row: Vec<String> = (0..m.ncols())
            .map(|j| format!("{:016x}", m[(i, j)].to_bits()))
            .collect();
        s.push_str(&row.join(" "));
        s.push('\n');
    }
    s
}

fn hex_extension(e: &Extension) -> String {
    let mut s = String::new();
    let col = |s: &mut String, name: &str, v: &[f64]| {
        let bits: Vec<String> = v.iter().map(|x| format!("{:016x}", x.to_bits())).collect();
        writeln!(s, "{name} {}", bits.join(" ")).unwrap();
    };
    for j in 0..e.coordinates.ncols() {
        let v: Vec<f64> = (0..e.coordinates.nrows())
            .map(|i| e.coordinates[(i, j)])
            .collect();
        col(&mut s, &format!("c{}", j + 1), &v);
    }
    col(&mut s, "residual", &e.residual);
    col(&mut s, "reconstruction_error", &e.reconstruction_error);
    for c in &e.extra {
        col(&mut s, c.name, &c.values);
    }
    s
}

fn sq_dist(a: MatRef<'_, f64>, b: MatRef<'_, f64>) -> Mat<f64> {
    Mat::from_fn(a.nrows(), b.nrows(), |i, j| {
        (0..a.ncols())
            .map(|c| (a[(i, c)] - b[(j, c)]).powi(2))
            .sum()
    })
}

fn fixtures() -> Vec<Fixture> {
    let data = s_curve(90, 0.03, 7).points;
    let x = data.as_ref().subrows(0, 80).to_owned();
    // Nine held-out points and one off the manifold.
    let z = Mat::from_fn(10, 3, |i, j| {
        if i < 9 {
            data[(80 + i, j)]
        } else {
            [0.3, 1.1, -0.4][j]
        }
    });
    let (x, z) = (x.as_ref(), z.as_ref());
    // t-SNE with new points' neighbours searched approximately (the walk before format
    // 9, the inverted lists after).
    let tsne_searching_approximately = || -> Model {
        Tsne {
            perplexity: 10.0,
            max_iter: 300,
            transform_search: oose::neighbors::GraphMethod::Approximate,
            ..Default::default()
        }
        .fit(x)
        .unwrap()
        .into()
    };
    let gauss = |e: f64| Kernel::Gaussian {
        epsilon: Epsilon::Value(e),
    };
    let kpca = |kernel: Kernel, centering: bool, solver: Solver| KernelPca {
        n_components: 2,
        kernel,
        centering,
        solver,
        rank_tolerance: 1e-12,
    };
    let dk = |epsilon, sparsity, alpha| DiffusionKernel {
        epsilon,
        sparsity,
        alpha,
    };
    let dmaps = |kernel, output, t, density| DiffusionMaps {
        n_components: 2,
        kernel,
        t,
        output,
        density,
        ..Default::default()
    };
    let values = Mat::from_fn(80, 2, |i, j| {
        if j == 0 {
            (x[(i, 0)] * 1.3).sin() + x[(i, 2)]
        } else {
            x[(i, 1)] * x[(i, 2)] - 0.5
        }
    });
    let fx = |kernel: Kernel, regularization: f64, gh: Option<f64>| -> Model {
        Interpolator {
            kernel,
            regularization,
            geometric_harmonics: gh,
            rank_tolerance: 1e-12,
        }
        .fit(x, values.as_ref())
        .unwrap()
        .into()
    };
    let sqd = sq_dist(x, x);
    let sqd_z = sq_dist(z, x);
    let sim = Mat::from_fn(80, 80, |i, j| (-sqd[(i, j)] / 2.0).exp());
    let sim_z = Mat::from_fn(10, 81, |i, j| {
        if j < 80 {
            (-sqd_z[(i, j)] / 2.0).exp()
        } else {
            1.0
        }
    });
    let dis = Mat::from_fn(80, 80, |i, j| sqd[(i, j)].sqrt());
    let dis_z = Mat::from_fn(10, 80, |i, j| sqd_z[(i, j)].sqrt());
    let kx = Mat::from_fn(80, 80, |i, j| (-sqd[(i, j)] / 1.5).exp());
    let kz = Mat::from_fn(10, 80, |i, j| (-sqd_z[(i, j)] / 1.5).exp());
    let mds = |m: MatRef<'_, f64>, kind| -> Model {
        ClassicalMds {
            n_components: 2,
            ..Default::default()
        }
        .fit_proximity(m, kind)
        .unwrap()
        .into()
    };
    let fix = |name, model: Model, input: MatRef<'_, f64>, restricted| Fixture {
        name,
        model,
        input: input.to_owned(),
        diagonal: None,
        restricted,
    };
    let knn = Sparsity::Knn(12);
    vec![
        fix("pca", Pca::default().fit(x).unwrap().into(), z, false),
        fix(
            "kpca-gaussian-centred",
            kpca(gauss(1.5), true, Solver::Dense).fit(x).unwrap().into(),
            z,
            true,
        ),
        fix(
            "kpca-gaussian-auto-lowrank",
            kpca(Kernel::default(), true, Solver::LowRank)
                .fit(x)
                .unwrap()
                .into(),
            z,
            true,
        ),
        fix(
            "kpca-laplacian-uncentred",
            kpca(
                Kernel::Laplacian {
                    epsilon: Epsilon::Value(2.0),
                },
                false,
                Solver::Lanczos,
            )
            .fit(x)
            .unwrap()
            .into(),
            z,
            false,
        ),
        fix(
            "kpca-imq",
            kpca(
                Kernel::InverseMultiquadric {
                    epsilon: Epsilon::Median,
                    beta: -0.5,
                },
                true,
                Solver::Auto,
            )
            .fit(x)
            .unwrap()
            .into(),
            z,
            false,
        ),
        fix(
            "kpca-polynomial",
            kpca(
                Kernel::Polynomial {
                    gamma: 0.5,
                    coef0: 1.0,
                    degree: 2,
                },
                true,
                Solver::Dense,
            )
            .fit(x)
            .unwrap()
            .into(),
            z,
            false,
        ),
        fix(
            "kpca-linear",
            kpca(Kernel::Linear, true, Solver::Dense)
                .fit(x)
                .unwrap()
                .into(),
            z,
            false,
        ),
        fix(
            "kpca-wendland",
            kpca(
                Kernel::Wendland {
                    epsilon: Epsilon::Value(3.0),
                },
                true,
                Solver::Dense,
            )
            .fit(x)
            .unwrap()
            .into(),
            z,
            false,
        ),
        Fixture {
            name: "kpca-precomputed",
            model: kpca(Kernel::Precomputed, true, Solver::Dense)
                .fit(kx.as_ref())
                .unwrap()
                .into(),
            input: kz.clone(),
            diagonal: Some(vec![1.0; 10]),
            restricted: false,
        },
        fix("mds-points", mds(x, Proximity::Points), z, true),
        fix(
            "mds-dissimilarities",
            mds(dis.as_ref(), Proximity::Dissimilarities),
            dis_z.as_ref(),
            true,
        ),
        fix(
            "mds-squared-dissimilarities",
            mds(sqd.as_ref(), Proximity::SquaredDissimilarities),
            sqd_z.as_ref(),
            true,
        ),
        fix(
            "mds-similarities",
            mds(sim.as_ref(), Proximity::Similarities),
            sim_z.as_ref(),
            false,
        ),
        fix(
            "landmark-mds-maxmin",
            LandmarkMds {
                n_components: 2,
                n_landmarks: 30,
                landmarks: Landmarks::MaxMin,
                seed: 3,
                solver: Solver::Auto,
            }
            .fit(x)
            .unwrap()
            .into(),
            z,
            true,
        ),
        fix(
            "landmark-mds-random",
            LandmarkMds {
                n_components: 2,
                n_landmarks: 25,
                landmarks: Landmarks::Random,
                seed: 5,
                solver: Solver::Dense,
            }
            .fit(x)
            .unwrap()
            .into(),
            z,
            false,
        ),
        fix(
            "isomap",
            Isomap {
                n_components: 2,
                n_neighbors: 8,
                ..Default::default()
            }
            .fit(x)
            .unwrap()
            .into(),
            z,
            true,
        ),
        fix(
            "dmaps-knn-diffusion",
            dmaps(
                dk(Epsilon::Median, knn, 1.0),
                Output::Diffusion,
                1.0,
                Density::Training,
            )
            .fit(x)
            .unwrap()
            .into(),
            z,
            false,
        ),
        fix(
            "dmaps-dense-standard",
            dmaps(
                dk(Epsilon::Value(0.8), Sparsity::Dense, 0.5),
                Output::Standard,
                1.0,
                Density::Training,
            )
            .fit(x)
            .unwrap()
            .into(),
            z,
            false,
        ),
        fix(
            "dmaps-threshold-weighted",
            dmaps(
                dk(Epsilon::Value(0.8), Sparsity::Threshold(1e-3), 1.0),
                Output::Weighted,
                2.0,
                Density::Training,
            )
            .fit(x)
            .unwrap()
            .into(),
            z,
            false,
        ),
        fix(
            "dmaps-logslope-normalized-union",
            dmaps(
                dk(Epsilon::LogSlope, knn, 0.0),
                Output::Normalized,
                1.0,
                Density::Union,
            )
            .fit(x)
            .unwrap()
            .into(),
            z,
            false,
        ),
        fix(
            "dmaps-knn-inf-nan-isolated",
            DiffusionMaps {
                n_components: 2,
                kernel: dk(Epsilon::Value(f64::INFINITY), Sparsity::Knn(6), 1.0),
                on_isolated: OnIsolated::Nan,
                residual: Some(true),
                ..Default::default()
            }
            .fit(x)
            .unwrap()
            .into(),
            z,
            false,
        ),
        fix(
            "eigenmaps",
            LaplacianEigenmaps {
                n_components: 2,
                kernel: dk(Epsilon::Median, Sparsity::Knn(10), 0.0),
                ..Default::default()
            }
            .fit(x)
            .unwrap()
            .into(),
            z,
            false,
        ),
        fix(
            "spectral-clustering",
            SpectralClustering {
                n_clusters: 3,
                kernel: dk(Epsilon::Median, Sparsity::Knn(10), 0.0),
                seed: 4,
                ..Default::default()
            }
            .fit(x)
            .unwrap()
            .into(),
            z,
            false,
        ),
        fix("interpolate-gaussian", fx(gauss(1.0), 0.0, None), z, false),
        fix(
            "interpolate-thin-plate",
            fx(Kernel::Polyharmonic { beta: 2 }, 0.0, None),
            z,
            false,
        ),
        fix(
            "interpolate-multiquadric-regularized",
            fx(
                Kernel::Multiquadric {
                    epsilon: Epsilon::Median,
                    beta: 0.5,
                },
                1e-3,
                None,
            ),
            z,
            false,
        ),
        fix(
            "interpolate-geometric-harmonics",
            fx(gauss(2.0), 0.0, Some(1e-8)),
            z,
            false,
        ),
        // Added with the method (0.5.0), by the code of its first commit.
        fix(
            "lle",
            LocallyLinearEmbedding {
                n_neighbors: 8,
                ..Default::default()
            }
            .fit(x)
            .unwrap()
            .into(),
            z,
            false,
        ),
        // Format 4's metric (0.5.0): cosine Isomap, fitted through the registry.
        fix(
            "isomap-cosine",
            Model::fit(
                "isomap",
                &oose::model::params::Values::new()
                    .with("metric", "cosine")
                    .with("n_neighbors", 8usize),
                oose::model::Input::Points(x),
            )
            .unwrap(),
            z,
            false,
        ),
        // Added with the variants (0.5.0, format 4), by the code of their first commit.
        fix(
            "lle-modified",
            LocallyLinearEmbedding {
                n_neighbors: 8,
                method: LleMethod::modified(),
                ..Default::default()
            }
            .fit(x)
            .unwrap()
            .into(),
            z,
            false,
        ),
        fix(
            "lle-hessian",
            LocallyLinearEmbedding {
                n_neighbors: 8,
                method: LleMethod::hessian(),
                ..Default::default()
            }
            .fit(x)
            .unwrap()
            .into(),
            z,
            false,
        ),
        // Added with the method (0.5.0), by the code of its first commit.
        fix(
            "tsne",
            Tsne {
                perplexity: 10.0,
                max_iter: 300,
                ..Default::default()
            }
            .fit(x)
            .unwrap()
            .into(),
            z,
            false,
        ),
        // Written by the code of 88226b7 (format 8, before the inverted lists): new
        // points searched by the walk on the stored graph lists, as every file before
        // format 9 keeps searching.
        fix("tsne-walk", tsne_searching_approximately(), z, false),
        // Added with the inverted lists (format 9, 0.5.0): new points searched by them.
        fix("tsne-lists", tsne_searching_approximately(), z, false),
        // Added with the method (0.5.0), by the code of its first commit.
        fix(
            "umap",
            Umap {
                n_neighbors: 8,
                n_epochs: Some(60),
                ..Default::default()
            }
            .fit(x)
            .unwrap()
            .into(),
            z,
            false,
        ),
        // Added with the method (0.5.0), by the code of its first commit.
        fix(
            "mvu",
            oose::methods::mvu::MaximumVarianceUnfolding::default()
                .fit(x)
                .unwrap()
                .into(),
            z,
            false,
        ),
        // Added with the methods (0.5.0), by the code of their first commit.
        fix(
            "autoencoder",
            oose::methods::autoencoder::Autoencoder {
                layers: vec![8],
                epochs: 10,
                ..Default::default()
            }
            .fit(x)
            .unwrap()
            .into(),
            z,
            false,
        ),
        fix(
            "vae",
            oose::methods::autoencoder::VariationalAutoencoder {
                layers: vec![8],
                epochs: 10,
                ..Default::default()
            }
            .fit(x)
            .unwrap()
            .into(),
            z,
            false,
        ),
        // Format 5 (0.5.0): the autoencoders' precision, inside the method's payload.
        fix(
            "autoencoder-float32",
            oose::methods::autoencoder::Autoencoder {
                layers: vec![8],
                epochs: 10,
                precision: oose::methods::autoencoder::Precision::Float32,
                ..Default::default()
            }
            .fit(x)
            .unwrap()
            .into(),
            z,
            false,
        ),
        // Format 3 (0.5.0): a model with the annotations an interface stores.
        fix(
            "annotated-kpca-v3",
            Model::from(kpca(gauss(1.5), true, Solver::Dense).fit(x).unwrap())
                .with_annotations(vec![
                    ("strategy".into(), "'restricted'".into()),
                    ("n_jobs".into(), "2".into()),
                ])
                .unwrap(),
            z,
            true,
        ),
        // Format 6 (0.5.0): the novelty score with its direction part.
        fix(
            "kpca-novelty-v6",
            kpca(gauss(1.5), true, Solver::Dense).fit(x).unwrap().into(),
            z,
            true,
        ),
        // Format 7 (0.5.0): the same model, its training points written once (the
        // novelty score's copy is the method's).
        fix(
            "kpca-novelty-v7",
            kpca(gauss(1.5), true, Solver::Dense).fit(x).unwrap().into(),
            z,
            true,
        ),
        // 0.5.0: kernel PCA through landmarks, and P-greedy landmarks (no new format).
        fix(
            "kpca-nystrom",
            oose::methods::kernel_pca::NystromKpca {
                n_components: 3,
                n_landmarks: 30,
                ..Default::default()
            }
            .fit(x)
            .unwrap()
            .into(),
            z,
            false,
        ),
        fix(
            "landmark-mds-p-greedy",
            oose::methods::landmark_mds::LandmarkMds {
                n_landmarks: 20,
                landmarks: oose::methods::landmark_mds::Landmarks::PGreedy,
                ..Default::default()
            }
            .fit(x)
            .unwrap()
            .into(),
            z,
            true,
        ),
        // Format 8 (0.5.0): the model of `kpca-novelty-v7`, read from that file and
        // written again: the residual factor's lower triangle only.
        fix(
            "kpca-novelty-v8",
            Model::from_bytes(
                &std::fs::read(
                    Path::new(env!("CARGO_MANIFEST_DIR"))
                        .join("tests/fixtures/kpca-novelty-v7.oose"),
                )
                .unwrap(),
            )
            .unwrap(),
            z,
            true,
        ),
    ]
}

fn main() {
    let only = std::env::args().nth(1).unwrap_or_default();
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    std::fs::create_dir_all(&dir).unwrap();
    for f in fixtures() {
        if !f.name.starts_with(&only) {
            continue;
        }
        let stem = dir.join(f.name);
        let model_path = stem.with_extension("oose");
        assert!(
            !model_path.exists(),
            "{}: fixtures are written once; remove it by hand only for a new format version",
            model_path.display()
        );
        std::fs::write(&model_path, f.model.to_bytes()).unwrap();
        let mut input = hex_rows(f.input.as_ref());
        if let Some(d) = &f.diagonal {
            let bits: Vec<String> = d.iter().map(|x| format!("{:016x}", x.to_bits())).collect();
            writeln!(input, "diagonal {}", bits.join(" ")).unwrap();
        }
        std::fs::write(stem.with_extension("input"), input).unwrap();
        let proj = match (f.model.fitted_method(), &f.diagonal) {
            (FittedMethod::KernelPca(m), Some(d)) => {
                m.extend_kernel_rows(f.input.as_ref(), Some(d))
            }
            _ => f.model.extend(f.input.as_ref()),
        }
        .unwrap();
        let mut expected = format!("[projection]\n{}", hex_extension(&proj));
        if f.restricted {
            let r = f
                .model
                .extend_with(f.input.as_ref(), Strategy::Restricted)
                .unwrap();
            write!(expected, "[restricted]\n{}", hex_extension(&r)).unwrap();
        }
        std::fs::write(stem.with_extension("expected"), expected).unwrap();
        println!("{}: {} bytes", f.name, f.model.to_bytes().len());
    }
}
