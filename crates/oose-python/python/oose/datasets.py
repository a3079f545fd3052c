"""The built-in synthetic data sets of maths §10, deterministic given the seed (the same
generator as ``oose dataset`` on the command line)."""

import inspect
import operator

from . import _oose
from ._base import _seed

_PARAM_DOC = {
    "n": "    n : int\n        Number of points.\n",
    "noise": "    noise : float, default=0.0\n        Standard deviation of Gaussian noise added to every coordinate.\n",
    "random_state": "    random_state : int, RandomState, Generator or None, default=0\n        Seed, as the estimators take it (an int: the data are a function of it).\n",
    "hole": "    hole : bool, default=False\n        Remove a rectangle from the roll's parameter domain.\n",
}


def _documented(f):
    """Appends the Parameters and Returns sections built from ``f``'s signature."""
    names = inspect.signature(f).parameters
    f.__doc__ = (
        f.__doc__.rstrip()
        + "\n\n    Parameters\n    ----------\n"
        + "".join(_PARAM_DOC[k] for k in names)
        + "\n    Returns\n    -------\n    X : ndarray of shape (n, 3)\n"
    )
    return f


def _count(n):
    """``n`` as an int ≥ 1 (2 and 2.0 are whole; 2.5, True and -1 are refused, naming
    ``n``)."""
    try:
        k = operator.index(n)
    except TypeError:
        k = n if isinstance(n, float) and n.is_integer() else None
    if k is None or isinstance(n, bool) or not 1 <= k <= 2**64 - 1:
        raise ValueError(f"n: expected a whole number ≥ 1, got {n!r}")
    return int(k)


def _make(name, n, noise=0.0, random_state=0):
    return _oose.dataset(name, _count(n), noise=float(noise), seed=_seed(random_state))


@_documented
def swiss_roll(n, noise=0.0, random_state=0, hole=False):
    """(t cos t, h, t sin t), t = 1.5π(1 + 2u), h = 21v (scikit-learn's definition)."""
    return _make("swiss_roll_hole" if hole else "swiss_roll", n, noise, random_state)


@_documented
def s_curve(n, noise=0.0, random_state=0):
    """(sin t, 2v, sign(t)(cos t − 1)), t = 3π(u − ½) (scikit-learn's definition)."""
    return _make("s_curve", n, noise, random_state)


@_documented
def punched_sphere(n):
    """Wittman's punctured sphere (deterministic grid)."""
    return _make("punched_sphere", n)


@_documented
def three_d_clusters(n, random_state=0):
    """Three Gaussian clusters joined by bridge points (n ≥ 21)."""
    return _make("three_d_clusters", n, 0.0, random_state)


@_documented
def helix(n):
    """((2 + cos 8t) cos t, (2 + cos 8t) sin t, sin 8t)."""
    return _make("helix", n)


@_documented
def trefoil(n):
    """The trefoil knot."""
    return _make("trefoil", n)


@_documented
def twin_peaks(n, random_state=0):
    """(x, y, 10 sin(πx) tanh(3y)) on [−1, 1]²."""
    return _make("twin_peaks", n, 0.0, random_state)


@_documented
def circle_s1(n, random_state=0):
    """Uniform angles on the unit circle."""
    return _make("circle_s1", n, 0.0, random_state)
