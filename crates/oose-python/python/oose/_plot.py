"""``oose.plot``: the picture of an out-of-sample extension (matplotlib, optional)."""

from __future__ import annotations

import numpy as np
from sklearn.utils.validation import check_is_fitted


def plot(estimator, X=None, *, color="novelty_pvalue", log10=False, ax=None, cmap="viridis"):
    """Draws the training embedding in grey and the new points ``X`` coloured by a
    per-point diagnostic, with a colour bar (``oose plot`` on the command line).

    Parameters
    ----------
    estimator : fitted oose transformer
        Its ``embedding_`` is drawn (first two columns) in grey.
    X : array-like of shape (n_samples, n_features), optional
        New points: extended with ``transform(X, return_diagnostics=True)`` and drawn
        coloured by ``color``. Without it only the training embedding is drawn.
    color : str, default="novelty_pvalue"
        The diagnostic that colours the new points (a key of the diagnostics:
        ``novelty_pvalue``, ``novelty``, ``residual``, ``reconstruction_error``, …).
    log10 : bool, default=False
        Colour by log10 of the values (p-values and residuals spanning decades).
    ax : matplotlib Axes, optional
        Where to draw (default: a new figure's).
    cmap : str, default="viridis"
        Colour map of the new points.

    Returns
    -------
    ax : matplotlib Axes

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import oose
    >>> X = oose.datasets.swiss_roll(1200, noise=0.05, random_state=0)
    >>> est = oose.Isomap(n_neighbors=10).fit(X[:1000])
    >>> ax = oose.plot(est, X[1000:], color="novelty_pvalue")
    >>> ax.get_xlabel()
    'isomap0'
    """
    try:
        import matplotlib.pyplot as plt
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError("oose.plot needs matplotlib: pip install matplotlib") from e
    check_is_fitted(estimator, "model_")
    emb = np.asarray(estimator.embedding_)
    if emb.shape[1] < 2:
        raise ValueError(
            f"a {emb.shape[1]}-component embedding has no plane to draw "
            f"(fit with n_components >= 2)"
        )
    if ax is None:
        _, ax = plt.subplots(figsize=(7, 5.5))
    ax.scatter(emb[:, 0], emb[:, 1], s=4, c="#b9b9b9", label="training points")
    if X is not None:
        coords, diag = estimator.transform(X, return_diagnostics=True)
        coords = np.asarray(coords)
        if color not in diag:
            raise ValueError(
                f"color: no diagnostic {color!r}; this estimator gives {', '.join(diag)}"
            )
        values = np.asarray(diag[color], dtype=np.float64)
        label = color
        if log10:
            values = np.log10(np.maximum(values, 1e-300))
            label = f"log10 {color}"
        points = ax.scatter(
            coords[:, 0], coords[:, 1], s=18, c=values, cmap=cmap, label="new points"
        )
        ax.figure.colorbar(points, ax=ax, label=label)
    names = estimator.get_feature_names_out() if hasattr(estimator, "get_feature_names_out") else None
    ax.set_xlabel(names[0] if names is not None else "component 1")
    ax.set_ylabel(names[1] if names is not None else "component 2")
    ax.legend(loc="upper right")
    return ax
