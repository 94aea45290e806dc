"""The synthesizer families (Poisson, NB, normal regression, mixture of regressions): how to check
data, build Stan data, and use the draws.

Each family knows its Stan program, its default priors (stated in the program's header), its
per-record log-likelihood from draws (numpy/scipy, checked against Stan's lpmf/lpdf in the tests)
and its posterior predictive sampler.
"""
from __future__ import annotations

__all__ = ["POISSON_PRIOR", "STAN_INT_LIMIT", "FAMILIES", "Family", "Poisson", "NegBin", "Normal", "Mixture", "HetNormal", "Binned", "CellNormal", "CellNormalIID",
           "family", "negbin_draw",
           "normal_sufficient_statistics"]

from types import MappingProxyType

import numpy as np
from scipy import special

from ppmlib import _checks
from ppmlib.errors import BadArgument

#: The Poisson rate's Gamma(shape, rate) prior: the Stan program's default, used by the Stan family,
#: by the closed forms of ppmlib.inference.exact and by the chapters. Weak for counts near 100. Copy it before
#: changing a value (every user shares this one dict).
POISSON_PRIOR = {"prior_shape": 1.0, "prior_rate": 0.001}

#: Stan's int is 32-bit: counts sent to a Stan program must stay below this.
STAN_INT_LIMIT = 2**31


def negbin_draw(rng: np.random.Generator, mu, phi, size=None) -> np.ndarray:
    """Negative binomial draws with mean ``mu`` and variance mu + mu^2 / phi (Stan's neg_binomial_2).

    numpy parametrises by (number of successes, success probability): phi and phi / (phi + mu).
    ``mu`` and ``phi`` broadcast against each other and ``size``.

    Parameters
    ----------
    rng : numpy.random.Generator
        The source of randomness.
    mu, phi : float or array_like
        Means and dispersions (phi > 0).
    size : int or tuple of int, optional
        Output shape; None means the broadcast shape of ``mu`` and ``phi``.

    Returns
    -------
    ndarray of int
    """
    return rng.negative_binomial(phi, np.asarray(phi) / (np.asarray(phi) + np.asarray(mu)), size=size)


class Family:
    """A likelihood family of the synthesizer: the class to extend for a new model.

    One instance per family lives in :data:`FAMILIES` under its ``name``; :func:`ppmlib.fit`,
    :func:`ppmlib.synthesizer` and every study reach a family only through :func:`family` and the
    methods below, so a new family is a subclass, a Stan program and one line adding an instance
    to :data:`FAMILIES`. Arrays follow the papers: draws x records, S x n.

    The Stan program is ``stan/<name>.stan`` (:func:`ppmlib.inference.backends.program_path`), so ``name``
    is also the program's file name. The program takes the weights as data (one compiled program
    serves every weighting scheme), reads the prior settings under the keys of ``default_prior``
    (their defaults are stated in its header), writes the parameters named in ``params``, and, when
    the data's ``emit_log_lik`` is 1, its own per-record ``log_lik`` (S x n; the tests compare it
    with :meth:`Family.log_lik`).

    Attributes
    ----------
    name : str
        The model's name in ``ppmlib.fit(name, ...)`` and the Stan program's file stem.
    params : tuple of str
        The parameters kept as draws (``Fit.draws`` keys); draw axis first: (S,) for a scalar,
        (S, K) for a vector.
    default_prior : dict
        Prior setting -> default value, the names the Stan program reads.
    positive_prior : tuple of str
        The prior settings that must be > 0 (scales, shapes, rates); :meth:`Family.check_prior` refuses
        anything else there.
    adapt_delta : float
        NUTS's target acceptance rate for this family when the :class:`ppmlib.Sampler` leaves it
        unset: the setting at which its fits pass the diagnostics gate (Stan's 0.8; the mixture 0.9).

    Notes
    -----
    What a subclass provides (``draws`` is a dict name -> array with the draw axis first):

    * ``check_y(y) -> (n,) array``: the checked data (TypeError / ValueError naming ``y``).
    * ``check_X(X, n) -> (n, K) array or None``: the checked design; the default refuses any X.
    * ``stan_data(y, X, weights, prior, emit_log_lik) -> dict``: the program's data block.
    * ``log_lik(draws, y, X) -> (S, n) array``: the *unweighted* log p(y_i | theta_s), in numpy.
    * ``location(draws) -> (S,) array``: the draws of the mean parameter (the papers' mu).
    * ``predict(draws, X, n, rng) -> (S, n) array``: one synthetic dataset per draw.
    * optionally ``distinct(y, X)`` (records that share their log-likelihood, for speed) and
      ``diagnostic_draws(draws, y, X)`` (what R-hat and ESS judge, when parameters are not identified).
    * optionally ``exact_draws(data, chains=, draws=, warmup=, seed=) -> dict``: draws made without
      Stan from ``stan_data``'s dict, which :meth:`ppmlib.Sampler.sample` then runs instead of NUTS
      (:class:`CellNormal`'s Gibbs sampler).

    Examples
    --------
    >>> fam = family("poisson")
    >>> fam.name, fam.params
    ('poisson', ('lambda',))
    >>> fit = ppmlib.example_fit()
    >>> fam.log_lik(fit.draws, fit.y, fit.X).shape == (fit.n_draws, fit.y.size)
    True
    """
    name: str
    params: tuple
    default_prior: dict
    positive_prior: tuple = ()
    #: NUTS's target acceptance rate when the Sampler leaves it unset (Stan's default 0.8)
    adapt_delta: float = 0.8
    #: params that are the same in every draw (public bins, the cells): left out of R-hat and ESS
    constant_params: tuple = ()

    def check_y(self, y) -> np.ndarray:
        """The data as the family uses it, shape (n,).

        Parameters
        ----------
        y : array_like, shape (n,)
            The confidential data.

        Returns
        -------
        ndarray, shape (n,)
        """
        raise NotImplementedError

    def check_X(self, X, n: int):
        """The design matrix as the family uses it: None for the intercept-only count families.

        Parameters
        ----------
        X : array_like, shape (n, K), or None
            The design matrix.
        n : int
            The number of records.

        Returns
        -------
        ndarray, shape (n, K), or None
        """
        if X is not None:
            raise BadArgument(f"X is only used by the 'normal' and 'mixture' models; the {self.name!r} model is "
                             "intercept-only")
        return None

    def check_prior(self, prior: dict | None = None) -> dict:
        """The full prior settings: the defaults with ``prior``'s overrides, every value checked.

        The one prior validator: :func:`ppmlib.fit`, :func:`ppmlib.synthesizer`, the closed forms of
        :mod:`ppmlib.inference.exact` and the audit all go through it.

        Parameters
        ----------
        prior : dict, optional
            Setting -> value overrides of ``default_prior``; None keeps the defaults.

        Returns
        -------
        dict
            Every setting of ``default_prior``, the overrides as floats.

        Raises
        ------
        TypeError
            ``prior`` is not a dict, or a value is not a real number.
        ValueError
            An unknown setting, a non-finite value, or a value <= 0 where ``positive_prior`` needs > 0.

        Examples
        --------
        >>> family("poisson").check_prior({"prior_rate": 0.01})
        {'prior_shape': 1.0, 'prior_rate': 0.01}
        >>> family("poisson").check_prior({"prior_rate": 0})
        Traceback (most recent call last):
        ...
        ppmlib.errors.BadArgument: prior setting 'prior_rate' must lie in (0, inf], got 0
        """
        if prior is None:
            return dict(self.default_prior)
        if not isinstance(prior, dict):
            raise TypeError(f"prior must be a dict, got {type(prior).__name__}")
        unknown = set(prior) - set(self.default_prior)
        if unknown:
            raise BadArgument(f"unknown prior setting(s) {sorted(unknown)} for {self.name!r}; "
                             f"known: {sorted(self.default_prior)}")
        checked = {k: _checks.real(v, f"prior setting {k!r}", low=0 if k in self.positive_prior else None,
                                   low_open=k in self.positive_prior) for k, v in prior.items()}
        return {**self.default_prior, **checked}

    def stan_data(self, y, X, weights, prior, emit_log_lik: bool, censoring=None) -> dict:
        """The data block of ``stan/<name>.stan``.

        Parameters
        ----------
        y, X : arrays
            As :meth:`Family.check_y` and :meth:`Family.check_X` return them.
        weights : ndarray, shape (n,)
            The record weights alpha in [0, 1].
        prior : dict
            As :meth:`Family.check_prior` returns it.
        emit_log_lik : bool
            Ask the program for its own per-record log-likelihood.
        censoring : ppmlib.models.censoring.Censoring, optional
            Censor every record's term (the strict mechanism); None fits the pseudo posterior.

        Returns
        -------
        dict
            Name -> value, as the program's ``data`` block declares them.
        """
        return {"n": y.size, "y": y, "weights": weights, **prior, "emit_log_lik": int(emit_log_lik),
                **_censor_by_record(censoring, y.size)}

    def best_log_lik(self, y, X, *, reference_scale: float = 1.0) -> np.ndarray:
        """s_i: each record's log-likelihood at the parameter that fits it best, from its own values
        and public constants only (the censoring's centre, :mod:`ppmlib.mechanism.censoring`).

        Parameters
        ----------
        y, X : arrays
            As the checks return them.
        reference_scale : float
            The public scale of the continuous families (whose density has no finite maximum).

        Returns
        -------
        ndarray, shape (n,)
        """
        raise NotImplementedError

    def censored_log_lik(self, draws: dict, y, X, weights, censoring) -> np.ndarray:
        """Each record's censored term u_i = clip(alpha_i log p(y_i | theta_s) - shift_i, -epsilon/2, epsilon/2).

        What the censored program adds to the log posterior for record i (the Stan programs compute
        the same clip); the uncensored fit adds alpha_i log p(y_i | theta_s).

        Parameters
        ----------
        draws : dict
            The family's ``params``, draw axis first (S draws).
        y, X : arrays
            Records, as the checks return them.
        weights : ndarray, shape (n,)
            alpha.
        censoring : ppmlib.models.censoring.Censoring
            The window and the records' weighted centres.

        Returns
        -------
        ndarray, shape (S, n)
        """
        from ppmlib.models.censoring import censored_terms
        return censored_terms(self.log_lik(draws, y, X), weights, censoring)

    def box_loss_bound(self, y, X, box: dict, *, reference_scale: float = 1.0) -> np.ndarray:
        """B_i = max over a public parameter box of abs(log p(y_i | theta) - s_i), per record.

        Parameters
        ----------
        y, X : arrays
            As the checks return them.
        box : dict
            The family's box (see the subclass): parameter ranges stated before seeing the data.
        reference_scale : float
            As for :meth:`best_log_lik`.

        Returns
        -------
        ndarray, shape (n,)
        """
        raise NotImplementedError

    def log_lik(self, draws: dict, y, X) -> np.ndarray:
        """The unweighted per-record log-likelihood log p(y_i | theta_s).

        Parameters
        ----------
        draws : dict
            The family's ``params``, draw axis first.
        y, X : arrays
            Records (or the distinct keys of :meth:`Family.distinct`), as the checks return them.

        Returns
        -------
        ndarray, shape (S, n)
        """
        raise NotImplementedError

    def distinct(self, y, X) -> tuple:
        """Records grouped by what their log-likelihood depends on: ``(keys_y, keys_X, index)``.

        ``log_lik(draws, keys_y, keys_X)[:, index]`` equals ``log_lik(draws, y, X)``, so bounds and
        risks can be computed per key (S x u) instead of per record (S x n). The default is no
        grouping (u = n); the count families group by value.

        Parameters
        ----------
        y, X : arrays
            As the checks return them.

        Returns
        -------
        tuple
            keys_y (u,), keys_X (u, K) or None, index (n,) of each record's key.
        """
        return y, X, np.arange(y.size)

    def location(self, draws: dict) -> np.ndarray:
        """Draws of the family's mean parameter (the papers' mu).

        Parameters
        ----------
        draws : dict
            The family's ``params``, draw axis first.

        Returns
        -------
        ndarray, shape (S,)
        """
        raise NotImplementedError

    def predict(self, draws: dict, X, n: int, rng: np.random.Generator) -> np.ndarray:
        """One synthetic dataset of n records per draw, from the posterior predictive.

        Parameters
        ----------
        draws : dict
            The family's ``params``, draw axis first (S draws).
        X : ndarray, shape (n, K), or None
            The design matrix of the records to synthesize.
        n : int
            Records per dataset.
        rng : numpy.random.Generator
            The source of randomness.

        Returns
        -------
        ndarray, shape (S, n)
        """
        raise NotImplementedError

    def diagnostic_draws(self, draws: dict, y, X) -> dict:
        """The quantities whose R-hat and ESS judge convergence: the parameters themselves, except
        for families whose parameters are not identified (the mixture's labels switch).

        Parameters
        ----------
        draws : dict
            The family's ``params``, draw axis first.
        y, X : arrays
            The data the fit saw.

        Returns
        -------
        dict
            Name -> draws, draw axis first (without ``constant_params``).
        """
        if not self.constant_params:
            return draws
        return {k: v for k, v in draws.items() if k not in self.constant_params}


class _Counts(Family):
    """A family for counts: y is checked as counts, and records share their log-likelihood by value."""

    def check_y(self, y):
        return _checks.counts(y, high=STAN_INT_LIMIT)

    def distinct(self, y, X):
        return _by_value(y)


def _value_weights(y, weights) -> tuple[np.ndarray, np.ndarray]:
    """The distinct values of y and, for each, the total weight of its records."""
    values, index = np.unique(y, return_inverse=True)
    return values, np.bincount(index, weights=weights, minlength=values.size)


class Poisson(_Counts):
    name = "poisson"
    params = ("lambda",)
    default_prior = POISSON_PRIOR
    positive_prior = ("prior_shape", "prior_rate")

    def stan_data(self, y, X, weights, prior, emit_log_lik, censoring=None):
        # the weighted Poisson likelihood needs only these sums; y itself is sent only to write
        # Stan's own per-record log_lik (tests), so the data sent to Stan does not grow with n.
        # Censored, the sums are not used (0) and the records go as groups (_censor_by_group)
        values, value_weights = _value_weights(y, weights)
        plain = censoring is None
        return {"n": y.size, "sum_w": float(weights.sum()) if plain else 0.0,
                "sum_wy": float(weights @ y) if plain else 0.0,
                "sum_w_lgamma": float(value_weights @ special.gammaln(values + 1.0)) if plain else 0.0,
                **prior, "emit_log_lik": int(emit_log_lik), "y": y if emit_log_lik else np.zeros(0, int),
                **_censor_by_group(censoring, y, weights)}

    def best_log_lik(self, y, X, *, reference_scale=1.0):
        # the saturated log-likelihood: lambda = y_i (0 log 0 = 0)
        y = np.asarray(y, dtype=float)
        return special.xlogy(y, y) - y - special.gammaln(y + 1.0)

    def box_loss_bound(self, y, X, box, *, reference_scale=1.0):
        # ``box = {"lambda": (low, high)}``: the log-likelihood is concave in lambda, so the loss
        # s_i - f is largest at an end of the box (and never negative: s_i is the maximum).
        low, high = _box_range(box, "lambda", positive=True)
        ends = {"lambda": np.array([low, high])}
        return (self.best_log_lik(y, X) - self.log_lik(ends, y, X)).max(axis=0)

    def log_lik(self, draws, y, X):
        lam = draws["lambda"][:, None]
        return y * np.log(lam) - lam - special.gammaln(y + 1.0)

    def location(self, draws):
        return draws["lambda"]

    def predict(self, draws, X, n, rng):
        return rng.poisson(draws["lambda"][:, None], size=(draws["lambda"].size, n))


class NegBin(_Counts):
    name = "negbin"
    params = ("mu", "phi")
    default_prior = {"prior_log_mu_mean": 0.0, "prior_log_mu_sd": 10.0, "prior_inv_sqrt_phi_sd": 1.0}
    positive_prior = ("prior_log_mu_sd", "prior_inv_sqrt_phi_sd")

    def stan_data(self, y, X, weights, prior, emit_log_lik, censoring=None):
        # the program sums the likelihood over distinct values, each with its records' total weight;
        # y is sent only to write Stan's own per-record log_lik (tests). Censored, the records go as
        # groups instead (_censor_by_group) and the value sums are empty
        values, value_weights = _value_weights(y, weights)
        if censoring is not None:
            values, value_weights = np.zeros(0, int), np.zeros(0)
        return {"n": y.size, **prior, "emit_log_lik": int(emit_log_lik),
                "y": y if emit_log_lik else np.zeros(0, int),
                "n_values": values.size, "values": values, "value_weights": value_weights,
                **_censor_by_group(censoring, y, weights)}

    def best_log_lik(self, y, X, *, reference_scale=1.0):
        # the Poisson saturated value: the negative binomial's supremum at mu = y_i as phi grows
        return family("poisson").best_log_lik(y, X)

    def box_loss_bound(self, y, X, box, *, reference_scale=1.0):
        # ``box = {"mu": (low, high), "phi": (low, high)}``: the loss is evaluated on a 65 x 65
        # grid over the box, log-spaced, ends included (an approximation of the maximum: the
        # weights it gives still depend on the record and public constants only).
        mu = np.geomspace(*_box_range(box, "mu", positive=True), 65)
        phi = np.geomspace(*_box_range(box, "phi", positive=True), 65)
        grid = {"mu": np.repeat(mu, phi.size), "phi": np.tile(phi, mu.size)}
        return np.abs(self.best_log_lik(y, X) - self.log_lik(grid, y, X)).max(axis=0)

    def log_lik(self, draws, y, X):
        mu, phi = draws["mu"][:, None], draws["phi"][:, None]
        y = np.asarray(y, dtype=float)
        # Written to stay accurate when phi is huge (the Poisson limit, which the sampler can visit):
        # lgamma(y + phi) - lgamma(phi) = lgamma(y) - betaln(y, phi) for y > 0 (0 for y = 0), and
        # phi log(phi / (mu + phi)) = -phi log1p(mu / phi); the plain differences lose everything
        # to cancellation at phi ~ 1e17 (an error of thousands in log p).
        positive = np.maximum(y, 1.0)
        lgamma_ratio = np.where(y > 0, special.gammaln(positive) - special.betaln(positive, phi), 0.0)
        return (lgamma_ratio - special.gammaln(y + 1.0) - phi * np.log1p(mu / phi)
                + y * (np.log(mu) - np.log(mu + phi)))

    def location(self, draws):
        return draws["mu"]

    def predict(self, draws, X, n, rng):
        mu, phi = draws["mu"][:, None], draws["phi"][:, None]
        return negbin_draw(rng, mu, phi, size=(mu.size, n))


class Normal(Family):
    name = "normal"
    params = ("beta", "sigma")
    default_prior = {"prior_beta_sd": 10.0, "prior_sigma_sd": 5.0}
    positive_prior = ("prior_beta_sd", "prior_sigma_sd")

    def check_y(self, y):
        return _checks.finite_array(y, "y", ndim=1)

    def check_X(self, X, n):
        if X is None:
            return np.ones((n, 1))  # intercept-only model
        X = _checks.finite_array(X, "X")
        if X.ndim != 2 or X.shape[0] != n:
            raise BadArgument(f"X must be an (n, K) design matrix with n = {n} rows, got shape {X.shape}")
        return X

    def stan_data(self, y, X, weights, prior, emit_log_lik, censoring=None, sufficient: bool | None = None):
        """The data block of ``stan/normal.stan``: the alpha-weighted sufficient statistics, or the records.

        The weighted log-likelihood is exactly a function of sum_i alpha_i, sum_i alpha_i x_i x_i',
        sum_i alpha_i x_i y_i and sum_i alpha_i y_i^2 (:func:`normal_sufficient_statistics`), so by
        default the program gets only those (``sufficient = 1``; y, X and weights go empty) and
        the fit's cost does not grow with n. Stan's own per-record ``log_lik`` needs the records:
        ``emit_log_lik`` sends them (``sufficient = 0``), as do ``censoring`` (a censored fit clips each
        record's own term) and ``sufficient=False``.

        Parameters
        ----------
        y : ndarray, shape (n,)
        X : ndarray, shape (n, K)
        weights : ndarray, shape (n,)
        prior : dict
        emit_log_lik : bool
            As for :meth:`Family.stan_data`.
        censoring : ppmlib.models.censoring.Censoring, optional
            As for :meth:`Family.stan_data`.
        sufficient : bool, optional
            Send the sums (True) or the records (False); None: the sums unless ``emit_log_lik`` or
            ``censoring``.

        Returns
        -------
        dict
            The program's data block.

        Raises
        ------
        ppmlib.errors.BadArgument
            ``sufficient=True`` with ``emit_log_lik`` or ``censoring`` (both need the records).
        """
        K = X.shape[1]
        if sufficient is None:
            sufficient = not emit_log_lik and censoring is None
        if sufficient and (emit_log_lik or censoring is not None):
            raise BadArgument("emit_log_lik (Stan's per-record log_lik) and censoring need the records: "
                              "pass sufficient=False (or leave it None)")
        if not sufficient:
            return {**super().stan_data(y, X, weights, prior, emit_log_lik, censoring), "K": K, "X": X, "sufficient": 0,
                    "sum_w": [], "XWX": np.zeros((0, 0)), "XWy": np.zeros(0), "yWy": []}
        return self.sufficient_data(normal_sufficient_statistics(y, X, weights), y.size, prior)

    def sufficient_data(self, sums: dict, n: int, prior: dict) -> dict:
        """The program's data block from the alpha-weighted sums alone (``sufficient = 1``): what
        :meth:`stan_data` sends by default, and what a fit over partitions sends without any record.

        Parameters
        ----------
        sums : dict
            ``sum_w``, ``XWX`` (K, K), ``XWy`` (K,), ``yWy`` (:func:`normal_sufficient_statistics`).
        n : int
            The number of records.
        prior : dict
            The full prior settings (:meth:`Family.check_prior`).

        Returns
        -------
        dict
        """
        K = np.shape(sums["XWy"])[0]
        return {"n": int(n), "K": K, "sufficient": 1, "y": np.zeros(0), "X": np.zeros((0, K)),
                "weights": np.zeros(0), "sum_w": [sums["sum_w"]], "XWX": sums["XWX"], "XWy": sums["XWy"],
                "yWy": [sums["yWy"]], **prior, "emit_log_lik": 0, **_censor_by_record(None, int(n))}

    def best_log_lik(self, y, X, *, reference_scale=1.0):
        # log Normal(y_i | y_i, sigma_ref): the record fitted exactly, at the public reference scale
        scale = _checks.real(reference_scale, "reference_scale", low=0, low_open=True)
        return np.full(np.shape(y)[0], -np.log(scale) - 0.5 * np.log(2 * np.pi))

    def box_loss_bound(self, y, X, box, *, reference_scale=1.0):
        # ``box = {"mean": (low, high), "sigma": (low, high)}``: every record's mean X_i beta in
        # [low, high] and every scale in the sigma range (for the mixture: every component's). The
        # loss s_i - f = log(sigma / sigma_ref) + (y_i - mean)^2 / (2 sigma^2) is largest at the mean
        # farthest from y_i and at an end of the sigma range, and smallest at the nearest mean and
        # the sigma closest to the distance; B_i is the larger of the two in absolute value.
        scale = _checks.real(reference_scale, "reference_scale", low=0, low_open=True)
        m_low, m_high = _box_range(box, "mean")
        s_low, s_high = _box_range(box, "sigma", positive=True)
        y = np.asarray(y, dtype=float)
        far = np.maximum(np.abs(y - m_low), np.abs(y - m_high))
        near = np.where((y >= m_low) & (y <= m_high), 0.0, np.minimum(np.abs(y - m_low), np.abs(y - m_high)))

        def loss(d, sigma):
            return np.log(sigma / scale) + d**2 / (2 * sigma**2)

        largest = np.maximum(loss(far, s_low), loss(far, s_high))
        smallest = loss(near, np.clip(near, s_low, s_high))
        return np.maximum(np.abs(largest), np.abs(smallest))

    def mean(self, draws, X) -> np.ndarray:
        """Model mean X_i beta_s of every record under every draw, S x n.

        Parameters
        ----------
        draws : dict
            The family's ``params``, draw axis first (S draws).
        X : ndarray, shape (n, K)
            The design matrix.

        Returns
        -------
        ndarray, shape (S, n)
        """
        return draws["beta"] @ X.T

    def location(self, draws):
        return draws["beta"][:, 0]  # the intercept (the mean when X is intercept-only)

    def log_lik(self, draws, y, X):
        # in place on the (S, n) mean, five passes of multiplications (no division, no temporary of
        # S x n): -0.5 ((mean - y) / sigma)**2 - (log(sigma) + log(2 pi) / 2), which is
        # -0.5 z**2 - log(sigma) - log(2 pi) / 2 to a few units in the last place of its terms. The
        # bounds of a file of 10^6 records evaluate it for every draw and record.
        sigma = draws["sigma"]
        out = self.mean(draws, X)
        inverse = 1.0 / sigma
        if not np.all(np.isfinite(inverse)):   # sigma 0 or subnormal: divide, so that a record on the mean stays finite
            return self._log_lik_dividing(out, y, sigma)
        out -= y
        out *= inverse[:, None]
        np.square(out, out=out)
        out *= -0.5
        out -= (np.log(sigma) + 0.5 * np.log(2 * np.pi))[:, None]
        return out

    @staticmethod
    def _log_lik_dividing(out: np.ndarray, y, sigma: np.ndarray) -> np.ndarray:
        """-0.5 z**2 - log(sigma) - log(2 pi) / 2 with z = (y - mean) / sigma, in place on the mean ``out``."""
        sigma = sigma[:, None]
        np.subtract(y, out, out=out)
        out /= sigma
        np.square(out, out=out)
        out *= -0.5
        out -= np.log(sigma)
        out -= 0.5 * np.log(2 * np.pi)
        return out

    def predict(self, draws, X, n, rng):
        return rng.normal(self.mean(draws, X), draws["sigma"][:, None])


def _censor_by_record(censoring, n: int) -> dict:
    """The censoring data of the programs that loop over records (normal, mixture)."""
    if censoring is None:
        return {"censor": 0, "censor_bound": 0.0, "censor_shift": np.zeros(0)}
    return {"censor": 1, "censor_bound": float(censoring.bound), "censor_shift": np.asarray(censoring.shifts, float)}


def _censor_by_group(censoring, y, weights) -> dict:
    """The censoring data of the count programs: records grouped by equal (value, weight, shift)."""
    if censoring is None:
        return {"censor": 0, "censor_bound": 0.0, "n_groups": 0, "group_values": np.zeros(0, int),
                "group_sizes": np.zeros(0), "group_weights": np.zeros(0), "group_shifts": np.zeros(0)}
    rows, sizes = np.unique(np.column_stack([y, weights, censoring.shifts]), axis=0, return_counts=True)
    return {"censor": 1, "censor_bound": float(censoring.bound), "n_groups": sizes.size,
            "group_values": rows[:, 0].astype(np.int64), "group_sizes": sizes.astype(float),
            "group_weights": rows[:, 1], "group_shifts": rows[:, 2]}


def _box_range(box, name: str, positive: bool = False) -> tuple[float, float]:
    """``box[name]`` as a checked (low, high) pair."""
    if not isinstance(box, dict) or name not in box:
        raise BadArgument(f"box must be a dict with the range {name!r}: {{{name!r}: (low, high), ...}}, got {box!r}")
    try:
        low, high = (float(v) for v in box[name])
    except (TypeError, ValueError) as err:
        raise TypeError(f"box[{name!r}] must be a (low, high) pair of numbers, got {box[name]!r}") from err
    if not (np.isfinite(low) and np.isfinite(high) and low <= high and (low > 0 or not positive)):
        raise BadArgument(f"box[{name!r}] must be finite with low <= high{' and low > 0' if positive else ''}, "
                         f"got ({low:g}, {high:g})")
    return low, high


def normal_sufficient_statistics(y, X, weights, block: int = 65536) -> dict:
    """The alpha-weighted sufficient statistics of the normal regression, summed over blocks of records.

    sum_w = sum_i alpha_i, XWX = sum_i alpha_i x_i x_i', XWy = sum_i alpha_i x_i y_i and
    yWy = sum_i alpha_i y_i^2: the weighted log-likelihood of every (beta, sigma) is
    -(yWy - 2 beta' XWy + beta' XWX beta) / (2 sigma^2) - sum_w (log sigma + log(2 pi) / 2).
    Sums over disjoint parts of the records add up (a cluster sums its partitions).

    Parameters
    ----------
    y : ndarray, shape (n,)
        The records' values (log income, say).
    X : ndarray, shape (n, K)
        The design matrix.
    weights : ndarray, shape (n,)
        The record weights alpha.
    block : int
        Records per block (memory: a block of K columns at a time).

    Returns
    -------
    dict
        ``sum_w`` (float), ``XWX`` (K, K), ``XWy`` (K,), ``yWy`` (float).

    Examples
    --------
    >>> X = np.array([[1.0, 0.0], [1.0, 1.0], [1.0, 2.0]])
    >>> s = normal_sufficient_statistics(np.array([1.0, 2.0, 4.0]), X, np.array([1.0, 0.5, 0.0]))
    >>> s["sum_w"], s["XWy"].tolist(), s["yWy"]
    (1.5, [2.0, 1.0], 3.0)
    """
    K = X.shape[1]
    out = {"sum_w": 0.0, "XWX": np.zeros((K, K)), "XWy": np.zeros(K), "yWy": 0.0}
    for start in range(0, y.size, max(1, int(block))):
        part = slice(start, start + max(1, int(block)))
        # X in one memory layout and y'y by numpy's own sum: the same bits whatever the caller's layout
        # and BLAS's thread count (a multi-threaded dot splits its sum), so a cluster's partial sums
        # are the in-memory ones
        w, Xb, yb = weights[part], np.ascontiguousarray(X[part]), y[part]
        weighted = Xb * w[:, None]
        out["XWX"] += Xb.T @ weighted
        out["XWy"] += weighted.T @ yb
        out["yWy"] += float(np.sum(w * (yb * yb)))
        out["sum_w"] += float(w.sum())
    return out


def _by_value(y) -> tuple:
    """Count records repeat: the distinct values are the keys (u is about the range of the data)."""
    values, index = np.unique(y, return_inverse=True)
    return values, None, index


def family(model) -> Family:
    """The family object of a model name: one of :data:`FAMILIES`.

    Parameters
    ----------
    model : str
        "poisson", "negbin", "normal" or "mixture".

    Returns
    -------
    Family
        The one shared instance (its methods hold no state).

    Raises
    ------
    TypeError, ValueError
        ``model`` is not a string, or names no family (the message lists them).

    Examples
    --------
    >>> family("negbin").params
    ('mu', 'phi')
    """
    if not isinstance(model, str):
        raise TypeError(f"model must be a string, one of {sorted(FAMILIES)}, got {type(model).__name__}")
    if model not in FAMILIES:
        raise BadArgument(f"unknown model {model!r}; choose one of {sorted(FAMILIES)}")
    return FAMILIES[model]


# --- CE income chapter: a finite mixture of normal regressions -------------------------

class Mixture(Normal):
    """Finite mixture of normal regressions (stan/mixture.stan), for log income.

    y_i ~ sum_k pi_k Normal(X_i beta_k, sigma_k), k = 1..K. The record's log-likelihood is the
    *marginal* mixture density (cluster indicators summed out), so it, the bounds and the
    synthetic data do not depend on how the components are labelled. K (the deliberately too
    large number of components) and the Dirichlet concentration are settings of the prior: pass
    them as ``prior={"K": 3, "dirichlet_concentration": 6.0}`` (not sparse by default: the program's header
    says why); the other settings (the prior of
    the component centres, of their spread over the records and of the scales) are stated in the
    program's header.

    X must start with the intercept column (ones) and have linearly independent columns: the
    program samples in a centred QR basis of X (see :func:`ppmlib.datasets.design.independent_columns`
    for a design with nested predictors).

    Draws: ``mixing`` (S, K), ``beta`` (S, P, K) (column k is component k, on the columns of X),
    ``sigma`` (S, K). The program orders the components by their scale, which identifies
    components that differ in spread (log income's narrow bulk and wide tails). Components with
    equal scales that differ only in their centres are not identified by it: a chain that starts
    with their labels the other way round stays there, and R-hat shows it.
    """
    name = "mixture"
    params = ("mixing", "beta", "sigma")
    # Stan's 0.8 left divergences in the CE chapter's fits (seed 3, ten predictors: R-hat 1.032, bulk
    # ESS 88, 119 divergences); the chapter's 0.9 passes the diagnostics gate
    adapt_delta = 0.9
    # on the log-income scale; a nearly empty component is drawn almost from its prior, so the
    # prior keeps it at plausible incomes (exp() of a wild prior draw would be an absurd income)
    default_prior = {"K": 3, "dirichlet_concentration": 6.0, "prior_centre_mean": 11.0, "prior_centre_sd": 1.0,
                     "prior_spread_sd": 1.0, "prior_sigma_mean": 1.0, "shared_slopes": 1}
    positive_prior = ("dirichlet_concentration", "prior_centre_sd", "prior_spread_sd", "prior_sigma_mean")

    def check_X(self, X, n):
        """The design as the program needs it: the intercept column first, independent columns.

        Parameters
        ----------
        X : array_like, shape (n, P), or None
            The design matrix; None is the intercept-only design.
        n : int
            The number of records.

        Returns
        -------
        ndarray, shape (n, P)

        Raises
        ------
        ValueError
            The first column is not all ones, or the columns are linearly dependent (the program
            samples in a QR basis of the centred non-intercept columns).
        """
        X = super().check_X(X, n)
        if not np.all(X[:, 0] == 1.0):
            raise BadArgument("the mixture's X must start with the intercept column (all ones), as "
                             "ppmlib.design_matrix makes it; its first column is not")
        rank = np.linalg.matrix_rank(X)
        if rank < X.shape[1]:
            raise BadArgument(f"the mixture's X must have linearly independent columns (its program samples in a QR "
                             f"basis); this one has {X.shape[1]} columns of rank {rank}: drop the redundant ones "
                             "with ppmlib.datasets.design.independent_columns")
        return X

    def stan_data(self, y, X, weights, prior, emit_log_lik, censoring=None):
        K = prior["K"]
        if K != int(K) or K < 1:
            raise BadArgument(f"prior['K'] (the number of mixture components) must be a positive integer, got {K!r}")
        if prior["shared_slopes"] not in (0, 1):
            raise BadArgument(f"prior['shared_slopes'] must be 0 or 1, got {prior['shared_slopes']!r}")
        prior = {**prior, "K": int(K), "shared_slopes": int(prior["shared_slopes"])}
        # Family's data, not Normal's: here K is the number of components and P the design's columns
        return {**Family.stan_data(self, y, X, weights, prior, emit_log_lik, censoring), "P": X.shape[1], "X": X}

    def component_log_densities(self, draws, y, X) -> np.ndarray:
        """log pi_k + log Normal(y_i | X_i beta_k, sigma_k), shape (S, n, K).

        Parameters
        ----------
        draws : dict
            The family's ``params``, draw axis first (S draws).
        y : array_like, shape (n,)
            The records' values (log income).
        X : ndarray, shape (n, P)
            The design matrix.

        Returns
        -------
        ndarray, shape (S, n, K)
        """
        mu = np.einsum("np,spk->snk", X, draws["beta"])
        sigma = draws["sigma"][:, None, :]
        z = (np.asarray(y, float)[None, :, None] - mu) / sigma
        return np.log(draws["mixing"])[:, None, :] - 0.5 * z**2 - np.log(sigma) - 0.5 * np.log(2 * np.pi)

    def log_lik(self, draws, y, X):
        # the marginal density: log sum_k exp(...), the cluster indicator summed out
        return _log_sum_exp_last(self.component_log_densities(draws, y, X))

    def mean(self, draws, X) -> np.ndarray:
        """Model mean of every record under every draw, sum_k pi_k X_i beta_k, S x n.

        Parameters
        ----------
        draws, X
            As for ``Normal.mean``; X has P columns.

        Returns
        -------
        ndarray, shape (S, n)
        """
        return np.einsum("np,spk,sk->sn", X, draws["beta"], draws["mixing"])

    def location(self, draws):
        # the mean of a record at every reference level (intercept only), label-invariant
        return np.einsum("sk,sk->s", draws["mixing"], draws["beta"][:, 0, :])

    def predict(self, draws, X, n, rng):
        S, K = draws["mixing"].shape
        # a component for every (draw, record): inverse-CDF on the cumulative mixing weights
        cumulative = np.cumsum(draws["mixing"], axis=1)
        u = rng.uniform(size=(S, n)) * cumulative[:, -1:]
        component = np.minimum((u[:, :, None] > cumulative[:, None, :]).sum(axis=2), K - 1)
        beta = np.take_along_axis(draws["beta"], component[:, None, :], axis=2)  # (S, P, n)
        mu = np.einsum("np,spn->sn", X, beta)
        return rng.normal(mu, np.take_along_axis(draws["sigma"], component, axis=1))

    def diagnostic_draws(self, draws, y, X) -> dict:
        """Label-invariant scalars per draw, for R-hat and ESS (labels switch between chains).

        ``log_lik_sum`` (the sum of the records' mixture log-densities), ``predictive_mean``
        (the mean of y over the records' predictive distributions) and ``predictive_p90`` (the
        90th percentile of that pooled predictive distribution), each of shape (S,).

        Parameters
        ----------
        draws : dict
            The family's ``params``, draw axis first (S draws).
        y : ndarray, shape (n,)
            The data the fit saw.
        X : ndarray, shape (n, P)
            Its design matrix.

        Returns
        -------
        dict
            ``log_lik_sum``, ``predictive_mean`` and ``predictive_p90``, each (S,).
        """
        return {"log_lik_sum": self.log_lik(draws, y, X).sum(axis=1),
                "predictive_mean": self.mean(draws, X).mean(axis=1),
                "predictive_p90": self.pooled_quantile(draws, X, 0.9)}

    def pooled_quantile(self, draws, X, level: float, tol: float = 1e-4) -> np.ndarray:
        """Per draw, the ``level`` quantile of the records' predictive distributions pooled, (S,).

        Solves mean_i sum_k pi_k Phi((t - mu_ik) / sigma_k) = level for t by bisection, one
        block of draws at a time.

        Parameters
        ----------
        draws : dict
            The family's ``params``, draw axis first (S draws).
        X : ndarray, shape (n, P)
            The design matrix of the records pooled.
        level : float
            The quantile's level in (0, 1), e.g. 0.9.
        tol : float
            Bisection stops when every draw's bracket is narrower than this (on y's scale).

        Returns
        -------
        ndarray, shape (S,)
        """
        out = np.empty(draws["mixing"].shape[0])
        step = max(1, 2**21 // (X.shape[0] * draws["mixing"].shape[1]))
        for start in range(0, out.size, step):
            part = {k: v[start:start + step] for k, v in draws.items() if k in self.params}
            mu = np.einsum("np,spk->snk", X, part["beta"])
            sigma, w = part["sigma"][:, None, :], part["mixing"][:, None, :]
            lo = (mu - 10 * sigma).min(axis=(1, 2))
            hi = (mu + 10 * sigma).max(axis=(1, 2))
            while np.max(hi - lo) > tol:
                mid = 0.5 * (lo + hi)
                below = (w * special.ndtr((mid[:, None, None] - mu) / sigma)).sum(axis=2).mean(axis=1) < level
                lo, hi = np.where(below, mid, lo), np.where(below, hi, mid)
            out[start:start + step] = 0.5 * (lo + hi)
        return out


class HetNormal(Normal):
    """Heteroskedastic normal regression (stan/hetnormal.stan), for log income and log wages.

    y_i ~ Normal(X_i beta, exp(X_i gamma)): the mean and the log scale are both regressions on the
    design X, whose first column must be the intercept (the log scale's intercept has its own
    prior). On a design of categorical predictors with their interactions
    (:func:`ppmlib.datasets.design.interaction_design`) every cell of levels has its own mean and
    spread: a wage file's narrow bulk and its wide tails of part-time or high earners.

    Uncensored fits send the program each distinct row of X with its records' weighted sums
    (sum alpha, sum alpha y, sum alpha y^2): the weighted log-likelihood is exactly a function of
    those, so the fit's cost grows with the number of cells, not of records. Censored fits and
    ``emit_log_lik`` send the records. The censoring's centre and the strict box are the normal
    model's (a box's sigma range must cover every record's scale exp(X_i gamma)).

    Draws: ``beta`` (S, K), ``gamma`` (S, K).
    """
    name = "hetnormal"
    params = ("beta", "gamma")
    default_prior = {"prior_beta_sd": 10.0, "prior_log_sigma_sd": 2.0, "prior_gamma_sd": 1.0}
    positive_prior = ("prior_beta_sd", "prior_log_sigma_sd", "prior_gamma_sd")

    def check_X(self, X, n):
        """The design, its first column the intercept (the log scale's intercept has its own prior).

        Parameters
        ----------
        X : array_like, shape (n, K), or None
            The design matrix; None is the intercept-only design.
        n : int
            The number of records.

        Returns
        -------
        ndarray, shape (n, K)
        """
        X = super().check_X(X, n)
        if not np.all(X[:, 0] == 1.0):
            raise BadArgument("the hetnormal model's X must start with the intercept column (all ones), as "
                              "ppmlib.design_matrix makes it; its first column is not")
        return X

    def stan_data(self, y, X, weights, prior, emit_log_lik, censoring=None):
        K = X.shape[1]
        empty_cells = {"cells": 0, "cell_X": np.zeros((0, K)), "cell_w": np.zeros(0), "cell_wy": np.zeros(0),
                       "cell_wyy": np.zeros(0)}
        if emit_log_lik or censoring is not None:
            return {**Family.stan_data(self, y, X, weights, prior, emit_log_lik, censoring), "K": K, "X": X,
                    "n_records": y.size, **empty_cells}
        rows, index = np.unique(X, axis=0, return_inverse=True)
        index = np.asarray(index).reshape(-1)

        def total(values):
            return np.bincount(index, weights=values, minlength=rows.shape[0])

        return {"n": y.size, "K": K, "n_records": 0, "y": np.zeros(0), "X": np.zeros((0, K)), "weights": np.zeros(0),
                "cells": rows.shape[0], "cell_X": rows, "cell_w": total(weights), "cell_wy": total(weights * y),
                "cell_wyy": total(weights * y * y), **prior, "emit_log_lik": 0, **_censor_by_record(None, y.size)}

    def scale(self, draws, X) -> np.ndarray:
        """Every record's scale exp(X_i gamma_s) under every draw, S x n.

        Parameters
        ----------
        draws : dict
            The family's ``params``, draw axis first (S draws).
        X : ndarray, shape (n, K)
            The design matrix.

        Returns
        -------
        ndarray, shape (S, n)
        """
        return np.exp(draws["gamma"] @ X.T)

    def log_lik(self, draws, y, X):
        log_sigma = draws["gamma"] @ X.T
        z = (np.asarray(y, float)[None, :] - self.mean(draws, X)) * np.exp(-log_sigma)
        return -0.5 * z**2 - log_sigma - 0.5 * np.log(2 * np.pi)

    def predict(self, draws, X, n, rng):
        return rng.normal(self.mean(draws, X), self.scale(draws, X))


def _log_sum_exp_last(a: np.ndarray) -> np.ndarray:
    """log sum exp over the last axis, with the arithmetic of ``scipy.special.logsumexp`` (the same
    bits, edge cases included: all -inf, +inf, NaN) in a third of its time on (S, n, K) arrays.

    Why not scipy's: its array-API layer copies the array and makes several extra passes over it;
    the mixture's log-likelihood is computed for every fit's bounds (about 50 times per run of the
    CE chapter at 2,000 x 994 x 3). The maximum is set apart and the rest summed as scipy does:
    log1p(sum of the others' exp(a - max) / count of maxima) + log(count) + max.
    """
    top = a.max(axis=-1, keepdims=True)
    at_top = a == top
    count = at_top.sum(axis=-1, keepdims=True, dtype=a.dtype)
    with np.errstate(invalid="ignore", divide="ignore"):   # inf - inf and log(0) where scipy also gives inf/NaN
        rest = np.exp(np.where(at_top, -np.inf, a - top)).sum(axis=-1, keepdims=True)
        rest = np.where(rest == 0, rest, rest / count)
        return (np.log1p(rest) + np.log(count) + top)[..., 0]


class Binned(Family):
    """The binned model (stan/binned.stan): a categorical distribution over public bins of the
    column per cell of the keys, uniform within a bin, for log wages and log incomes.

    The bins are fixed by three public prior settings, ``bin_low``, ``bin_high`` and ``bin_width``
    (:func:`ppmlib.models.bins.bin_edges`), which must be given (no default range suits every
    column). A cell is a distinct row of the design X (the intercept first): the logits of cell u
    over the bins are x_u beta, beta a P x J matrix whose rows are random walks over the bins
    (smooth across neighbouring bins), the non-intercept rows shrunk toward zero by a shared scale
    (the cells toward each other); the program's header states the priors. A record in bin j of
    cell u has density p_uj / width, so its log-likelihood is log p_uj - log(width): LW, CM and the
    bounds use it unchanged. The best log-likelihood of any record is -log(width) (p_uj = 1).

    Refused before any fit: a value outside the bins' range (:func:`ppmlib.models.bins.bin_index`)
    and a column of X that fewer than ``min_cell_records`` records (default 5) have, since its
    shift of the logits would rest on those few records alone.

    Draws: ``beta`` (S, P, J), ``sigma_shape`` (S,), ``tau`` (S,) and ``edges`` (S, J + 1), the
    public bins repeated in every draw (so that ``log_lik`` and ``predict`` know them).
    """
    name = "binned"
    params = ("beta", "sigma_shape", "tau", "edges")
    constant_params = ("edges",)
    default_prior = {"bin_low": np.nan, "bin_high": np.nan, "bin_width": np.nan, "prior_shape_sd": 2.0,
                     "prior_effect_sd": 1.0, "min_cell_records": 5.0}
    positive_prior = ("bin_width", "prior_shape_sd", "prior_effect_sd")

    def check_y(self, y):
        return _checks.finite_array(y, "y", ndim=1)

    def check_X(self, X, n):
        X = Normal.check_X(self, X, n)
        if not np.all(X[:, 0] == 1.0):
            raise BadArgument("the binned model's X must start with the intercept column (all ones), as "
                              "ppmlib.design_matrix makes it; its first column is not")
        return X

    def edges(self, prior: dict) -> np.ndarray:
        """The public bins' edges from the prior settings (J + 1 of them).

        Parameters
        ----------
        prior : dict
            As :meth:`Family.check_prior` returns it, with ``bin_low``, ``bin_high``, ``bin_width`` set.

        Returns
        -------
        ndarray, shape (J + 1,)
        """
        from ppmlib.models.bins import bin_edges
        missing = [k for k in ("bin_low", "bin_high", "bin_width") if not np.isfinite(prior[k])]
        if missing:
            raise BadArgument(f"the binned model needs its public bins: pass prior={{'bin_low': ..., 'bin_high': ..., "
                              f"'bin_width': ...}} (missing {missing})")
        return bin_edges(prior["bin_low"], prior["bin_high"], prior["bin_width"])

    def check_cells(self, X, prior: dict) -> None:
        """Refuse a column of X (a level, a cell) that fewer than ``min_cell_records`` records have.

        The message names the column by position and the threshold, never the count.

        Parameters
        ----------
        X : ndarray, shape (n, P)
        prior : dict
        """
        least = prior["min_cell_records"]
        thin = [p for p in range(1, X.shape[1]) if np.count_nonzero(X[:, p]) < least]
        if thin:
            raise BadArgument(f"column(s) {thin} of X (their cells or levels) have fewer than {least:g} records "
                              "(min_cell_records): merge those levels or leave the predictor out")

    def stan_data(self, y, X, weights, prior, emit_log_lik, censoring=None):
        from ppmlib.models.bins import bin_index, cell_bin_totals, cell_index
        edges = self.edges(prior)
        self.check_cells(X, prior)
        bins = bin_index(y, edges)
        rows, cells = cell_index(X)
        U, J = rows.shape[0], edges.size - 1
        settings = {k: prior[k] for k in ("prior_shape_sd", "prior_effect_sd")}
        data = {"n": y.size, "P": X.shape[1], "J": J, "U": U, "cell_X": rows, "bin_low": float(edges[0]),
                "bin_width": float(edges[1] - edges[0]),
                "cell_bin_w": cell_bin_totals(cells, bins, weights, U, J), **settings, "emit_log_lik": int(emit_log_lik),
                "n_records": y.size if emit_log_lik else 0, "record_cell": (cells + 1) if emit_log_lik else np.zeros(0, int),
                "record_bin": (bins + 1) if emit_log_lik else np.zeros(0, int)}
        if censoring is None:
            return {**data, "censor": 0, "censor_bound": 0.0, "n_groups": 0, "group_cell": np.zeros(0, int),
                    "group_bin": np.zeros(0, int), "group_sizes": np.zeros(0), "group_weights": np.zeros(0),
                    "group_shifts": np.zeros(0)}
        groups, sizes = np.unique(np.column_stack([cells, bins, weights, censoring.shifts]), axis=0, return_counts=True)
        return {**data, "cell_bin_w": np.zeros((U, J)), "censor": 1, "censor_bound": float(censoring.bound),
                "n_groups": sizes.size, "group_cell": groups[:, 0].astype(np.int64) + 1,
                "group_bin": groups[:, 1].astype(np.int64) + 1, "group_sizes": sizes.astype(float),
                "group_weights": groups[:, 2], "group_shifts": groups[:, 3]}

    def log_probabilities(self, draws, rows) -> np.ndarray:
        """log p_uj of every draw, cell and bin: log softmax(x_u beta_s), shape (S, U, J).

        Parameters
        ----------
        draws : dict
            The family's ``params``, draw axis first (S draws).
        rows : ndarray, shape (U, P)
            The cells' rows of X.

        Returns
        -------
        ndarray, shape (S, U, J)
        """
        logits = np.einsum("up,spj->suj", rows, draws["beta"])
        return logits - _log_sum_exp_last(logits)[..., None]

    def log_lik(self, draws, y, X):
        from ppmlib.models.bins import bin_index, cell_index
        edges = draws["edges"][0]
        rows, cells = cell_index(X)
        log_p = self.log_probabilities(draws, rows)
        return log_p[:, cells, bin_index(y, edges)] - np.log(edges[1] - edges[0])

    def best_log_lik(self, y, X, *, reference_scale=1.0):
        # the supremum over the parameters is -log(width) (the record's bin has probability 1); the
        # family sees the width only in a fit's draws, so the caller passes it as the public
        # reference scale (the normal's sigma_ref): log(1 / reference_scale)
        scale = _checks.real(reference_scale, "reference_scale", low=0, low_open=True)
        return np.full(np.shape(y)[0], -np.log(scale))

    def location(self, draws):
        # the mean of the column in the reference cell (every key at its first level): sum_j p_j c_j
        edges = draws["edges"][0]
        centres = 0.5 * (edges[1:] + edges[:-1])
        reference = np.zeros((1, draws["beta"].shape[1]))
        reference[0, 0] = 1.0
        return np.exp(self.log_probabilities(draws, reference)[:, 0, :]) @ centres

    def predict(self, draws, X, n, rng):
        from ppmlib.models.bins import cell_index
        edges = draws["edges"][0]
        rows, cells = cell_index(X)
        cumulative = np.cumsum(np.exp(self.log_probabilities(draws, rows)), axis=2)   # (S, U, J)
        S, J = cumulative.shape[0], cumulative.shape[2]
        u = rng.uniform(size=(S, n))
        within = rng.uniform(size=(S, n))
        out = np.empty((S, n))
        for cell in range(rows.shape[0]):
            mine = np.flatnonzero(cells == cell)
            top = cumulative[:, cell, -1:]
            # inverse CDF of the cell's bins, then uniform within the bin
            chosen = np.minimum((u[:, mine, None] * top[:, :, None] > cumulative[:, cell, None, :]).sum(axis=2), J - 1)
            out[:, mine] = edges[chosen] + within[:, mine] * (edges[1] - edges[0])
        return out


class CellNormal(Normal):
    """The cell normal model: every cell of the keys has its own mean and variance, both shrunk
    hierarchically, drawn exactly by Gibbs sampling (:mod:`ppmlib.models.cells`, no Stan program).

    A cell is a distinct row x_u of a one-hot design X (every combination of the categorical keys'
    levels found in the data): y_i ~ Normal(mu_u, sigma_u^2), mu_u ~ Normal(x_u beta, tau^2) (the
    full interactions of the keys, shrunk toward their main effects), sigma_u^2 ~
    Scaled-Inv-chi^2(nu, s^2) (the spreads shrunk toward a common one); the priors are in
    :mod:`ppmlib.models.cells`. A record's log-likelihood is log Normal(y_i | mu_u, sigma_u), so LW
    and the local guarantee's bounds use it unchanged; the censored (strict, CM) fit is refused: it
    needs a Stan program of the same model, which this family does not have.

    Synthetic values are drawn per cell by stratified sampling (:func:`ppmlib.models.cells.stratified_normal`):
    each value is marginally Normal(mu_u, sigma_u^2) under the dataset's draw, as a posterior
    predictive draw is, but a cell's values cover that distribution evenly. A synthetic dataset is
    still a function of one posterior draw and randomness independent of the data, so any
    guarantee about the draws holds for it unchanged.

    Refused before any fit: a design that is not one-hot (a numeric predictor would make every
    record its own cell), and a cell with fewer than ``min_cell_records`` records (default 1: the
    shrinkage handles small cells), named by its position and its columns of X.

    Draws: ``mu``, ``sigma`` (S, U), ``beta`` (S, P), ``tau``, ``s`` (S,), and ``cell_X`` (S, U, P),
    the cells repeated in every draw (so that ``log_lik`` and ``predict`` know them).
    """
    name = "cellnormal"
    params = ("mu", "sigma", "beta", "tau", "s", "cell_X")
    constant_params = ("cell_X",)
    default_prior = {"prior_beta_sd": 10.0, "prior_tau2_shape": 1.0, "prior_tau2_scale": 0.01, "prior_s2_shape": 1.0,
                     "prior_s2_rate": 1.0, "variance_df": 4.0, "min_cell_records": 1.0}
    positive_prior = ("prior_beta_sd", "prior_tau2_shape", "prior_tau2_scale", "prior_s2_shape", "prior_s2_rate",
                      "variance_df")
    #: draw the synthetic values stratified within each cell (False: independent draws)
    stratified = True

    def check_X(self, X, n):
        X = super().check_X(X, n)
        bad = [j for j in range(X.shape[1]) if not np.isin(X[:, j], (0.0, 1.0)).all()]
        if bad:
            raise BadArgument(f"the cellnormal model's cells are combinations of categorical predictors, so X must be "
                              f"one-hot (0/1); column(s) {bad} of X are not (a numeric predictor)")
        return X

    def check_cells(self, rows, cells, prior: dict) -> None:
        """Refuse a cell with fewer than ``min_cell_records`` records; the message names the cell by its
        position and its columns of X, and the threshold, never a count or a value.

        Parameters
        ----------
        rows : ndarray, shape (U, P)
            The cells.
        cells : ndarray of int, shape (n,)
            Each record's cell.
        prior : dict
            As :meth:`Family.check_prior` returns it.
        """
        least = prior["min_cell_records"]
        thin = np.flatnonzero(np.bincount(cells, minlength=rows.shape[0]) < least)
        if thin.size:
            named = "; ".join(f"cell {u} (ones in columns {np.flatnonzero(rows[u]).tolist()} of X)" for u in thin[:5])
            raise BadArgument(f"{thin.size} cell(s) have fewer than {least:g} records (min_cell_records): {named}; "
                              "merge those levels or leave a predictor out")

    def stan_data(self, y, X, weights, prior, emit_log_lik, censoring=None):
        """The Gibbs sampler's data: the cells and their weighted sums (there is no Stan program).

        Parameters
        ----------
        y, X, weights, prior
            As for :meth:`Family.stan_data`.
        emit_log_lik : bool
            Must be False (no Stan program writes a log_lik).
        censoring : ppmlib.models.censoring.Censoring, optional
            Must be None.

        Returns
        -------
        dict
            ``n``, ``cell_X`` (U, P), ``W``, ``S1``, ``S2`` (U,) and the prior settings.

        Raises
        ------
        ppmlib.errors.BadArgument
            ``censoring`` (the strict CM fit needs a Stan program) or ``emit_log_lik``.
        """
        from ppmlib.models.bins import cell_index
        from ppmlib.models.cells import cell_sums
        if censoring is not None:
            raise BadArgument("the cellnormal model has no censored (strict, CM) fit: its exact Gibbs sampler draws "
                              "the pseudo posterior only; use guarantee='local' (LW) or the normal model")
        if emit_log_lik:
            raise BadArgument("the cellnormal model has no Stan program, so no Stan log_lik: use Family.log_lik")
        rows, cells = cell_index(X)
        self.check_cells(rows, cells, prior)
        W, S1, S2 = cell_sums(cells, y, weights, rows.shape[0])
        return {"n": y.size, "cell_X": rows, "W": W, "S1": S1, "S2": S2, **prior}

    def exact_draws(self, data: dict, *, chains: int, draws: int, warmup: int, seed: int) -> dict:
        """The draws of the (pseudo) posterior that ``data`` describes, by Gibbs sampling
        (:func:`ppmlib.models.cells.gibbs`): what :meth:`ppmlib.Sampler.sample` returns for this family.

        Parameters
        ----------
        data : dict
            From :meth:`stan_data`.
        chains, draws, warmup : int
            As the :class:`ppmlib.Sampler` sets them.
        seed : int
            The seed.

        Returns
        -------
        dict
            Name -> draws, S = chains * draws first.
        """
        from ppmlib.models.cells import gibbs
        return gibbs(data, chains=chains, draws=draws, warmup=warmup, seed=seed)

    def _cells(self, draws, X) -> np.ndarray:
        from ppmlib.models.cells import match_cells
        return match_cells(draws["cell_X"][0], X)

    def mean(self, draws, X):
        return draws["mu"][:, self._cells(draws, X)]

    def scale(self, draws, X) -> np.ndarray:
        """Every record's sigma_u under every draw, S x n.

        Parameters
        ----------
        draws : dict
            The family's ``params``, draw axis first.
        X : ndarray, shape (n, P)
            The design matrix.

        Returns
        -------
        ndarray, shape (S, n)
        """
        return draws["sigma"][:, self._cells(draws, X)]

    def log_lik(self, draws, y, X):
        cells = self._cells(draws, X)
        sigma = draws["sigma"][:, cells]
        z = (np.asarray(y, float)[None, :] - draws["mu"][:, cells]) / sigma
        return -0.5 * z**2 - np.log(sigma) - 0.5 * np.log(2 * np.pi)

    def predict(self, draws, X, n, rng):
        from ppmlib.models.cells import stratified_normal
        cells = self._cells(draws, X)
        S = draws["mu"].shape[0]
        z = stratified_normal(rng, cells, S) if self.stratified else rng.normal(size=(S, cells.size))
        return draws["mu"][:, cells] + draws["sigma"][:, cells] * z


class CellNormalIID(CellNormal):
    """:class:`CellNormal` with independent predictive draws (no stratification): the same fit,
    measured beside it to show what the stratified draws change."""
    name = "cellnormal_iid"
    stratified = False



#: Model name -> its Family instance: what ppmlib.fit(name, ...) and every study use, every family of this
#: module, defined once here (read-only: a new family is one more class above and one more entry here).
FAMILIES = MappingProxyType({family.name: family for family in (Poisson(), NegBin(), Normal(), Mixture(), HetNormal(),
                                                                Binned(), CellNormal(), CellNormalIID())})
