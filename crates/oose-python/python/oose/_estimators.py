"""The scikit-learn estimators: one per method of the Rust core.

Parameters keep the names and spellings of docs/maths.md and of the command line
(``epsilon="auto"``, ``solver="low-rank"``, ``landmarks="max-min"``), except that the
seed of random choices is ``random_state`` as everywhere in scikit-learn (an int).
"""

from __future__ import annotations

import numpy as np
from sklearn.base import ClusterMixin, RegressorMixin
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import _num_samples, check_array, check_is_fitted, validate_data

from . import _oose
from ._base import OoseEstimator, OoseTransformerMixin, _aligned


class _StrategyOption:
    """Inner-product embeddings extend by ``strategy`` (projection or restricted)."""

    def _extend_options(self):
        return {"strategy": self.strategy}


class _Embedding(OoseTransformerMixin, OoseEstimator):
    """An embedding method: ``fit``, ``transform``, ``fit_transform`` and, where the
    model keeps its training points, ``inverse_transform``."""

    #: whether the method's models keep the training points a pre-image is built from
    _has_preimage = True

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.transformer_tags.preserves_dtype = ["float64"]
        return tags

    @available_if(lambda self: self._has_preimage)
    def inverse_transform(self, X, return_diagnostics=False):
        """Maps embedding coordinates back to the input space (a pre-image).

        Each row is placed by kernel interpolation on its 10 nearest training embedding
        points (a Gaussian kernel at the embedding's own neighbour scale, with a
        constant term, maths §8 and §13): a training embedding point gives back its
        training point exactly, and in between the result is a smooth blend of nearby
        training points. Rows are independent of the batch. With
        ``metric="cosine"`` or ``"correlation"`` the result is a unit direction (the
        space the model compares points in, maths §19). A model fitted on a kernel or
        proximity matrix, or Isomap with ``largest_component=True``, has no training
        points to map back to and raises ``ValueError``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_components)
            Embedding coordinates.
        return_diagnostics : bool, default=False
            Also return ``residual``, the interpolation's power function (0 on the
            training embedding, rising away from it, above 1 far from it: a pre-image
            there is a blend of distant points, not a reconstruction) and
            ``reconstruction_error``, the distance to the nearest training embedding
            point in units of the embedding's neighbour scale.

        Returns
        -------
        points : ndarray of shape (n_samples, n_features_in_)
        diagnostics : dict of ndarray, only with ``return_diagnostics=True``
        """
        check_is_fitted(self, "model_")
        X = check_array(X, dtype=np.float64, order="C")
        points, diag = self.model_.inverse_transform(X)
        return (points, diag) if return_diagnostics else points


class KernelPCA(_StrategyOption, _Embedding):
    """Kernel PCA with Nyström extension and the residual kernel per new point
    (maths §3–4).

    Parameters
    ----------
    n_components : int, default=2
        Embedding dimension d.
    kernel : str, default="gaussian"
        ``gaussian`` exp(−r²/ε), ``laplacian`` exp(−r/ε), ``inverse_multiquadric``,
        ``multiquadric``, ``wendland``, ``linear``, ``polynomial`` or ``precomputed``
        (then ``X`` is the N×N kernel matrix in ``fit`` and the M×N rows k(z, xᵢ) in
        ``transform``).
    epsilon : float or "auto", default="auto"
        Bandwidth ε (scikit-learn's ``gamma`` = 1/ε for the gaussian kernel); ``"auto"``
        is the median rule; the value used is in ``info_["epsilon"]``.
    beta : float, optional
        Exponent of the (inverse) multiquadric kernel (defaults ½ and −½).
    gamma : float, optional
        γ of the polynomial kernel (γ xᵀy + c)^p (default 1). For the ``gaussian`` and
        ``laplacian`` kernels, scikit-learn's spelling of the bandwidth: ε = 1/γ (then
        leave ``epsilon="auto"``; giving both is an error, as is ``gamma`` with any
        other kernel).
    coef0, degree : float, int, default=1.0, 3
        c and p of the polynomial kernel.
    centering : bool, default=True
        Double-centre K (``False``: the uncentred Mercer form).
    solver : str, default="auto"
        ``auto``, ``dense``, ``lanczos`` or ``low-rank``.
    rank_tolerance : float, default=1e-12
        Relative tolerance below which eigenvalues and pivots count as zero.
    strategy : str, default="projection"
        Extension: ``projection`` (Nyström) or ``restricted`` (Trosset–Priebe
        restricted reconstruction, centred kernels only).
    extension : str, default="exact"
        How ``transform`` computes kernel rows (maths §20): ``exact`` (against every
        training point), ``low-rank`` (through the fit's pivots, ``residual_rank`` of
        them; the diagnostics gain ``lowrank_bound``, a bound on the distance to the
        exact coordinates) or ``auto`` (per row: low-rank where its bound is at most
        ``lowrank_tolerance`` × the embedding's largest absolute coordinate, else
        exact, with bound 0). Positive definite kernels only; projection only.
    lowrank_tolerance : float, optional
        The relative bound of ``extension="auto"`` (default 1e-8); an error with the
        other choices.
    n_landmarks : int, optional
        A Nyström fit through ``n_landmarks`` landmarks (maths §21; the model is
        ``kpca-nystrom``): memory O(r² + chunk) whatever N, every point (training or
        new) placed from its r kernel values; :meth:`fit_chunks` streams data larger
        than memory, :func:`oose.dask.fit_kernel_pca` runs it on a cluster. ``None``
        (default): the exact fit on all N points. ``solver`` must stay ``"auto"`` and
        ``extension`` ``"exact"`` with landmarks.
    landmarks : str, default="p-greedy"
        With ``n_landmarks``: ``p-greedy`` (largest power function first: the pivots
        of the kernel's pivoted Cholesky factorisation), ``random`` or ``max-min``,
        chosen on a uniform sample of ``landmark_sample`` rows.
    landmark_sample : int, default=10000
        With ``n_landmarks``: rows of the uniform sample the landmark choice, ε =
        ``"auto"`` and the novelty score use when N is larger.
    random_state : int, RandomState, Generator or None, default=0
        With ``n_landmarks``: seed of the sample and of random and max-min landmarks.

    Notes
    -----
    With ``n_landmarks``, ``info_["n_landmarks"]`` is the number of landmarks kept
    (landmarks the kernel cannot tell apart at ``rank_tolerance`` are dropped) and
    ``info_["missed_trace"]`` the share of the kernel's trace over the training rows
    that they miss (0: the Nyström kernel is exact there), measured on the uniform
    sample of ``landmark_sample`` rows (every row when there are no more). Its
    ``embedding_`` equals ``transform`` of the training rows to rounding (about 1e-15
    relative), not bit for bit: the fit's pass over all rows computes its kernel values
    with fewer roundings (maths §21).

    Examples
    --------
    >>> import oose
    >>> X = oose.datasets.swiss_roll(500, noise=0.05, random_state=0)
    >>> est = oose.KernelPCA(n_components=2).fit(X[:450])
    >>> Y, diag = est.transform(X[450:], return_diagnostics=True)
    >>> Y.shape, bool((diag["residual"] <= diag["reconstruction_error"] + 1e-9).all())
    ((50, 2), True)
    """

    _method = "kpca"

    def __init__(
        self,
        n_components=2,
        *,
        kernel="gaussian",
        epsilon="auto",
        beta=None,
        gamma=None,
        coef0=1.0,
        degree=3,
        centering=True,
        solver="auto",
        rank_tolerance=1e-12,
        strategy="projection",
        extension="exact",
        lowrank_tolerance=None,
        n_landmarks=None,
        landmarks="p-greedy",
        landmark_sample=10000,
        random_state=0,
        n_jobs=None,
        verbose=False,
    ):
        self.n_components = n_components
        self.kernel = kernel
        self.epsilon = epsilon
        self.beta = beta
        self.gamma = gamma
        self.coef0 = coef0
        self.degree = degree
        self.centering = centering
        self.solver = solver
        self.rank_tolerance = rank_tolerance
        self.strategy = strategy
        self.extension = extension
        self.lowrank_tolerance = lowrank_tolerance
        self.n_landmarks = n_landmarks
        self.landmarks = landmarks
        self.landmark_sample = landmark_sample
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.verbose = verbose

    #: the exact fit, and the Nyström fit with ``n_landmarks``
    _methods = ("kpca", "kpca-nystrom")

    def _pairwise(self):
        return self.kernel == "precomputed"

    def _core_params(self):
        """Without ``n_landmarks`` the exact fit's parameters; with it the Nyström
        fit's (``solver`` left out at its default, refused by name otherwise)."""
        out = super()._core_params()
        if self.n_landmarks is None:
            # Not read by the exact fit, but checked as the Nyström fit would (a
            # misspelt landmark choice is an error, not a value kept for later).
            landmark_only = ("n_landmarks", "landmarks", "landmark_sample", "seed")
            unused = {k: out.pop(k) for k in landmark_only if k in out}
            unused.pop("n_landmarks", None)
            _oose.check_params("kpca-nystrom", unused)
            return out
        if self.solver != "auto":
            raise ValueError(
                f"solver: the Nyström fit (n_landmarks={self.n_landmarks}) solves an r×r "
                f"eigenproblem and has no solver choice; leave solver='auto', got {self.solver!r}"
            )
        out.pop("solver")
        return out

    def fit_chunks(self, chunks):
        """The Nyström fit (``n_landmarks`` set) on data given in chunks of rows:
        memory O(r² + chunk) in the core, whatever the number of rows.

        The chunks are read three times (a uniform sample for the landmarks, the
        sums, the embedding; a callable once more first, to count the rows), so
        ``chunks`` must be re-iterable: a list of arrays, or a callable returning a
        fresh iterator of arrays (e.g. reading a file). The
        model equals ``fit`` of the stacked rows (to rounding); ``embedding_`` holds
        the training embedding (N×d).

        Parameters
        ----------
        chunks : iterable of array-like, or callable returning one
            Arrays of shape (n_i, n_features), in row order (an empty one adds
            nothing).

        Returns
        -------
        self : object
        """
        from ._nystrom import fit_chunks

        return fit_chunks(self, chunks)

    def _extend_options(self):
        return {
            "strategy": self.strategy,
            "extension": self.extension,
            "lowrank_tolerance": self.lowrank_tolerance,
        }


    def transform(self, X, return_diagnostics=False, alpha=None, kernel_diagonal=None):
        """Embeds the rows of ``X`` (see ``OoseTransformerMixin.transform``).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            New points, or their kernel rows against the training points for
            ``kernel="precomputed"``.
        return_diagnostics : bool, default=False
            Also return the per-row diagnostics (a dict, or a DataFrame when a
            DataFrame output is configured).
        alpha : float, optional
            Level of ``is_novel`` for this call (default: the model's, 0.01).
        kernel_diagonal : array-like of shape (n_samples,), optional
            For a precomputed kernel, the values k(z, z), one per row: enables the
            residual.

        Returns
        -------
        coordinates : ndarray of shape (n_samples, n_components)
        diagnostics : dict of ndarray, only with ``return_diagnostics=True``
        """
        if kernel_diagonal is None:
            return self._transform(X, return_diagnostics, alpha)
        n = _num_samples(X)
        diag = _aligned(np.asarray(kernel_diagonal, dtype=np.float64).reshape(-1))
        if diag.shape[0] != n:
            raise ValueError(
                f"kernel_diagonal: expected {n} values (one per row of X), "
                f"got {diag.shape[0]}"
            )
        return self._transform(X, return_diagnostics, alpha, kernel_diagonal=diag)


class ClassicalMDS(_StrategyOption, _Embedding):
    """Classical (Torgerson–Gower) MDS with projection or restricted reconstruction of
    new objects (maths §5).

    Parameters
    ----------
    n_components : int, default=2
    input : str, default="points"
        What ``X`` is: ``points`` (N×D), or an N×N matrix of ``squared-dissimilarities``,
        ``dissimilarities`` or ``similarities``; ``transform`` then takes each new
        object's row of the same kind against the N training objects.
    solver : str, default="auto"
        ``auto``, ``dense`` or ``lanczos`` (``auto``: dense up to 1000 objects, Lanczos
        above when few components are asked for).
    rank_tolerance : float, default=1e-12
    strategy : str, default="projection"
        ``projection`` (Gower) or ``restricted`` (Trosset–Priebe: moves an object that
        sticks out of the representation space out of the projection). Joint restricted
        reconstruction of several objects: ``est.model_.extend_joint(X, mutual=...)``.

    Examples
    --------
    >>> import numpy as np, oose
    >>> d2 = np.array([[0, 100, 45, 45], [100, 0, 45, 45], [45, 45, 0, 64], [45, 45, 64, 0.]])
    >>> est = oose.ClassicalMDS(input="squared-dissimilarities", strategy="restricted").fit(d2)
    >>> y = est.transform([[386, 386, 457, 457.]])  # [Trosset 2025] Example 2
    >>> round(float(np.abs(y).max()), 4)
    19.1833
    """

    _method = "mds"

    def __init__(
        self,
        n_components=2,
        *,
        input="points",
        solver="auto",
        rank_tolerance=1e-12,
        strategy="projection",
        n_jobs=None,
        verbose=False,
    ):
        self.n_components = n_components
        self.input = input
        self.solver = solver
        self.rank_tolerance = rank_tolerance
        self.strategy = strategy
        self.n_jobs = n_jobs
        self.verbose = verbose

    def _pairwise(self):
        return self.input != "points"



class LandmarkMDS(_StrategyOption, _Embedding):
    """Landmark MDS (maths §6): classical MDS on n landmarks, every other point placed
    by projection; no N×N matrix is formed.

    Parameters
    ----------
    n_components : int, default=2
    n_landmarks : int, default=500
        Number of landmarks (at most the number of training points).
    landmarks : str, default="max-min"
        ``max-min`` (farthest point), ``random`` or ``p-greedy`` (largest power
        function of the gaussian kernel at ε = auto first, on a sample of 10000 rows
        for larger N; may stop before ``n_landmarks`` where the kernel's numerical
        rank is lower, maths §21).
    random_state : int, RandomState, Generator or None, default=0
        Seed of the landmark choice: an int is the seed (the result is deterministic given it);
        ``None`` draws a fresh seed from the operating system's entropy, a
        ``RandomState`` or ``Generator`` one from its stream; ``seed_`` holds the seed
        used.
    solver : str, default="auto"
        ``auto``, ``dense`` or ``lanczos`` (``auto``: dense up to 1000 objects, Lanczos
        above when few components are asked for).
    strategy : str, default="projection"

    Examples
    --------
    >>> import oose
    >>> X = oose.datasets.swiss_roll(3000, random_state=0)
    >>> est = oose.LandmarkMDS(n_landmarks=100).fit(X)
    >>> est.transform(X[:5]).shape
    (5, 2)
    """

    _has_preimage = False
    _method = "landmark-mds"

    def __init__(
        self,
        n_components=2,
        *,
        n_landmarks=500,
        landmarks="max-min",
        random_state=0,
        solver="auto",
        strategy="projection",
        n_jobs=None,
        verbose=False,
    ):
        self.n_components = n_components
        self.n_landmarks = n_landmarks
        self.landmarks = landmarks
        self.random_state = random_state
        self.solver = solver
        self.strategy = strategy
        self.n_jobs = n_jobs
        self.verbose = verbose



class Isomap(_StrategyOption, _Embedding):
    """Isomap (maths §6): kNN graph, geodesics by Dijkstra, classical MDS; new points
    through their k nearest training points, then projection or restricted
    reconstruction.

    Parameters
    ----------
    n_components : int, default=2
    n_neighbors : int, default=10
        Nearest neighbours of the graph, the point itself not counted. One at or above
        the number of training points N is lowered to N − 1 with a ``FitWarning``
        (umap-learn's rule); ``get_params`` keeps the value asked for.
    solver : str, default="auto"
        ``auto``, ``dense`` or ``lanczos`` (``auto``: dense up to 1000 objects, Lanczos
        above when few components are asked for).
    largest_component : bool, default=False
        On a disconnected kNN graph, embed the largest connected component only (the
        other points are extended). The default joins every pair of components by an
        edge between their closest points (scikit-learn's rule) and issues an
        ``oose.FitWarning`` naming the component sizes.
    rank_tolerance : float, default=1e-12
    strategy : str, default="projection"

    Examples
    --------
    >>> import oose
    >>> X = oose.datasets.swiss_roll(1000, random_state=0)
    >>> est = oose.Isomap(n_neighbors=10).fit(X[:900])
    >>> est.transform(X[900:]).shape
    (100, 2)
    """

    _method = "isomap"

    def __init__(
        self,
        n_components=2,
        *,
        n_neighbors=10,
        solver="auto",
        largest_component=False,
        rank_tolerance=1e-12,
        strategy="projection",
        metric="euclidean",
        n_jobs=None,
        verbose=False,
    ):
        self.n_components = n_components
        self.n_neighbors = n_neighbors
        self.solver = solver
        self.largest_component = largest_component
        self.rank_tolerance = rank_tolerance
        self.strategy = strategy
        self.metric = metric
        self.n_jobs = n_jobs
        self.verbose = verbose



class DiffusionMaps(_Embedding):
    """Diffusion maps with exact Nyström extension (maths §7).

    Parameters
    ----------
    n_components : int, default=2
    epsilon : float or str, default="auto"
        Bandwidth of exp(−r²/ε): a float, ``"auto"`` (median rule), ``"log-slope"``
        (Berry–Giannakis–Harlim) or ``float("inf")`` (w = 1 on the graph).
    sparsity : str, default="knn"
        ``knn`` (symmetric rule; the mirror rule for new points), ``threshold`` or
        ``dense``.
    n_neighbors : int, default=25
        Nearest neighbours of the graph, the point itself not counted. One at or above
        the number of training points N is lowered to N − 1 with a ``FitWarning``
        (umap-learn's rule); ``get_params`` keeps the value asked for.
    threshold : float, optional
        η of ``sparsity="threshold"``.
    alpha : float, default=1.0
        α-normalisation: 0 graph Laplacian, ½ Fokker–Planck, 1 Laplace–Beltrami.
    t : float, default=1.0
        Diffusion time.
    output : str, default="diffusion"
        ``diffusion``, ``standard``, ``weighted`` or ``normalized``.
    solver : str, default="auto"
        ``auto``, ``dense``, ``lanczos`` or ``shift-invert`` (kNN and threshold graphs;
        ``auto`` takes it above 1000 points).
    density : str, default="training"
        Density of new points: ``training`` (sample-wise, exact on training points) or
        ``union`` (of X ∪ Z; rows of one ``transform`` call are then coupled).
    on_isolated : str, default="error"
        A new point without neighbour: ``error``, or ``nan`` (NaN row and an
        ``isolated`` diagnostic).
    residual : bool, optional
        Compute the residual diagnostic (default: for dense kernels).
    rank_tolerance : float, default=1e-12
        Relative tolerance of the eigensolver's rank decisions and of the pivoted
        Cholesky factorisations (the residual's, and the gaussian kernel's behind
        ``extension="low-rank"``).
    extension : str, default="exact"
        How ``transform`` computes kernel rows (maths §20; dense kernels with the
        training density): ``exact`` (against every training point), ``low-rank``
        (through the pivots of the gaussian kernel's pivoted Cholesky factorisation;
        the diagnostics gain ``lowrank_bound``, a bound on the distance to the exact
        coordinates; rows that cannot be certified are extended exactly) or ``auto``
        (per row: low-rank where its bound is at most ``lowrank_tolerance`` × the
        embedding's largest absolute coordinate, else exact, with bound 0).
    lowrank_tolerance : float, optional
        The relative bound of ``extension="auto"`` (default 1e-8); an error with the
        other choices.

    Examples
    --------
    >>> import oose
    >>> X = oose.datasets.s_curve(1000, random_state=0)
    >>> est = oose.DiffusionMaps(n_neighbors=25).fit(X[:900])
    >>> est.transform(X[900:]).shape
    (100, 2)
    """

    _method = "dmaps"

    def __init__(
        self,
        n_components=2,
        *,
        epsilon="auto",
        sparsity="knn",
        n_neighbors=25,
        threshold=None,
        alpha=1.0,
        t=1.0,
        output="diffusion",
        solver="auto",
        density="training",
        on_isolated="error",
        residual=None,
        rank_tolerance=1e-12,
        metric="euclidean",
        extension="exact",
        lowrank_tolerance=None,
        n_jobs=None,
        verbose=False,
    ):
        self.n_components = n_components
        self.epsilon = epsilon
        self.sparsity = sparsity
        self.n_neighbors = n_neighbors
        self.threshold = threshold
        self.alpha = alpha
        self.t = t
        self.output = output
        self.solver = solver
        self.density = density
        self.on_isolated = on_isolated
        self.residual = residual
        self.rank_tolerance = rank_tolerance
        self.metric = metric
        self.extension = extension
        self.lowrank_tolerance = lowrank_tolerance
        self.n_jobs = n_jobs
        self.verbose = verbose


    def _extend_options(self):
        return {
            "density": self.density,
            "on_isolated": self.on_isolated,
            "extension": self.extension,
            "lowrank_tolerance": self.lowrank_tolerance,
        }


class LaplacianEigenmaps(_Embedding):
    """Laplacian eigenmaps ψⱼ/ψ₀ with exact Nyström extension (maths §7).

    ``laplacian_eigenvalues_`` holds 1 − λ.

    Parameters
    ----------
    n_components : int, default=2
    epsilon, sparsity, n_neighbors, threshold, alpha, solver, rank_tolerance, on_isolated
        As for :class:`DiffusionMaps` (the parameters that define the kernel), with
        ``n_neighbors=10`` and ``alpha=0.0`` by default.

    Examples
    --------
    >>> import oose
    >>> X = oose.datasets.swiss_roll(800, random_state=1)
    >>> est = oose.LaplacianEigenmaps(n_neighbors=10).fit(X)
    >>> est.transform(X[:3]).shape
    (3, 2)
    """

    _method = "eigenmaps"

    def __init__(
        self,
        n_components=2,
        *,
        epsilon="auto",
        sparsity="knn",
        n_neighbors=10,
        threshold=None,
        alpha=0.0,
        solver="auto",
        on_isolated="error",
        rank_tolerance=1e-12,
        metric="euclidean",
        n_jobs=None,
        verbose=False,
    ):
        self.n_components = n_components
        self.epsilon = epsilon
        self.sparsity = sparsity
        self.n_neighbors = n_neighbors
        self.threshold = threshold
        self.alpha = alpha
        self.solver = solver
        self.on_isolated = on_isolated
        self.rank_tolerance = rank_tolerance
        self.metric = metric
        self.n_jobs = n_jobs
        self.verbose = verbose


    def _fitted(self, model, annotate=True):
        super()._fitted(model, annotate)
        self.laplacian_eigenvalues_ = 1.0 - self.eigenvalues_


class SpectralClustering(
    OoseTransformerMixin, ClusterMixin, OoseEstimator
):
    """Spectral clustering (Ng–Jordan–Weiss) whose clusters extend to new points
    (maths §7): ``predict`` extends a point and assigns it to the nearest centroid.

    Parameters
    ----------
    n_clusters : int, default=2
    epsilon, sparsity, n_neighbors, threshold, alpha : see :class:`DiffusionMaps`
        (defaults ``n_neighbors=10``, ``alpha=0.0``).
    solver : str, default="auto"
        ``auto``, ``dense``, ``lanczos`` or ``shift-invert`` (kNN and threshold graphs;
        ``auto`` takes it above 1000 points).
    random_state : int, RandomState, Generator or None, default=0
        Seed of k-means++: an int is the seed (the result is deterministic given it);
        ``None`` draws a fresh seed from the operating system's entropy, a
        ``RandomState`` or ``Generator`` one from its stream; ``seed_`` holds the seed
        used.
    n_init : int, default=10
        k-means restarts.
    on_isolated : str, default="error"

    Attributes
    ----------
    labels_ : ndarray of int
        Cluster of each training point.
    embedding_ : ndarray
        The unit-length spectral rows the clusters were found in (``transform`` gives
        them for new points).

    Examples
    --------
    >>> import numpy as np, oose
    >>> rng = np.random.default_rng(0)
    >>> X = np.vstack([rng.normal(0, 0.3, (100, 2)), rng.normal(3, 0.3, (100, 2))])
    >>> est = oose.SpectralClustering(n_clusters=2, sparsity="dense").fit(X)
    >>> int(est.predict([[3.1, 2.9]])[0]) == int(est.labels_[150])
    True
    """

    _method = "spectral-clustering"

    def __init__(
        self,
        n_clusters=2,
        *,
        epsilon="auto",
        sparsity="knn",
        n_neighbors=10,
        threshold=None,
        alpha=0.0,
        solver="auto",
        random_state=0,
        n_init=10,
        on_isolated="error",
        metric="euclidean",
        n_jobs=None,
        verbose=False,
    ):
        self.n_clusters = n_clusters
        self.epsilon = epsilon
        self.sparsity = sparsity
        self.n_neighbors = n_neighbors
        self.threshold = threshold
        self.alpha = alpha
        self.solver = solver
        self.random_state = random_state
        self.n_init = n_init
        self.on_isolated = on_isolated
        self.metric = metric
        self.n_jobs = n_jobs
        self.verbose = verbose


    def _fitted(self, model, annotate=True):
        super()._fitted(model, annotate)
        self.labels_ = np.asarray(model.labels(), dtype=np.intp)

    def predict(self, X, return_diagnostics=False):
        """Cluster of each row of ``X`` (extended, then the nearest centroid). NaN rows
        (``on_isolated="nan"``) get label −1.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            New points.
        return_diagnostics : bool, default=False
            Also return the diagnostics, with the spectral rows as ``coordinates``.

        Returns
        -------
        labels : ndarray of int, shape (n_samples,)
        diagnostics : dict of ndarray, only with ``return_diagnostics=True``
        """
        coords, diag = self._extend(X)
        labels = np.nan_to_num(diag.pop("cluster"), nan=-1).astype(np.intp)
        if return_diagnostics:
            self._warn_unreachable()
            diag["coordinates"] = coords
            return labels, diag
        return labels

    def fit_predict(self, X, y=None):
        """Fits and returns ``labels_``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training points.
        y : None
            Ignored.

        Returns
        -------
        labels : ndarray of int, shape (n_samples,)
        """
        return self.fit(X, y).labels_


class KernelInterpolator(RegressorMixin, OoseEstimator):
    r"""Kernel interpolation (or regularised least squares) of any function known on
    the training points, with the power function P_X(z) of every prediction (maths §8):
    \|f(z) − f_X(z)\| ≤ P_X(z)·||f||_H.

    Parameters
    ----------
    kernel : str, default="gaussian"
        Positive definite kernels of :class:`KernelPCA`, or the conditionally positive
        definite ``multiquadric``, ``polyharmonic`` and ``thin_plate`` (with a polynomial
        tail).
    epsilon, beta, gamma, coef0, degree : see :class:`KernelPCA`
        (``beta`` is also the polyharmonic exponent, default 3).
    regularization : float, default=0.0
        ρ ≥ 0 of (K + ρI) A = F (0 interpolates).
    geometric_harmonics : float, optional
        Keep only eigenvalues ≥ δ·λ₁ (geometric harmonics).
    rank_tolerance : float, default=1e-12
        Relative tolerance of the pivoted Cholesky behind the power function (its
        pivots are those of ``extension="low-rank"``).
    extension : str, default="exact"
        How ``predict`` computes kernel rows (maths §20): ``exact`` (against every
        training point), ``low-rank`` (through the power function's pivots;
        ``predict(X, return_diagnostics=True)`` gains ``lowrank_bound``, a bound on
        ‖f_X(z) − f^P(z)‖₂) or ``auto`` (per row: low-rank where its bound is at most
        ``lowrank_tolerance`` × the training values' largest absolute value, else
        exact, with bound 0). Positive definite kernels only.
    lowrank_tolerance : float, optional
        The relative bound of ``extension="auto"`` (default 1e-8); an error with the
        other choices.

    Attributes
    ----------
    norms_squared_ : ndarray
        ||f_X||²_H per output column.

    Examples
    --------
    >>> import numpy as np, oose
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-1, 1, (200, 2))
    >>> est = oose.KernelInterpolator(kernel="thin_plate").fit(X, X[:, 0] + 2 * X[:, 1])
    >>> abs(float(est.predict([[0.3, -0.2]])[0]) - (-0.1)) < 1e-8
    True
    """

    _method = "interpolate"

    def __init__(
        self,
        *,
        kernel="gaussian",
        epsilon="auto",
        beta=None,
        gamma=None,
        coef0=1.0,
        degree=3,
        regularization=0.0,
        geometric_harmonics=None,
        rank_tolerance=1e-12,
        extension="exact",
        lowrank_tolerance=None,
        n_jobs=None,
        verbose=False,
    ):
        self.kernel = kernel
        self.epsilon = epsilon
        self.beta = beta
        self.gamma = gamma
        self.coef0 = coef0
        self.degree = degree
        self.regularization = regularization
        self.geometric_harmonics = geometric_harmonics
        self.rank_tolerance = rank_tolerance
        self.extension = extension
        self.lowrank_tolerance = lowrank_tolerance
        self.n_jobs = n_jobs
        self.verbose = verbose

    def _extend_options(self):
        return {"extension": self.extension, "lowrank_tolerance": self.lowrank_tolerance}

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        tags.target_tags.multi_output = True
        tags.target_tags.single_output = True
        return tags

    def fit(self, X, y):
        """Fits the interpolant of the values ``y`` on the rows of ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training points.
        y : array-like of shape (n_samples,) or (n_samples, n_targets)
            Values on the training points.

        Returns
        -------
        self : object
        """
        X, y = validate_data(
            self,
            X,
            y,
            dtype=np.float64,
            order="C",
            multi_output=True,
            y_numeric=True,
            ensure_min_samples=2,
        )
        self._y_1d = y.ndim == 1
        F = _aligned(y.reshape(len(y), -1))
        X = _aligned(X)
        model = self._fit_model(X, y, values=F)
        self._fitted(model, annotate=False)
        return self

    def _fitted(self, model, annotate=True):
        super()._fitted(model, annotate)
        self.norms_squared_ = np.asarray(model.norms_squared())
        if not hasattr(self, "_y_1d"):
            self._y_1d = False

    def predict(self, X, return_power_function=False, return_diagnostics=False):
        """The interpolant at the rows of ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Points to evaluate at.
        return_power_function : bool, default=False
            Also return P_X(z) per row (NaN for conditionally positive definite
            kernels).
        return_diagnostics : bool, default=False
            Also return the diagnostics dictionary (``power_function``, ``residual``,
            ``novelty``, …, and ``lowrank_bound`` with ``extension="low-rank"`` or
            ``"auto"``), after the power function when both are asked for. Without
            either only the values are computed (the same numbers, faster).

        Returns
        -------
        values : ndarray of shape (n_samples,) or (n_samples, n_targets)
        power_function : ndarray of shape (n_samples,), only when asked for
        diagnostics : dict of ndarray, only when asked for
        """
        # Without either, the values alone are computed (the same numbers): no power
        # function, no novelty search.
        values, diag = self._extend(
            X, diagnostics=return_power_function or return_diagnostics
        )
        if self._y_1d:
            values = values[:, 0]
        out = (values,)
        if return_power_function:
            out += (diag["power_function"],)
        if return_diagnostics:
            out += (diag,)
        return out if len(out) > 1 else values

    @classmethod
    def preimage(cls, estimator, X, **params):
        """An interpolator from ``estimator``'s training embedding back to its training
        points ``X``: ``.predict(coordinates)`` maps embedding coordinates to the data
        space (a pre-image), with the power function. ``thin_plate`` suits 2-D
        embeddings.

        Parameters
        ----------
        estimator : OoseEstimator
            A fitted embedding.
        X : array-like of shape (n_samples, n_features)
            The points ``estimator`` was fitted on.
        **params
            Constructor parameters of the interpolator.

        Returns
        -------
        interpolator : KernelInterpolator
            Fitted on ``(estimator.embedding_, X)``.
        """
        check_is_fitted(estimator, "model_")
        X = np.asarray(X, dtype=np.float64)
        kept = estimator.model_.kept()
        return cls(**params).fit(estimator.embedding_, X[kept])
