"""The built-in synthetic data sets of maths §10, deterministic given the seed (the same
generator as ``oose dataset`` on the command line)."""

from . import _oose


def _make(name, n, noise=0.0, random_state=0):
    return _oose.dataset(name, int(n), noise=float(noise), seed=int(random_state))


def swiss_roll(n, noise=0.0, random_state=0, hole=False):
    """(t cos t, h, t sin t), t = 1.5π(1 + 2u), h = 21v (scikit-learn's definition)."""
    return _make("swiss_roll_hole" if hole else "swiss_roll", n, noise, random_state)


def s_curve(n, noise=0.0, random_state=0):
    """(sin t, 2v, sign(t)(cos t − 1)), t = 3π(u − ½) (scikit-learn's definition)."""
    return _make("s_curve", n, noise, random_state)


def punched_sphere(n):
    """Wittman's punctured sphere (deterministic grid)."""
    return _make("punched_sphere", n)


def three_d_clusters(n, random_state=0):
    """Three Gaussian clusters joined by bridge points (n ≥ 21)."""
    return _make("three_d_clusters", n, 0.0, random_state)


def helix(n):
    """((2 + cos 8t) cos t, (2 + cos 8t) sin t, sin 8t)."""
    return _make("helix", n)


def trefoil(n):
    """The trefoil knot."""
    return _make("trefoil", n)


def twin_peaks(n, random_state=0):
    """(x, y, 10 sin(πx) tanh(3y)) on [−1, 1]²."""
    return _make("twin_peaks", n, 0.0, random_state)


def circle_s1(n, random_state=0):
    """Uniform angles on the unit circle."""
    return _make("circle_s1", n, 0.0, random_state)
