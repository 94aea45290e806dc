"""``fit``: one (pseudo) posterior fit of a synthesizer, the :class:`Fit` it returns, and the
:class:`Sampler` settings every fit in ppmlib is made with."""
from __future__ import annotations

__all__ = ["Sampler", "Fit", "fit", "start_point", "spaced_draws", "one_blas_thread"]

import warnings
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from ppmlib.inference import backends
from ppmlib import _checks
from ppmlib.inference.diagnostics import summarize
from ppmlib.models.families import Family, family
from ppmlib.seeding import STAN_SEED_LIMIT
from ppmlib.errors import BadArgument


@dataclass(frozen=True)
class Sampler:
    """NUTS settings of a fit: ``chains`` chains of ``warmup`` + ``draws`` iterations each.

    One object carries them through :func:`fit`, :func:`ppmlib.synthesizer`, the lineup runner
    (:func:`ppmlib.mechanism.lineup.run`), the re-weighting and calibration loops and the Monte Carlo study, so a
    chapter states them once. A fit keeps S = chains * draws draws (warmup is discarded).

    Parameters
    ----------
    chains : int
        Independent Markov chains, at least 1 (R-hat needs at least 2 to compare them).
    draws : int
        Draws kept per chain, after warmup; at least 1.
    warmup : int
        Adaptation iterations per chain, discarded; at least 1.
    adapt_delta : float, optional
        The acceptance rate the step size is adapted to, in (0, 1). None (the default) takes the
        family's setting, the one at which its fits pass the diagnostics gate: Stan's 0.8, the
        mixture's 0.9 (``Family.adapt_delta``). Raising it (0.9, 0.95) takes smaller steps: fewer
        divergences where the posterior curves sharply, at the cost of longer trajectories. Shown
        in the repr only when it is set.
    max_treedepth : int, optional
        NUTS's largest tree depth, at least 1; None (the default) is Stan's 10. A draw costs at most
        2**max_treedepth gradient evaluations, so a lower cap bounds the cost of a fit whose
        trajectories run long (a censored fit at a small epsilon); its draws then mix worse, which
        the diagnostics gate shows. Shown in the repr only when it is set.

    Raises
    ------
    TypeError, ValueError
        A setting that is not an integer, or is below 1, or an adapt_delta outside (0, 1) (the
        message names it).

    See Also
    --------
    fit : uses these settings.

    Examples
    --------
    >>> Sampler()
    Sampler(chains=4, draws=1000, warmup=1000)
    >>> Sampler(chains=2, draws=200, warmup=200).total_draws
    400
    >>> Sampler(adapt_delta=0.9)
    Sampler(chains=4, draws=1000, warmup=1000, adapt_delta=0.9)
    """
    chains: int = 4
    draws: int = 1000
    warmup: int = 1000
    adapt_delta: float | None = None
    max_treedepth: int | None = None

    def __post_init__(self):
        for name in ("chains", "draws", "warmup"):
            # frozen: set the checked (plain int) value through object.__setattr__
            object.__setattr__(self, name, _checks.integer(getattr(self, name), name, low=1))
        if self.adapt_delta is not None:
            object.__setattr__(self, "adapt_delta", _checks.real(self.adapt_delta, "adapt_delta", low=0, high=1,
                                                                 low_open=True, high_open=True))
        if self.max_treedepth is not None:
            object.__setattr__(self, "max_treedepth", _checks.integer(self.max_treedepth, "max_treedepth", low=1))

    def __repr__(self) -> str:
        extra = f", adapt_delta={self.adapt_delta:g}" if self.adapt_delta is not None else ""
        extra += f", max_treedepth={self.max_treedepth}" if self.max_treedepth is not None else ""
        return f"Sampler(chains={self.chains}, draws={self.draws}, warmup={self.warmup}{extra})"

    @property
    def total_draws(self) -> int:
        """S = chains * draws, the draws a fit keeps."""
        return self.chains * self.draws

    def sample(self, fam: Family, data: dict, seed: int, init: dict | None = None) -> backends.Draws:
        """Run NUTS on ``stan/<fam.name>.stan`` with these settings (a subclass may draw otherwise); a
        family with its own exact sampler (``fam.exact_draws``) is drawn by it instead, with the same
        chains, draws, warm-up and seed (backend ``"exact"``, no sampler statistics).

        Parameters
        ----------
        fam : Family
            The model; its name is the Stan program's.
        data : dict
            The program's data, as ``fam.stan_data`` builds it.
        seed : int
            The sampler's seed.
        init : dict, optional
            Where every chain starts (parameter name -> value); None: Stan's random start.

        Returns
        -------
        ppmlib.inference.backends.Draws
            S = chains * draws draws, draw axis first, chain after chain.

        See Also
        --------
        ppmlib.inference.exact.ConjugateSampler : exact Gamma draws of the Poisson model, without Stan.
        """
        if hasattr(fam, "exact_draws"):   # a family drawn without Stan (its own exact sampler): same settings
            params = fam.exact_draws(data, chains=self.chains, draws=self.draws, warmup=self.warmup, seed=seed)
            return backends.Draws(params=params, sampler={}, chains=self.chains, backend="exact")
        return backends.sample(fam.name, data, chains=self.chains, draws=self.draws, warmup=self.warmup, seed=seed,
                               adapt_delta=self.adapt_delta_for(fam),
                               max_treedepth=backends.STAN_MAX_TREEDEPTH if self.max_treedepth is None
                               else self.max_treedepth, init=init)

    def adapt_delta_for(self, fam: Family) -> float:
        """The acceptance rate a fit of ``fam`` adapts to: this sampler's, or the family's when unset.

        Parameters
        ----------
        fam : Family
            The model.

        Returns
        -------
        float
        """
        return fam.adapt_delta if self.adapt_delta is None else self.adapt_delta


#: Stan's names of the sampler's per-draw statistics -> ArviZ's (as ``arviz.from_cmdstanpy`` names them).
ARVIZ_SAMPLE_STATS = {"divergent__": "diverging", "treedepth__": "tree_depth", "stepsize__": "step_size",
                      "energy__": "energy", "lp__": "lp", "accept_stat__": "acceptance_rate", "n_leapfrog__": "n_steps"}


def _sampler(value) -> Sampler:
    """``None`` -> the default settings; anything but a :class:`Sampler` is a TypeError."""
    if value is None:
        return Sampler()
    if not isinstance(value, Sampler):
        raise TypeError(f"sampler must be a ppmlib.Sampler, e.g. ppmlib.Sampler(chains=4, draws=1000, warmup=1000), "
                        f"got {type(value).__name__}")
    return value


@dataclass(frozen=True, eq=False)
class Fit:
    """Draws of an alpha-weighted synthesizer and what follows from them.

    Attributes
    ----------
    model : the family object (``.name`` is "poisson", "negbin", "normal" or "mixture")
    y, X : the confidential data the fit saw (X is None for the count models)
    weights : (n,) the record weights alpha
    draws : dict of arrays, draw axis first: (S,) for scalars, (S, K) for vectors
    sampler : the sampler's per-draw values (``divergent__``, ``treedepth__``, ...)
    chains, backend, seed : how the draws were made
    """
    model: Family
    y: np.ndarray
    X: np.ndarray | None
    weights: np.ndarray
    draws: dict
    sampler: dict = field(repr=False)
    chains: int
    backend: str
    seed: int | None
    #: False once :meth:`subset` has dropped draws: where one chain ends and the next begins is then unknown
    whole_chains: bool = field(default=True, repr=False)
    #: The censoring of a strict fit (:class:`ppmlib.models.censoring.Censoring`); None for the pseudo posterior
    censoring: object = field(default=None, repr=False)

    @property
    def censored_log_lik(self) -> np.ndarray:
        """S x n censored terms u_i(theta_s) of a strict fit (what each record adds to its log posterior).

        Raises
        ------
        ValueError
            The fit was not censored.
        """
        if self.censoring is None:
            raise BadArgument("this fit was not censored: it has no censored terms (fit with censoring=...)")
        return self.model.censored_log_lik(self.draws, self.y, self.X, self.weights, self.censoring)

    @property
    def n_draws(self) -> int:
        return int(next(iter(self.draws.values())).shape[0])

    @cached_property
    def log_lik(self) -> np.ndarray:
        """S x n *unweighted* per-record log-likelihood log p(y_i | theta_s).

        The full matrix, for those who want it (S = 4000, n = 10^6 is 32 GB). Bounds, risks and
        weights never need it: pass the Fit itself to :func:`ppmlib.record_bounds`,
        :func:`ppmlib.lw_weights`, ... and they work through :meth:`log_lik_blocks`.
        """
        return self.model.log_lik(self.draws, self.y, self.X)

    @cached_property
    def _distinct(self) -> tuple:
        return self.model.distinct(self.y, self.X)

    @property
    def record_keys(self) -> np.ndarray:
        """(n,) column of each record in the blocks of :meth:`log_lik_blocks`."""
        return self._distinct[2]

    def log_lik_blocks(self, max_elements: int = 2**21):
        """The log-likelihood in small pieces: yields ``(draws slice, (b, u) block)``.

        Columns are the u distinct keys of the records (distinct values for the count families,
        whose log-likelihood depends on a record only through its value; every record for the
        normal model), so ``block[:, record_keys]`` is ``log_lik[draws slice]``. Blocks of b draws
        hold at most about ``max_elements`` numbers, so memory stays flat in S and n.

        Parameters
        ----------
        max_elements : int
            About how many numbers one block may hold.

        Yields
        ------
        (slice, ndarray of shape (b, u))
            The draws covered and their log-likelihood at the u distinct keys.
        """
        keys_y, keys_X, _ = self._distinct
        step = max(1, int(max_elements) // max(1, keys_y.size))
        for start in range(0, self.n_draws, step):
            part = slice(start, min(start + step, self.n_draws))
            yield part, self.model.log_lik({k: v[part] for k, v in self.draws.items()}, keys_y, keys_X)

    def log_lik_tiles(self, max_elements: int = 2**16, draws: int = 8):
        """The log-likelihood in tiles small enough to stay in a core's cache: yields
        ``(draws slice, keys slice, (b, r) tile)``.

        The numbers of :meth:`log_lik_blocks` (``tile`` is a block's piece at those draws and keys,
        up to the last bits of the model's matrix products), cut over the keys as well as the
        draws: a tile of about ``max_elements`` numbers (512 KB) is made and reduced while it is
        still in cache, where a block of millions of numbers goes to memory and back once per
        operation. Each tile is the caller's to change. Run the loop under :func:`one_blas_thread`.

        Parameters
        ----------
        max_elements : int
            About how many numbers one tile may hold.
        draws : int
            Draws per tile (more when there are fewer keys than ``max_elements / draws``): more
            draws spread per-key work (a maximum over a tile's draws) over more numbers.

        Yields
        ------
        (slice, slice, ndarray of shape (b, r))
            The draws and the keys (columns of :meth:`log_lik_blocks`' blocks) covered, and their
            log-likelihood.
        """
        keys_y, keys_X, _ = self._distinct
        u, S = keys_y.size, self.n_draws
        width = min(u, max(1, int(max_elements) // max(1, int(draws))))
        step = max(1, int(max_elements) // width)
        for first_key in range(0, u, width):
            keys = slice(first_key, min(first_key + width, u))
            tile_y, tile_X = keys_y[keys], None if keys_X is None else keys_X[keys]
            for start in range(0, S, step):
                part = slice(start, min(start + step, S))
                yield part, keys, self.model.log_lik({k: v[part] for k, v in self.draws.items()}, tile_y, tile_X)

    @cached_property
    def diagnostics(self) -> dict:
        """max_rhat, min_ess_bulk, divergences, draws, chains (worst case over all parameters; for the
        mixture, whose component labels switch, over label-invariant quantities instead: see
        ``Family.diagnostic_draws``). A fit that :meth:`subset` cut draws from reports its whole run's."""
        run = self.__dict__.get("_whole_run")
        if run is not None:
            return run.diagnostics
        return summarize(self.model.diagnostic_draws(self.draws, self.y, self.X), self.sampler, self.chains)

    def subset(self, keep) -> "Fit":
        """The same fit restricted to the draws where ``keep`` is True (e.g. after truncation).

        Parameters
        ----------
        keep : array_like of bool, shape (S,)
            True for every draw to keep.

        Returns
        -------
        Fit
            The kept draws and their sampler values; the data, weights, chains and seed unchanged.
            Its ``diagnostics`` are the whole run's: convergence is a property of the sampler's run,
            and once draws are dropped where one chain ends and the next begins is unknown.
        """
        keep = np.asarray(keep, dtype=bool)
        if keep.shape != (self.n_draws,):
            raise BadArgument(f"keep must be a boolean mask of length {self.n_draws}, got shape {keep.shape}")
        kept = Fit(self.model, self.y, self.X, self.weights,
                   {k: v[keep] for k, v in self.draws.items()},
                   {k: v[keep] for k, v in self.sampler.items()}, self.chains, self.backend, self.seed,
                   self.whole_chains and bool(keep.all()), self.censoring)
        if not kept.whole_chains:
            object.__setattr__(kept, "_whole_run", self.__dict__.get("_whole_run", self))  # for diagnostics
        return kept

    def to_arviz(self):
        """The fit as an ArviZ ``InferenceData``, for ArviZ's summaries and plots.

        ArviZ is optional (it is in ppmlib's ``test`` extra): it is imported here, not with ppmlib.

        Returns
        -------
        arviz.InferenceData
            ``posterior``: every parameter as (chain, draw, ...), chain k holding its own draws in
            order (ppmlib keeps them chain after chain); ``sample_stats``: the sampler's per-draw
            statistics under ArviZ's names (``diverging``, ``tree_depth``, ``step_size``,
            ``energy``, ``lp``, ``acceptance_rate``, ``n_steps``), when the backend gave them;
            ``log_likelihood``: ``y`` (chain, draw, record), the unweighted per-record
            log p(y_i | theta) of :attr:`log_lik`; ``observed_data``: ``y``.

        Raises
        ------
        ImportError
            ArviZ is not installed.
        ValueError
            :meth:`subset` has dropped draws (e.g. truncated ones), so where each chain begins is
            unknown and the draws cannot be laid out as (chain, draw).

        Examples
        --------
        >>> posterior = ppmlib.example_fit().to_arviz()
        >>> posterior.posterior["lambda"].shape, posterior.log_likelihood["y"].shape
        ((4, 200), (4, 200, 100))
        >>> int(posterior.sample_stats["diverging"].sum())
        0
        """
        try:
            with warnings.catch_warnings():  # ArviZ announces its coming refactor on import
                warnings.simplefilter("ignore", FutureWarning)
                import arviz
        except ImportError as err:
            raise ImportError("Fit.to_arviz needs ArviZ, which ppmlib does not install by itself: "
                              "pip install arviz (or pip install ppmlib[test])") from err
        if not self.whole_chains or self.n_draws % self.chains:
            raise BadArgument(f"this fit holds {self.n_draws} of its draws (a subset, e.g. after truncation), so "
                             f"where each of its {self.chains} chains begins is unknown: ArviZ needs (chain, draw) arrays")

        def by_chain(arr):
            arr = np.asarray(arr)
            return arr.reshape(self.chains, self.n_draws // self.chains, *arr.shape[1:])

        stats = {ARVIZ_SAMPLE_STATS[k]: by_chain(v) for k, v in self.sampler.items() if k in ARVIZ_SAMPLE_STATS}
        if "diverging" in stats:
            stats["diverging"] = stats["diverging"].astype(bool)
        return arviz.from_dict(posterior={k: by_chain(v) for k, v in self.draws.items() if k != "log_lik"},
                               sample_stats=stats or None, log_likelihood={"y": by_chain(self.log_lik)},
                               observed_data={"y": self.y}, dims={"y": ["record"]},
                               attrs={"backend": self.backend, "model": self.model.name})

    def synthesize(self, m: int, seed) -> np.ndarray:
        """m synthetic datasets, shape (m, n): one per draw, from m draws evenly spaced over the fit.

        Evenly spaced draws (rather than the last m) keep the datasets nearly independent.
        ``seed`` is an int or a numpy Generator.

        Parameters
        ----------
        m : int
            Number of datasets, at most the number of draws.
        seed : int or numpy.random.Generator
            The randomness of the synthetic values.

        Returns
        -------
        ndarray, shape (m, n)

        Examples
        --------
        >>> ppmlib.example_fit().synthesize(m=2, seed=1).shape
        (2, 100)
        """
        idx = spaced_draws(self.n_draws, m)
        rng = np.random.default_rng(seed)
        chosen = {k: v[idx] for k, v in self.draws.items()}
        return self.model.predict(chosen, self.X, self.y.size, rng)


def fit(model: str, y, *, weights=None, X=None, sampler: Sampler | None = None, seed=None,
        prior: dict | None = None, emit_log_lik: bool = False, censoring=None, start=None) -> Fit:
    """Fit the alpha-weighted (pseudo posterior) synthesizer ``model`` to ``y``.

    The pseudo posterior is xi^alpha(theta | y) proportional to prod_i p(y_i | theta)^alpha_i
    times the prior: each record's log-likelihood enters multiplied by its weight alpha_i.

    Parameters
    ----------
    model : str
        "poisson", "negbin" (mean mu, dispersion phi), "normal" (linear regression on X) or
        "mixture" (finite mixture of regressions on X; K and the Dirichlet concentration go in ``prior``).
    y : array, shape (n,)
        The data; non-negative integer counts for the count models.
    weights : array, shape (n,), optional
        alpha in [0, 1]; None means the unweighted posterior.
    X : array, shape (n, K), optional
        Design matrix, normal and mixture models only (include an intercept column); None = intercept only.
    sampler : Sampler, optional
        NUTS settings (chains, draws per chain, warmup); None means ``Sampler()``, 4 x 1000 draws
        after 1000 warmup iterations. S = chains * draws draws are kept.
    seed : int, optional
        Same seed, same backend: identical draws. None picks one at random. Stan's range: 0 to
        2**31 - 2 (a larger seed is a ValueError before anything runs).
    prior : dict, optional
        Overrides of the default prior settings named in the Stan program's header.
    emit_log_lik : bool
        Also return Stan's own per-record log-likelihood in ``draws["log_lik"]``, shape (S, n) (tests).
    censoring : float or Censoring, optional
        Fit the censored (strict) posterior: each record's term alpha_i log p is replaced by
        clip(alpha_i (log p - r_i), -epsilon/2, epsilon/2). A float is epsilon, with the default
        centring (:func:`ppmlib.models.censoring.censoring`); a ``Censoring`` is used as given.
        None (the default) fits the pseudo posterior.
    start : Fit, optional
        A fit of the same model and data (e.g. the unweighted one): every chain starts at its
        posterior mean (:func:`ppmlib.inference.posterior.start_point`) instead of Stan's random
        start. Censored fits need it: from a random start every record can be censored, the log
        density is then flat, and a chain never finds the data.

    Returns
    -------
    Fit
        Draws with the draw axis first: (S,) for scalars, (S, K) for vectors.

    Raises
    ------
    TypeError, ValueError
        A bad argument, named in the message (which names a record by position, never by value);
        counts at or above 2**31 (Stan's int); a prior scale or shape <= 0.
    RuntimeError
        The backend failed; its message carries no value of the data.

    See Also
    --------
    ppmlib.Sampler : the NUTS settings.
    ppmlib.synthesizer : weights, fit, bounds and synthetic data of one weighting scheme.

    Examples
    --------
    A fit runs Stan. :func:`ppmlib.example_fit` is a stored result of ``ppmlib.fit("poisson",
    ppmlib.datasets.simulate.poisson(100, 100, seed=1), sampler=ppmlib.Sampler(chains=4, draws=200,
    warmup=200), seed=2020)``:

    >>> posterior = ppmlib.example_fit()
    >>> posterior.draws["lambda"].shape, posterior.diagnostics["divergences"]
    ((800,), 0)
    >>> posterior.synthesize(m=3, seed=1).shape
    (3, 100)

    The Poisson model also has exact draws, without Stan:

    >>> exact = ppmlib.inference.exact.ConjugateSampler(chains=2, draws=500)
    >>> ppmlib.fit("poisson", posterior.y, sampler=exact, seed=3).draws["lambda"].shape
    (1000,)
    """
    fam = family(model)
    y = fam.check_y(y)
    X = fam.check_X(X, y.size)
    alpha = _checks.weights(weights, y.size)
    cens = _censoring(censoring, fam, y, X, alpha)
    return _fit(fam, y, X, alpha, _sampler(sampler), _checks.seed(seed), fam.check_prior(prior), emit_log_lik, cens,
                start=start)


def _censoring(value, fam: Family, y, X, alpha):
    """None, a float epsilon (the default centring) or a Censoring of n records, checked."""
    from ppmlib.models.censoring import Censoring, censoring
    if value is None or isinstance(value, Censoring):
        if value is not None and np.shape(value.shifts) != (y.size,):
            raise BadArgument(f"censoring holds {np.size(value.shifts)} shifts but y has {y.size} records")
        return value
    return censoring(fam, y, X, alpha, value)


def _fit(fam: Family, y: np.ndarray, X, alpha: np.ndarray, sampler: Sampler, seed, prior: dict,
         emit_log_lik: bool = False, censoring=None, start=None) -> Fit:
    """:func:`fit` on checked inputs: y and X as the family's checks return them, the full prior dict."""
    if seed is None:
        seed = int(np.random.default_rng().integers(STAN_SEED_LIMIT))
    data = fam.stan_data(y, X, alpha, prior, emit_log_lik, censoring)
    # only a given start reaches the sampler: a Sampler subclass (exact draws) need not take one
    out = sampler.sample(fam, data, seed) if start is None else sampler.sample(fam, data, seed, init=start_point(start))
    keep = set(fam.params) | ({"log_lik"} if emit_log_lik else set())
    params = {k: v for k, v in out.params.items() if k in keep}
    return Fit(fam, y, X, alpha, params, out.sampler, sampler.chains, out.backend, seed, censoring=censoring)


def one_blas_thread():
    """A context in which NumPy's matrix products use one thread.

    The log-likelihood's products (draws x design) are small and many: a pool of BLAS threads
    that wait for each other, on a machine whose cores other work also uses, made each several
    times slower than one thread doing it alone.

    Returns
    -------
    threadpoolctl.threadpool_limits
        Use as ``with one_blas_thread(): ...``.
    """
    from threadpoolctl import threadpool_limits
    return threadpool_limits(1, user_api="blas")


def start_point(start) -> dict:
    """Where the chains of a fit started from ``start`` begin: the posterior mean of its parameters.

    Parameters
    ----------
    start : Fit or dict
        A fit of the same family (same parameter shapes), or the point itself (name -> value,
        e.g. a censored release's pilot estimate), returned as it is.

    Returns
    -------
    dict
        Parameter name -> posterior mean (float or list), for every parameter of the family.
    """
    if isinstance(start, dict):
        return start
    if not isinstance(start, Fit):
        raise BadArgument(f"start must be a Fit of the same model or a point (name -> value), got {type(start).__name__}")
    return {name: start.draws[name].mean(axis=0).tolist() for name in start.model.params}


def spaced_draws(n_draws: int, m: int) -> np.ndarray:
    """The draws that generate m synthetic datasets: m evenly spaced over the fit's draws.

    One rule for every place that must pick the same draws (:meth:`Fit.synthesize`, the joint
    release, the attribute risk's generating draws).

    Parameters
    ----------
    n_draws : int
        The fit's number of draws.
    m : int
        The number of synthetic datasets.

    Returns
    -------
    ndarray of int, shape (m,)

    Raises
    ------
    ValueError
        m is not a positive integer or exceeds n_draws.

    Examples
    --------
    >>> spaced_draws(8, 3).tolist()     # the middle of 0..7 is 3.5, rounded to even
    [0, 4, 7]
    """
    m = _checks.integer(m, "m", low=1)
    if m > n_draws:
        raise BadArgument(f"m = {m} synthetic datasets need at least m draws; the fit has {n_draws}")
    return np.linspace(0, n_draws - 1, m).round().astype(int)
