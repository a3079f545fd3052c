"""Autoencoders from Python (maths §16): the scikit-learn contract, the encoder as
``transform``, the decoder as ``inverse_transform``, the diagnostics and refusals."""

import numpy as np
import pytest

import oose


def test_autoencoder_transform_is_the_encoder_and_inverse_the_decoder():
    X = oose.datasets.s_curve(300, random_state=0)
    est = oose.Autoencoder(layers=(16,), activation="tanh", epochs=30, batch_size=32)
    Y = est.fit_transform(X[:250])
    assert Y.shape == (250, 2)
    np.testing.assert_array_equal(est.transform(X[:250]), est.embedding_)
    np.testing.assert_array_equal(est.transform(X[260:261])[0], est.transform(X[250:])[10])
    assert est.n_iter_ == len(est.loss_curve_) >= est.best_epoch_ >= 1
    assert est.loss_curve_[-1] < est.loss_curve_[0]
    back = est.inverse_transform(est.embedding_)
    assert back.shape == (250, 3)
    _, diag = est.transform(X[250:], return_diagnostics=True)
    # The reconstruction error is that of the decoder's pre-image, standardised.
    sd = X[:250].std(axis=0)
    rec = est.inverse_transform(est.transform(X[250:]))
    np.testing.assert_allclose(diag["reconstruction_error"], (((rec - X[250:]) / sd) ** 2).sum(axis=1), rtol=1e-9)


def test_vae_diagnostics_and_determinism():
    X = oose.datasets.s_curve(300, random_state=0)
    a = oose.VariationalAutoencoder(layers=(16,), epochs=15, beta=0.5).fit(X)
    b = oose.VariationalAutoencoder(layers=(16,), epochs=15, beta=0.5).fit(X)
    np.testing.assert_array_equal(a.embedding_, b.embedding_)
    _, diag = a.transform(X[:20], return_diagnostics=True)
    assert np.all(diag["posterior_variance"] > 0)
    assert np.all(diag["negative_elbo"] >= diag["reconstruction_error"])
    assert a.get_params()["beta"] == 0.5


def test_float32_training_is_deterministic_near_float64_and_saved(tmp_path):
    X = oose.datasets.s_curve(300, random_state=0)
    kw = dict(layers=(16,), activation="tanh", epochs=20, batch_size=32)
    a = oose.Autoencoder(precision="float32", **kw).fit(X)
    b = oose.Autoencoder(precision="float32", **kw).fit(X)
    ref = oose.Autoencoder(**kw).fit(X)
    np.testing.assert_array_equal(a.embedding_, b.embedding_)
    assert a.embedding_.dtype == np.float64
    # Same initial draws, float32 rounding in training: close to float64, not equal.
    assert not np.array_equal(a.loss_curve_, ref.loss_curve_)
    np.testing.assert_allclose(a.loss_curve_, ref.loss_curve_, rtol=1e-3)
    np.testing.assert_array_equal(a.transform(X[:5]), a.embedding_[:5])
    path = tmp_path / "ae.oose"
    a.save(path)
    back = oose.load(path)
    assert back.get_params()["precision"] == "float32"
    assert back.model_.params()["precision"] == "float32"
    np.testing.assert_array_equal(back.transform(X[:7]), a.embedding_[:7])
    with pytest.raises(ValueError, match="precision"):
        oose.VariationalAutoencoder(precision="float16").fit(X)


def test_bad_input_is_refused_by_name():
    X = oose.datasets.s_curve(60, random_state=0)
    with pytest.raises(ValueError, match="n_components"):
        oose.Autoencoder(n_components=3).fit(X)
    with pytest.raises(ValueError, match="layers"):
        oose.Autoencoder(layers=(8, 0)).fit(X)
    with pytest.raises(ValueError, match="layers"):
        oose.Autoencoder(layers="wide").fit(X)
    with pytest.raises(ValueError, match="diverged"):
        oose.Autoencoder(layers=(8,), learning_rate=1e200, epochs=3).fit(X)
