"""The scikit-learn estimators of the neighbour embeddings: locally linear embedding,
maximum variance unfolding, t-SNE and UMAP (split from ``_estimators.py``, whose conventions they follow: parameter
names of docs/maths.md and the command line, ``random_state`` for the seed).
"""

from __future__ import annotations

import numpy as np
from sklearn.utils.validation import check_array, check_is_fitted

from ._estimators import _Embedding, _StrategyOption


class LocallyLinearEmbedding(_Embedding):
    """Locally linear embedding (standard, modified, Hessian or LTSA, maths §14), a
    drop-in for scikit-learn's ``LocallyLinearEmbedding`` with its parameter names;
    ``transform`` places new points by their barycentric weights from the
    ``n_neighbors`` nearest training points (scikit-learn's ``transform``).

    ``method="hessian"`` is Donoho and Grimes' Hessian eigenmaps: M sums the local
    Hessian estimators only. scikit-learn's ``"hessian"`` keeps every column of the local
    QR factor after the first d + 1, which makes its M that of LTSA (its embedding equals
    its ``"ltsa"`` one to 1e-12); use ``method="ltsa"`` for that result.

    The extension is sample-wise but not exact on training points: a training point is
    its own nearest neighbour and the regularisation spreads a little of its weight over
    the others (maths §14 gives the measured deviation). ``transform(X,
    return_diagnostics=True)`` gives ``reconstruction_error`` per point: the scale-free
    ||z − Σ wⱼ xⱼ||² over the mean squared distance to the neighbours (0 when z is an
    affine combination of its neighbours; large for points the training set does not
    represent). ``residual`` is NaN (LLE has no kernel).

    Parameters
    ----------
    n_components : int, default=2
    n_neighbors : int, default=5
        Neighbours of each point, itself not counted. One at or above the number of
        training points N is lowered to N − 1 with a ``FitWarning`` (umap-learn's
        rule); ``get_params`` keeps the value asked for. Groups of points that the
        neighbour graph cannot tie to the rest each give M a null vector (maths §14,
        *Groups*): two (standard and modified LLE) fit with a ``FitWarning`` that the
        first coordinate only tells them apart; more, or any for LTSA and Hessian LLE,
        are a ``ValueError`` naming ``n_neighbors``, the group sizes and the smallest
        ``n_neighbors`` up to 4k that fits.
    reg : float, default=1e-3
        Regularisation of the local Gram matrix G: G + reg·tr(G)·I.
    solver : str, default="auto"
        ``auto``, ``dense``, ``lanczos`` or ``shift-invert`` (``auto``: dense up to 1000
        points, shift-invert above) for the bottom eigenvectors of M.
    method : str, default="standard"
        ``standard`` (barycentric weights), ``modified`` (several weight vectors per
        point), ``hessian`` (local Hessian estimators; needs ``n_neighbors >
        n_components * (n_components + 3) / 2``) or ``ltsa`` (local tangent space
        alignment), as scikit-learn's ``method``; ``transform`` uses barycentric weights
        for all four.
    hessian_tol : float, default=1e-4
        ``method="hessian"``: a local Hessian column whose sum is at least this is
        divided by it (scikit-learn's rule).
    modified_tol : float, default=1e-12
        ``method="modified"``: a Householder vector shorter than this is taken as zero.

    Attributes
    ----------
    embedding_ : ndarray of shape (n_samples, n_components)
        The bottom eigenvectors 1..d of M (for standard LLE M = (I − W)ᵀ(I − W); unit
        norm, sign rule of maths §3).
    reconstruction_error_ : float
        Sum of their eigenvalues (scikit-learn's ``reconstruction_error_``).
    m_eigenvalues_ : ndarray of shape (n_components,)
        The eigenvalues of M of the embedding's columns, smallest first.

    Examples
    --------
    >>> import oose
    >>> X = oose.datasets.swiss_roll(600, random_state=0)
    >>> est = oose.LocallyLinearEmbedding(n_neighbors=10).fit(X[:500])
    >>> est.transform(X[500:]).shape
    (100, 2)
    """

    _method = "lle"

    def __init__(
        self,
        n_components=2,
        *,
        n_neighbors=5,
        reg=1e-3,
        solver="auto",
        method="standard",
        hessian_tol=1e-4,
        modified_tol=1e-12,
        metric="euclidean",
        n_jobs=None,
        verbose=False,
    ):
        self.n_components = n_components
        self.n_neighbors = n_neighbors
        self.reg = reg
        self.solver = solver
        self.method = method
        self.hessian_tol = hessian_tol
        self.modified_tol = modified_tol
        self.metric = metric
        self.n_jobs = n_jobs
        self.verbose = verbose

    def _fitted(self, model, annotate=True):
        super()._fitted(model, annotate)
        self.m_eigenvalues_ = np.atleast_1d(
            np.asarray(self.info_["m_eigenvalues"], dtype=np.float64)
        )
        self.reconstruction_error_ = float(self.info_["reconstruction_error"])


class MaximumVarianceUnfolding(_Embedding):
    """Maximum variance unfolding (maths §15): the centred Gram matrix K of largest
    trace that keeps the length of every edge of the symmetric kNN graph, a
    semidefinite program solved exactly (equality constraints) by oose's own
    interior-point method; the embedding is the top ``n_components`` eigenvectors of K
    scaled by the square roots of their eigenvalues. Exact MVU takes at most 1000
    training points; with ``n_landmarks=m`` (landmark MVU, Weinberger, Packer & Saul
    2005) every point is the LLE reconstruction of its neighbours carried down to m
    landmarks (farthest-point sampling), K = Q L Qᵀ, and the m×m program keeps the edge
    lengths as inequalities (≤), edges entering it as they are violated: thousands of
    points in seconds.

    ``transform`` places new points by their barycentric weights from the
    ``n_neighbors`` nearest training points applied to the embedding (as
    :class:`LocallyLinearEmbedding`): sample-wise, not exact on training points, with the
    scale-free ``reconstruction_error`` per point as the reliability.

    Parameters
    ----------
    n_components : int, default=2
    n_neighbors : int, default=5
        Neighbours of each point; an edge joins two points when either chose the other,
        and its length is kept. The graph must be connected (otherwise the variance is
        unbounded and the fit raises). One at or above N is lowered to N − 1 with a
        ``FitWarning``. Also the neighbours of ``transform``'s weights.
    reg : float, default=1e-3
        Regularisation of the local Gram matrices of ``transform``'s weights.
    tol : float, default=1e-8
        Relative accuracy asked of the semidefinite program (primal and dual
        infeasibility, duality gap, and the gap between the primal and dual
        objectives). When the solver stops short of it but with the residuals within
        1e-6, or meets it in the residuals but not in the objectives, the fit succeeds
        with a ``FitWarning`` giving the objective gap (``sdp_status_ ==
        "almost-solved"``); otherwise it raises ``ValueError`` with the solver's status.
    max_iter : int, default=100
        Most interior-point iterations (per program solved, with landmarks).
    n_landmarks : int or None, default=None
        Landmark MVU with this many landmarks (between ``n_components + 1`` and N);
        ``None``: exact MVU.

    Attributes
    ----------
    embedding_ : ndarray of shape (n_samples, n_components)
    landmarks_ : ndarray of int or None
        The training rows chosen as landmarks, in the order chosen (landmark MVU).
    kernel_spectrum_ : ndarray
        The largest eigenvalues of K (up to 10), largest first.
    objective_ : float
        tr K, the maximised variance times N.
    sdp_status_ : str
        ``"solved"`` or ``"almost-solved"``.
    n_iter_ : int
        Interior-point iterations of the (last) program solved.
    max_constraint_violation_ : float
        Largest |Kᵢᵢ + Kⱼⱼ − 2Kᵢⱼ − dᵢⱼ²| over the edges (exact), or largest excess of
        Kᵢᵢ + Kⱼⱼ − 2Kᵢⱼ over dᵢⱼ² (landmarks), relative to the mean squared edge
        length.

    Examples
    --------
    >>> import oose
    >>> X = oose.datasets.swiss_roll(300, random_state=0)
    >>> est = oose.MaximumVarianceUnfolding().fit(X[:250])
    >>> est.transform(X[250:]).shape
    (50, 2)
    """

    _method = "mvu"

    def __init__(
        self,
        n_components=2,
        *,
        n_neighbors=5,
        reg=1e-3,
        tol=1e-8,
        max_iter=100,
        n_landmarks=None,
        metric="euclidean",
        n_jobs=None,
        verbose=False,
    ):
        self.n_components = n_components
        self.n_neighbors = n_neighbors
        self.reg = reg
        self.tol = tol
        self.max_iter = max_iter
        self.n_landmarks = n_landmarks
        self.metric = metric
        self.n_jobs = n_jobs
        self.verbose = verbose

    def _fitted(self, model, annotate=True):
        super()._fitted(model, annotate)
        self.kernel_spectrum_ = np.atleast_1d(
            np.asarray(self.info_["kernel_spectrum"], dtype=np.float64)
        )
        self.objective_ = float(self.info_["objective"])
        self.sdp_status_ = str(self.info_["sdp_status"])
        self.n_iter_ = int(self.info_["sdp_iterations"])
        self.max_constraint_violation_ = float(self.info_["max_constraint_violation"])
        self.landmarks_ = (
            np.asarray(self.info_["landmarks"]).astype(np.intp)
            if "landmarks" in self.info_
            else None
        )


class TSNE(_StrategyOption, _Embedding):
    """t-SNE (maths §12) with scikit-learn's defaults and parameter names, and a
    ``transform`` that scikit-learn's ``TSNE`` lacks.

    ``fit`` calibrates each point's precision to the perplexity over its
    ⌊3·perplexity⌋ + 1 nearest neighbours, symmetrises P and minimises KL(P‖Q) with
    scikit-learn's schedule: PCA initialisation, 250 iterations of early exaggeration
    (momentum 0.5), then momentum 0.8, with per-coordinate gains. The repulsive forces
    are summed by FFT-accelerated interpolation (from 10000 points), Barnes–Hut
    (θ = ``angle``, each summarised cell with its quadrupole terms) or exactly. The
    result is deterministic given ``random_state``, whatever the number of threads.

    ``transform`` places a new point at the geometric median of the positions of its
    ``transform_neighbors`` nearest training points, weighted by ‖z − xₐ‖⁻⁴. The reference embedding is
    never changed. Each row is computed on its own (batch or row by row give the same
    bits), and a training point is returned exactly where ``fit`` put it.
    ``transform(X, return_diagnostics=True)`` gives ``residual``, the local power
    function P²(z) ∈ [0, 1] at the training data's scale (0 on training points, near 1
    away from the data), next to the novelty columns common to every method.

    Parameters
    ----------
    n_components : int, default=2
        Embedding dimension (1 to 3 with Barnes–Hut).
    perplexity : float, default=30.0
        About the number of neighbours each point attends to; below the number of
        points.
    early_exaggeration : float, default=12.0
        Factor on P for the first 250 iterations.
    learning_rate : float or "auto", default="auto"
        Step size; ``"auto"`` is max(N / early_exaggeration / 4, 50).
    max_iter : int, default=1000
        Iterations in all, the early-exaggeration phase included.
    angle : float, default=0.5
        Opening angle θ of Barnes–Hut.
    method : str, default="auto"
        ``auto`` (``fft`` from 10000 points when ``n_components`` ≤ 2, else
        ``barnes-hut``), ``barnes-hut`` (also spelt ``barnes_hut``; ``n_components``
        ≤ 3), ``fft`` (FFT-accelerated interpolation; ``n_components`` ≤ 2) or ``exact``
        (O(N²) per iteration).
    init : str, default="pca"
        ``pca`` (first component rescaled to standard deviation 1e-4; components the
        data lack start as ``random``, with a :class:`FitWarning`) or ``random``.
    random_state : int, RandomState, Generator or None, default=0
        Seed of the random initialisation: an int is the seed (the result is deterministic given it);
        ``None`` draws a fresh seed from the operating system's entropy, a
        ``RandomState`` or ``Generator`` one from its stream; ``seed_`` holds the seed
        used.
    transform_neighbors : int, default=5
        Training neighbours a new point is placed from. More than the number of
        training points is lowered to it with a ``FitWarning``.
    neighbors : str, default="auto"
        The kNN graph of P: ``exact``, ``approximate`` (NN-descent; ``info_["knn_recall"]``
        is its recall on 500 sampled points) or ``auto`` (approximate from 100000 points
        in more than 16 dimensions).
    transform_search : str, default="auto"
        How ``transform`` finds a new point's nearest training points: ``exact``,
        ``approximate`` (inverted lists, ``info_["transform_search_lists"]``; a training
        point is still found exactly, so the extension stays exact on training points) or
        ``auto``
        (approximate from 20000 training points in more than 16 dimensions).
    strategy : str, default="interpolation"
        How ``transform`` places new points: ``interpolation`` (the weighted median of
        the neighbours' positions; microseconds per point, exact on training points) or
        ``optimize``
        (openTSNE's transform made sample-wise: each point's own KL divergence against
        the fixed reference, 250 steps from its interpolation; the diagnostics add
        ``kl``).

    Attributes
    ----------
    embedding_ : ndarray of shape (n_samples, n_components)
        The t-SNE embedding of the training points.
    kl_divergence_ : float
        KL(P‖Q) at the end.
    learning_rate_ : float
        The learning rate used (``"auto"`` resolved).
    n_iter_ : int
        Iterations run (all ``max_iter``: there is no early stop).
    knn_recall_ : float
        Recall of the kNN graph of P against the exact neighbours, measured on 500
        sampled points (1.0 when the graph is exact).

    Examples
    --------
    >>> import oose
    >>> X = oose.datasets.three_d_clusters(300, random_state=0)
    >>> est = oose.TSNE(perplexity=20, max_iter=300).fit(X[:250])
    >>> est.transform(X[250:]).shape
    (50, 2)
    """

    _method = "tsne"

    def __init__(
        self,
        n_components=2,
        *,
        perplexity=30.0,
        early_exaggeration=12.0,
        learning_rate="auto",
        max_iter=1000,
        angle=0.5,
        method="auto",
        init="pca",
        random_state=0,
        transform_neighbors=5,
        neighbors="auto",
        transform_search="auto",
        strategy="interpolation",
        metric="euclidean",
        n_jobs=None,
        verbose=False,
    ):
        self.n_components = n_components
        self.perplexity = perplexity
        self.early_exaggeration = early_exaggeration
        self.learning_rate = learning_rate
        self.max_iter = max_iter
        self.angle = angle
        self.method = method
        self.init = init
        self.random_state = random_state
        self.transform_neighbors = transform_neighbors
        self.neighbors = neighbors
        self.transform_search = transform_search
        self.strategy = strategy
        self.metric = metric
        self.n_jobs = n_jobs
        self.verbose = verbose

    def _fitted(self, model, annotate=True):
        super()._fitted(model, annotate)
        self.kl_divergence_ = float(self.info_["kl_divergence"])
        self.learning_rate_ = float(self.info_["learning_rate_used"])
        self.n_iter_ = int(self.info_["iterations"])
        self.knn_recall_ = float(self.info_["knn_recall"])


class UMAP(_StrategyOption, _Embedding):
    """UMAP (maths §13) with umap-learn's defaults and parameter names, a ``transform``
    whose rows do not depend on the batch, and an ``inverse_transform`` that says how
    far it can be trusted.

    ``fit`` builds the fuzzy simplicial set of the ``n_neighbors`` nearest neighbours
    (each point's ρ and σ by bisection, then the fuzzy union), fits a and b of
    1 / (1 + a r^{2b}) to ``min_dist`` and ``spread``, starts from the Laplacian
    eigenmaps of the fuzzy graph (each connected component on its own, laid side by
    side; components too small are placed at random and ``info_["init_note"]`` says
    so) and runs umap-learn's SGD with negative sampling. Each epoch reads the positions
    as they were when it began and each point moves only itself, so the result is the
    same bits for a given ``random_state`` whatever the number of threads (umap-learn
    is deterministic only on one thread).

    ``transform`` never changes the model, and each row is computed on its own (batch or
    row by row give the same bits):

    - ``strategy="interpolation"`` (default): the geometric median of the positions of
      the ``transform_neighbors`` nearest training points, weighted by ‖z − xₐ‖⁻⁴;
      microseconds per point, a training point returned exactly where ``fit`` put it.
    - ``strategy="optimize"``: umap-learn's ``transform`` (the new point's memberships to
      its ``n_neighbors`` nearest training points, ``n_epochs / 3`` SGD epochs (with
      ``n_epochs=None``: 100 up to 10000 training points, else 30, as umap-learn) at a
      quarter of the learning rate, moving the new point only), its negative samples
      seeded by ``random_state`` and the row's own bytes.

    ``transform(X, return_diagnostics=True)`` gives ``residual``, the local power function
    P²(z) ∈ [0, 1] at the training data's scale (0 on training points, near 1 away from
    the data), next to the novelty columns common to every method.

    Parameters
    ----------
    n_components : int, default=2
        Embedding dimension.
    n_neighbors : int, default=15
        Neighbours per point, the point itself included (umap-learn's convention);
        at least 2. One at or above the number of training points N is lowered to
        N − 1 with a ``FitWarning``, as umap-learn does.
    min_dist : float, default=0.1
        Smallest distance between embedded points; between 0 and ``spread``.
    spread : float, default=1.0
        Scale of the embedded points.
    n_epochs : int or None, default=None
        SGD epochs; ``None``: 500 up to 10000 points, else 200 (``optimize``: a third,
        or with ``None`` 100 and 30).
    learning_rate : float, default=1.0
        Initial SGD step, decaying linearly to 0.
    negative_sample_rate : int, default=5
        Negative samples per positive sample.
    repulsion_strength : float, default=1.0
        Weight γ of the repulsive term.
    init : str, default="spectral"
        ``spectral`` (Laplacian eigenmaps of the fuzzy graph) or ``random``.
    random_state : int, RandomState, Generator or None, default=0
        Seed of the initialisation noise and of the negative samples: an int is the seed (the result is deterministic given it);
        ``None`` draws a fresh seed from the operating system's entropy, a
        ``RandomState`` or ``Generator`` one from its stream; ``seed_`` holds the seed
        used.
    transform_neighbors : int, default=5
        Training neighbours a new point is placed from by ``interpolation``. More than
        the number of training points is lowered to it with a ``FitWarning``.
    optimize_start : str, default="weighted-mean"
        Where ``optimize`` starts a new point: ``weighted-mean`` (the membership-
        weighted mean of its neighbours' positions, umap-learn's) or ``interpolation``.
    neighbors : str, default="auto"
        The kNN graph: ``exact``, ``approximate`` (NN-descent; ``info_["knn_recall"]``
        is its recall on sampled points) or ``auto`` (approximate from 20000 points in
        more than 16 dimensions).
    transform_search : str, default="auto"
        How ``transform`` finds a new point's nearest training points: ``exact``,
        ``approximate`` (inverted lists, ``info_["transform_search_lists"]``; a training
        point is still found exactly) or ``auto`` (approximate from 20000 training points
        in more than 16 dimensions).
    strategy : str, default="interpolation"
        How ``transform`` places new points: ``interpolation`` or ``optimize`` (above).

    Attributes
    ----------
    embedding_ : ndarray of shape (n_samples, n_components)
        The UMAP embedding of the training points.
    a_, b_ : float
        The curve 1 / (1 + a r^{2b}) fitted to ``min_dist`` and ``spread``.
    n_epochs_ : int
        Epochs the fit ran (``n_epochs`` resolved).
    graph_components_ : int
        Connected components of the fuzzy graph.
    knn_recall_ : float
        Recall of the kNN graph against the exact neighbours, measured on sampled points
        (1.0 when the graph is exact).

    Examples
    --------
    >>> import oose
    >>> X = oose.datasets.three_d_clusters(300, random_state=0)
    >>> est = oose.UMAP(n_neighbors=10, n_epochs=100).fit(X[:250])
    >>> est.transform(X[250:]).shape
    (50, 2)
    >>> bool((est.inverse_transform(est.embedding_[:3]) == X[:3]).all())
    True
    """

    _method = "umap"

    def __init__(
        self,
        n_components=2,
        *,
        n_neighbors=15,
        min_dist=0.1,
        spread=1.0,
        n_epochs=None,
        learning_rate=1.0,
        negative_sample_rate=5,
        repulsion_strength=1.0,
        init="spectral",
        random_state=0,
        transform_neighbors=5,
        optimize_start="weighted-mean",
        neighbors="auto",
        transform_search="auto",
        strategy="interpolation",
        metric="euclidean",
        n_jobs=None,
        verbose=False,
    ):
        self.n_components = n_components
        self.n_neighbors = n_neighbors
        self.min_dist = min_dist
        self.spread = spread
        self.n_epochs = n_epochs
        self.learning_rate = learning_rate
        self.negative_sample_rate = negative_sample_rate
        self.repulsion_strength = repulsion_strength
        self.init = init
        self.random_state = random_state
        self.transform_neighbors = transform_neighbors
        self.optimize_start = optimize_start
        self.neighbors = neighbors
        self.transform_search = transform_search
        self.strategy = strategy
        self.metric = metric
        self.n_jobs = n_jobs
        self.verbose = verbose

    def _fitted(self, model, annotate=True):
        super()._fitted(model, annotate)
        self.a_ = float(self.info_["a"])
        self.b_ = float(self.info_["b"])
        self.n_epochs_ = int(self.info_["epochs"])
        self.graph_components_ = int(self.info_["graph_components"])
        self.knn_recall_ = float(self.info_["knn_recall"])
