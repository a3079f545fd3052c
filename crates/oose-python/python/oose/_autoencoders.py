"""Autoencoders and variational autoencoders (maths §16): parametric embeddings whose
encoder is the out-of-sample extension."""

from __future__ import annotations

import numbers

import numpy as np
from sklearn.utils.validation import check_array, check_is_fitted

from ._estimators import _Embedding


class Autoencoder(_Embedding):
    """An autoencoder (maths §16): a multilayer-perceptron encoder E: R^D → R^d and a
    mirrored decoder, trained on the mean squared reconstruction error of the
    standardised inputs with minibatch Adam and early stopping on a held-out fraction.

    ``transform`` is the encoder itself: each row goes through the layers on its own
    (the same bits alone or in a batch), and a training point returns its embedding
    exactly. ``transform(X, return_diagnostics=True)`` gives ``reconstruction_error``,
    ‖z − D(E(z))‖² of the standardised row z. ``inverse_transform`` is the decoder.
    Inputs are standardised with the training means and standard deviations (stored);
    a constant column becomes 0 and stays 0. Training is deterministic given
    ``random_state``, on any number of threads (tested on one and two).

    Parameters
    ----------
    n_components : int, default=2
        Embedding dimension d (below the number of input columns).
    layers : tuple of int, default=(128,)
        Widths of the encoder's hidden layers; the decoder mirrors them. ``()`` gives a
        linear map each way (with ``activation="identity"``, PCA's subspace).
    activation : {"relu", "tanh", "sigmoid", "identity"}, default="relu"
        Activation of the hidden layers; the code and output layers are linear.
    epochs : int, default=100
        Most passes over the training points.
    batch_size : int, default=128
        Points per Adam step.
    learning_rate : float, default=1e-3
        Adam's step size. A loss that stops being finite raises ``ValueError`` naming
        the epoch and this value.
    validation_fraction : float, default=0.1
        Share of the points held out for early stopping; the weights of the best
        validation epoch are kept. 0: every point trains, the last weights are kept.
    patience : int, default=10
        Epochs without a better validation loss before training stops.
    random_state : int, default=0
        Seed of the weights, the split, the batches (and the VAE's noise).
    precision : {"float64", "float32"}, default="float64"
        Floating-point type of training (data, weights, gradients, Adam's moments).
        ``"float32"`` is about twice as fast, with float32's rounding in training; the
        model, the embedding and ``transform`` are float64 either way (float32 weights
        widen exactly), and training stays deterministic given ``random_state``.

    Attributes
    ----------
    embedding_ : ndarray of shape (n_samples, n_components)
    loss_curve_ : ndarray
        Mean training loss per point of every epoch run.
    validation_loss_curve_ : ndarray or None
        Mean validation loss per point of every epoch run.
    best_epoch_ : int
        The epoch (1-based) whose weights were kept.
    n_iter_ : int
        Epochs run.

    Examples
    --------
    >>> import oose
    >>> X = oose.datasets.s_curve(300, random_state=0)
    >>> est = oose.Autoencoder(layers=(16,), epochs=20).fit(X[:250])
    >>> est.transform(X[250:]).shape
    (50, 2)
    """

    _method = "autoencoder"

    def __init__(
        self,
        n_components=2,
        *,
        layers=(128,),
        activation="relu",
        epochs=100,
        batch_size=128,
        learning_rate=1e-3,
        validation_fraction=0.1,
        patience=10,
        random_state=0,
        precision="float64",
        n_jobs=None,
        verbose=False,
    ):
        self.n_components = n_components
        self.layers = layers
        self.activation = activation
        self.epochs = epochs
        self.batch_size = batch_size
        self.learning_rate = learning_rate
        self.validation_fraction = validation_fraction
        self.patience = patience
        self.random_state = random_state
        self.precision = precision
        self.n_jobs = n_jobs
        self.verbose = verbose

    def _core_params(self) -> dict:
        out = super()._core_params()
        layers = out["layers"]
        if isinstance(layers, numbers.Integral):
            layers = (layers,)
        try:
            widths = [int(w) for w in layers]
        except (TypeError, ValueError):
            raise ValueError(f"layers: expected a sequence of ints, got {layers!r}") from None
        if any(w < 0 for w in widths):
            raise ValueError(f"layers: widths must be positive, got {widths}")
        out["layers"] = ",".join(str(w) for w in widths)
        return out

    def _fitted(self, model, annotate=True):
        super()._fitted(model, annotate)
        self.loss_curve_ = np.atleast_1d(np.asarray(self.info_["loss_curve"], dtype=np.float64))
        val = self.info_.get("validation_curve")
        self.validation_loss_curve_ = (
            None if val is None else np.atleast_1d(np.asarray(val, dtype=np.float64))
        )
        self.best_epoch_ = int(self.info_["best_epoch"])
        self.n_iter_ = int(self.info_["epochs_run"])

    def inverse_transform(self, X, return_diagnostics=False):
        """Maps embedding coordinates back to the input space through the decoder
        (a pre-image, in the input's units; not exact on training points: the
        reconstruction is lossy).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_components)
            Embedding coordinates.
        return_diagnostics : bool, default=False
            Also return the diagnostics dictionary (NaN columns: the decoder has no
            power function).

        Returns
        -------
        points : ndarray of shape (n_samples, n_features_in_)
        diagnostics : dict of ndarray, only with ``return_diagnostics=True``
        """
        check_is_fitted(self, "model_")
        X = check_array(X, dtype=np.float64, order="C")
        points, diag = self.model_.inverse_transform(X)
        return (points, diag) if return_diagnostics else points


class VariationalAutoencoder(Autoencoder):
    """A variational autoencoder (maths §16): the encoder gives μ(x) and log σ²(x),
    z = μ + σ ⊙ ε with ε ~ N(0, I), and the loss is the squared reconstruction error
    plus β·KL(N(μ, σ²) ‖ N(0, I)). The embedding, and ``transform``, is μ.

    ``transform(X, return_diagnostics=True)`` gives, besides ``reconstruction_error``
    (of the decoded μ), ``posterior_variance`` (the mean of σ² over the d coordinates:
    larger where the encoder is unsure) and ``negative_elbo`` (reconstruction error +
    KL at μ, the loss of the point with the noise left out).

    Parameters
    ----------
    n_components : int, default=2
        Embedding dimension d (below the number of input columns).
    layers : tuple of int, default=(128,)
        Widths of the encoder's hidden layers; the decoder mirrors them.
    activation : {"relu", "tanh", "sigmoid", "identity"}, default="relu"
        Activation of the hidden layers; the code and output layers are linear.
    epochs : int, default=100
        Most passes over the training points.
    batch_size : int, default=128
        Points per Adam step.
    learning_rate : float, default=1e-3
        Adam's step size.
    validation_fraction : float, default=0.1
        Share of the points held out for early stopping (validation loss at μ).
    patience : int, default=10
        Epochs without a better validation loss before training stops.
    beta : float, default=1.0
        Weight of the KL term (1: the ELBO).
    random_state : int, default=0
        Seed of the weights, the split, the batches and the noise.
    precision : {"float64", "float32"}, default="float64"
        Floating-point type of training (data, weights, gradients, Adam's moments).
        ``"float32"`` is about twice as fast, with float32's rounding in training; the
        model, the embedding and ``transform`` are float64 either way (float32 weights
        widen exactly), and training stays deterministic given ``random_state``.

    Attributes
    ----------
    embedding_ : ndarray of shape (n_samples, n_components)
    loss_curve_ : ndarray
        Mean training loss per point of every epoch run.
    validation_loss_curve_ : ndarray or None
        Mean validation loss per point of every epoch run.
    best_epoch_ : int
        The epoch (1-based) whose weights were kept.
    n_iter_ : int
        Epochs run.

    Examples
    --------
    >>> import oose
    >>> X = oose.datasets.s_curve(300, random_state=0)
    >>> est = oose.VariationalAutoencoder(layers=(16,), epochs=20).fit(X[:250])
    >>> Y, diag = est.transform(X[250:], return_diagnostics=True)
    >>> diag["posterior_variance"].shape
    (50,)
    """

    _method = "vae"

    def __init__(
        self,
        n_components=2,
        *,
        layers=(128,),
        activation="relu",
        epochs=100,
        batch_size=128,
        learning_rate=1e-3,
        validation_fraction=0.1,
        patience=10,
        beta=1.0,
        random_state=0,
        precision="float64",
        n_jobs=None,
        verbose=False,
    ):
        super().__init__(
            n_components,
            layers=layers,
            activation=activation,
            epochs=epochs,
            batch_size=batch_size,
            learning_rate=learning_rate,
            validation_fraction=validation_fraction,
            patience=patience,
            random_state=random_state,
            precision=precision,
            n_jobs=n_jobs,
            verbose=verbose,
        )
        self.beta = beta
