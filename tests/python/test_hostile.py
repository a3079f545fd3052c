"""Hostile input through the Python package: a model crafted with a valid checksum,
numbers too large for the arithmetic, and data set sizes that are not whole numbers
arrive as ValueError naming the problem (never pyo3's PanicException, which ``except
Exception`` does not catch, nor an OverflowError naming nothing)."""

import pickle
import struct
import zlib

import numpy as np
import pytest

import oose


def _crafted(data: bytes, edit) -> bytes:
    """The model bytes with the payload edited and its length and CRC-32 recomputed
    (from format 5, the CRC-32 of the version number and the payload)."""
    payload = bytearray(data[24:])
    edit(payload)
    head = bytearray(data[:24])
    head[12:20] = struct.pack("<Q", len(payload))
    version = struct.unpack("<I", bytes(head[8:12]))[0]
    covered = (bytes(head[8:12]) if version >= 5 else b"") + bytes(payload)
    head[20:24] = struct.pack("<I", zlib.crc32(covered))
    return bytes(head) + bytes(payload)


def _isomap():
    x = oose.datasets.s_curve(60, random_state=3)
    return oose.Isomap(n_neighbors=10).fit(x), x


def test_a_crafted_model_with_a_valid_checksum_is_a_value_error(tmp_path):
    est, _ = _isomap()
    data = est.model_.to_bytes()
    assert data[24:27] == bytes([4, 2, 10])  # Isomap, n_components, n_neighbors
    bad = _crafted(data, lambda p: p.__setitem__(2, 0))
    with pytest.raises(ValueError, match="n_neighbors"):
        oose._oose.Model.from_bytes(bad)
    path = tmp_path / "bad.oose"
    path.write_bytes(bad)
    with pytest.raises(ValueError, match="n_neighbors"):
        oose.load(path)
    # pickle goes through the same decoder.
    blob = pickle.dumps(est).replace(data, bad)
    with pytest.raises(ValueError, match="n_neighbors"):
        pickle.loads(blob)
    nan = _crafted(data, lambda p: p.__setitem__(slice(5, 13), struct.pack("<d", float("nan"))))
    with pytest.raises(ValueError, match="rank_tolerance"):
        oose._oose.Model.from_bytes(nan)


def test_rows_too_large_are_named_not_answered_with_nan():
    est, x = _isomap()
    z = x[:3].copy()
    z[1] *= 1e200
    with pytest.raises(ValueError, match="row 1.*too large|too large.*row 1"):
        est.transform(z)
    big = x.copy()
    big[5, 0] = 1e308
    with pytest.raises(ValueError, match="too large"):
        oose.KernelPCA().fit(big)


def test_dataset_sizes_and_seeds_are_whole_numbers_or_named_errors(monkeypatch):
    np.testing.assert_array_equal(oose.datasets.swiss_roll(5.0), oose.datasets.swiss_roll(5))
    np.testing.assert_array_equal(
        oose.datasets.s_curve(np.int64(4), random_state=np.uint64(2**64 - 1)),
        oose.datasets.s_curve(4, random_state=2**64 - 1),
    )
    # Were: 2.5 silently 2, -5 an OverflowError naming nothing.
    for bad in (0, -5, 2.5, True, "3", None):
        with pytest.raises(ValueError, match=r"^n: expected a whole number ≥ 1, got"):
            oose.datasets.swiss_roll(bad)
    # The seed as the estimators take it (their own check, _seed): None and a
    # Generator draw one.
    assert oose.datasets.twin_peaks(5, random_state=None).shape == (5, 3)
    g = np.random.default_rng(3)
    assert oose.datasets.twin_peaks(5, random_state=g).shape == (5, 3)
    for bad in (-1, 2**64):
        with pytest.raises(ValueError, match=r"^random_state: must be between 0 and 2\*\*64 - 1"):
            oose.datasets.twin_peaks(10, random_state=bad)
    with pytest.raises(ValueError, match=r"^random_state: expected an int seed"):
        oose.datasets.twin_peaks(10, random_state=0.5)
    # More than the memory allows: refused with its size (was pyo3's PanicException from
    # a failed allocation, which ``except Exception`` does not catch).
    monkeypatch.setenv("OOSE_MEMORY_LIMIT", str(10**6))
    with pytest.raises(ValueError, match=r"data set \(n×3\) needs 22.9 MiB of memory"):
        oose.datasets.swiss_roll(10**6)
    # Kernel interpolation holds four N×N matrices at its peak (K with working copies
    # and factors): refused when 3.5 of them fit (it planned for two before).
    x = np.random.default_rng(0).normal(size=(500, 2))
    monkeypatch.setenv("OOSE_MEMORY_LIMIT", str(int(3.5 * 500 * 500 * 8)))
    with pytest.raises(ValueError, match=r"kernel matrix \(N×N\) with its working copies and factors needs 7.6 MiB"):
        oose.KernelInterpolator().fit(x, x[:, 0])


@pytest.mark.parametrize("cls", [oose.UMAP, oose.TSNE])
def test_neighbour_embeddings_do_not_depend_on_the_data_scale(cls):
    """UMAP's σ and t-SNE's β are found by bisections that start at 1 with a bounded
    number of steps (umap-learn's, scikit-learn's): at 1e20 or 1e-20 they stopped short,
    and trustworthiness fell from 0.99 to 0.85 (UMAP) and 0.83 (t-SNE). Rows beyond
    their reach are bisected in units of a power of two (maths §12, §13)."""
    from sklearn.datasets import load_digits
    from sklearn.manifold import trustworthiness

    x = load_digits().data[:600]
    x = x / x.std()
    trust = {
        s: trustworthiness(x, cls(random_state=0).fit_transform(x * s), n_neighbors=10)
        for s in (1.0, 1e20, 1e-20)
    }
    assert trust[1.0] > 0.98, trust
    assert all(abs(t - trust[1.0]) < 0.01 for t in trust.values()), trust
