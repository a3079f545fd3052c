"""oose.dask.transform on a real two-process cluster equals the local transform."""

import pickle

import numpy as np
import pytest

import oose
import oose.dask

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("dask.distributed")


@pytest.fixture(scope="module")
def client():
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    ) as cluster, distributed.Client(cluster) as c:
        yield c


def test_dask_transform_equals_local_transform(client):
    train = oose.datasets.swiss_roll(1500, noise=0.05, random_state=0)
    est = oose.KernelPCA(n_components=3).fit(train)
    z = oose.datasets.swiss_roll(20000, noise=0.05, random_state=1)
    zd = da.from_array(z, chunks=(2000, 3))
    out = oose.dask.transform(est, zd)
    assert out.chunks[0] == zd.chunks[0]
    y = out.compute()
    np.testing.assert_array_equal(y, est.transform(z))
    # Both workers took part.
    assert len(client.scheduler_info()["workers"]) == 2

    coords, diag = oose.dask.transform(est, zd, return_diagnostics=True)
    import dask

    c, r, e = dask.compute(coords, diag["residual"], diag["reconstruction_error"])
    ref, ref_diag = est.transform(z, return_diagnostics=True)
    np.testing.assert_array_equal(c, ref)
    np.testing.assert_array_equal(r, ref_diag["residual"])
    np.testing.assert_array_equal(e, ref_diag["reconstruction_error"])


def test_the_model_enters_the_graph_once():
    train = oose.datasets.swiss_roll(1500, random_state=0)
    est = oose.Isomap(n_neighbors=10).fit(train)
    zd = da.from_array(oose.datasets.swiss_roll(20000, random_state=1), chunks=(1000, 3))
    out = oose.dask.transform(est, zd)
    model_bytes = len(est.model_.to_bytes())
    graph_bytes = len(pickle.dumps(dict(out.__dask_graph__())))
    # 20 blocks; a copy of the model per block would make the graph ≥ 20× the model.
    assert model_bytes < graph_bytes < 1.5 * model_bytes + len(pickle.dumps(zd.compute())) * 1.1


def test_batch_coupled_extension_is_refused():
    train = oose.datasets.s_curve(600, random_state=0)
    est = oose.DiffusionMaps(n_neighbors=15, density="union").fit(train)
    with pytest.raises(ValueError, match="union"):
        oose.dask.transform(est, da.from_array(train, chunks=(100, 3)))
    with pytest.raises(ValueError, match="features"):
        oose.dask.transform(oose.DiffusionMaps(n_neighbors=15).fit(train),
                            da.from_array(train[:, :2], chunks=(100, 2)))


def test_dask_nystrom_fit_equals_the_single_machine_fit(client):
    x = oose.datasets.swiss_roll(12000, noise=0.05, random_state=3)
    local = oose.KernelPCA(n_components=3, n_landmarks=150, landmark_sample=3000).fit(x)
    est = oose.KernelPCA(n_components=3, n_landmarks=150, landmark_sample=3000)
    xd = da.from_array(x, chunks=(2500, 3))
    y = oose.dask.fit_kernel_pca(est, xd)
    assert y.chunks[0] == xd.chunks[0]
    y = y.compute()
    # The same sample, landmarks and sums (in another grouping): equal to 1e-12.
    np.testing.assert_allclose(est.eigenvalues_, local.eigenvalues_, rtol=1e-12)
    scale = np.abs(local.embedding_).max()
    assert np.abs(y - local.embedding_).max() <= 1e-12 * scale
    z = oose.datasets.swiss_roll(50, noise=0.05, random_state=4)
    assert np.abs(est.transform(z) - local.transform(z)).max() <= 1e-12 * scale
    # The plan and the sums cross process boundaries by pickling.
    assert est.model_.method == "kpca-nystrom" and est.embedding_.shape == (0, 3)
    assert len(client.scheduler_info()["workers"]) == 2
    with pytest.raises(ValueError, match="n_landmarks"):
        oose.dask.fit_kernel_pca(oose.KernelPCA(), xd)


def test_empty_and_unknown_size_blocks():
    # Boolean indexing leaves blocks of unknown size, some of them empty; a Dask array
    # can also have zero-length blocks of known size. Extension takes both (the
    # diagnostics' names from the first block that has a row); the Nyström fit takes
    # empty blocks and asks for the sizes when they are unknown.
    x = oose.datasets.swiss_roll(3000, noise=0.05, random_state=5)
    est = oose.KernelPCA(n_components=2).fit(x[:500])
    xd = da.from_array(x, chunks=(1000, 3))
    keep = np.arange(3000) >= 1000
    filtered = xd[da.from_array(keep, chunks=1000)]
    assert np.isnan(filtered.shape[0])
    zero = da.from_array(x, chunks=((1000, 0, 2000), 3))
    for z, rows in [(filtered, x[keep]), (zero, x)]:
        ref, ref_diag = est.transform(rows, return_diagnostics=True)
        np.testing.assert_array_equal(oose.dask.transform(est, z).compute(), ref)
        coords, diag = oose.dask.transform(est, z, return_diagnostics=True)
        np.testing.assert_array_equal(coords.compute(), ref)
        assert sorted(diag) == sorted(ref_diag)
        np.testing.assert_array_equal(diag["novelty"].compute(), ref_diag["novelty"])
    local = oose.KernelPCA(n_components=2, n_landmarks=60).fit(x)
    y = oose.dask.fit_kernel_pca(oose.KernelPCA(n_components=2, n_landmarks=60), zero)
    assert np.abs(y.compute() - local.embedding_).max() <= 1e-12 * np.abs(local.embedding_).max()
    chunked = oose.KernelPCA(n_components=2, n_landmarks=60).fit_chunks([x[:1000], x[:0], x[1000:]])
    assert np.abs(chunked.embedding_ - local.embedding_).max() <= 1e-12 * np.abs(local.embedding_).max()
    with pytest.raises(ValueError, match="compute_chunk_sizes"):
        oose.dask.fit_kernel_pca(oose.KernelPCA(n_components=2, n_landmarks=60), filtered)


def test_the_novelty_warning_points_at_the_callers_line():
    import warnings

    est = oose.KernelPCA(n_components=2).fit(oose.datasets.swiss_roll(40, random_state=0))
    z = da.from_array(oose.datasets.swiss_roll(10, random_state=1), chunks=(5, 3))
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        oose.dask.transform(est, z, return_diagnostics=True)
    novelty = [m for m in w if issubclass(m.category, oose.NoveltyWarning)]
    assert novelty and all(m.filename == __file__ for m in novelty), [
        (m.filename, m.lineno) for m in w
    ]
