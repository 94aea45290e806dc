"""The synthesizer families (Poisson, NB, normal regression, mixture of regressions): how to check
data, build Stan data, and use the draws.

Each family knows its Stan program, its default priors (stated in the program's header), its
per-record log-likelihood from draws (numpy/scipy, checked against Stan's lpmf/lpdf in the tests)
and its posterior predictive sampler.
"""
from __future__ import annotations

__all__ = ["POISSON_PRIOR", "FAMILIES", "Family", "Poisson", "NegBin", "Normal", "Mixture", "family", "negbin_draw"]

import numpy as np
from scipy import special

from . import _checks

#: The Poisson rate's Gamma(shape, rate) prior: the Stan program's default, used by the Stan family,
#: by the closed forms of ppmlib.exact and by the chapters. Weak for counts near 100. Copy it before
#: changing a value (every user shares this one dict).
POISSON_PRIOR = {"prior_shape": 1.0, "prior_rate": 0.001}


def negbin_draw(rng: np.random.Generator, mu, phi, size=None) -> np.ndarray:
    """Negative binomial draws with mean ``mu`` and variance mu + mu^2 / phi (Stan's neg_binomial_2).

    numpy parametrises by (number of successes, success probability): phi and phi / (phi + mu).
    ``mu`` and ``phi`` broadcast against each other and ``size``.
    """
    return rng.negative_binomial(phi, np.asarray(phi) / (np.asarray(phi) + np.asarray(mu)), size=size)


class Family:
    name: str
    params: tuple          # names of the parameters kept as draws
    default_prior: dict

    def check_y(self, y):
        raise NotImplementedError

    def check_X(self, X, n):
        if X is not None:
            raise ValueError(f"X is only used by the 'normal' and 'mixture' models; the {self.name!r} model is "
                             "intercept-only")
        return None

    def stan_data(self, y, X, weights, prior, emit_log_lik: bool) -> dict:
        return {"n": y.size, "y": y, "weights": weights, **prior, "emit_log_lik": int(emit_log_lik)}

    def log_lik(self, draws: dict, y, X) -> np.ndarray:
        raise NotImplementedError

    def distinct(self, y, X) -> tuple:
        """Records grouped by what their log-likelihood depends on: ``(keys_y, keys_X, index)``.

        ``log_lik(draws, keys_y, keys_X)[:, index]`` equals ``log_lik(draws, y, X)``, so bounds and
        risks can be computed per key (S x u) instead of per record (S x n). The default is no
        grouping (u = n); the count families group by value.
        """
        return y, X, np.arange(y.size)

    def location(self, draws: dict) -> np.ndarray:
        """Draws of the family's mean parameter (the papers' mu), shape (S,)."""
        raise NotImplementedError

    def predict(self, draws: dict, X, n: int, rng: np.random.Generator) -> np.ndarray:
        raise NotImplementedError

    def diagnostic_draws(self, draws: dict, y, X) -> dict:
        """The quantities whose R-hat and ESS judge convergence: the parameters themselves, except
        for families whose parameters are not identified (the mixture's labels switch)."""
        return draws


class _Counts(Family):
    """A family for counts: y is checked as counts, and records share their log-likelihood by value."""

    def check_y(self, y):
        return _checks.counts(y)

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

    def stan_data(self, y, X, weights, prior, emit_log_lik):
        # the weighted Poisson likelihood needs only these sums; y itself is sent only to write
        # Stan's own per-record log_lik (tests), so the data sent to Stan does not grow with n
        values, value_weights = _value_weights(y, weights)
        return {"n": y.size, "sum_w": float(weights.sum()), "sum_wy": float(weights @ y),
                "sum_w_lgamma": float(value_weights @ special.gammaln(values + 1.0)),
                **prior, "emit_log_lik": int(emit_log_lik), "y": y if emit_log_lik else np.zeros(0, int)}

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

    def stan_data(self, y, X, weights, prior, emit_log_lik):
        # the program sums the likelihood over distinct values, each with its records' total weight;
        # y is sent only to write Stan's own per-record log_lik (tests)
        values, value_weights = _value_weights(y, weights)
        return {"n": y.size, **prior, "emit_log_lik": int(emit_log_lik),
                "y": y if emit_log_lik else np.zeros(0, int),
                "n_values": values.size, "values": values, "value_weights": value_weights}

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

    def check_y(self, y):
        return _checks.finite_array(y, "y", ndim=1)

    def check_X(self, X, n):
        if X is None:
            return np.ones((n, 1))  # intercept-only model
        X = _checks.finite_array(X, "X")
        if X.ndim != 2 or X.shape[0] != n:
            raise ValueError(f"X must be an (n, K) design matrix with n = {n} rows, got shape {X.shape}")
        return X

    def stan_data(self, y, X, weights, prior, emit_log_lik):
        return {**super().stan_data(y, X, weights, prior, emit_log_lik), "K": X.shape[1], "X": X}

    def mean(self, draws, X) -> np.ndarray:
        """Model mean X_i beta_s of every record under every draw, S x n."""
        return draws["beta"] @ X.T

    def location(self, draws):
        return draws["beta"][:, 0]  # the intercept (the mean when X is intercept-only)

    def log_lik(self, draws, y, X):
        sigma = draws["sigma"][:, None]
        z = (y - self.mean(draws, X)) / sigma
        return -0.5 * z**2 - np.log(sigma) - 0.5 * np.log(2 * np.pi)

    def predict(self, draws, X, n, rng):
        return rng.normal(self.mean(draws, X), draws["sigma"][:, None])


def _by_value(y) -> tuple:
    """Count records repeat: the distinct values are the keys (u is about the range of the data)."""
    values, index = np.unique(y, return_inverse=True)
    return values, None, index


FAMILIES = {family.name: family for family in (Poisson(), NegBin(), Normal())}


def family(model) -> Family:
    if not isinstance(model, str):
        raise TypeError(f"model must be a string, one of {sorted(FAMILIES)}, got {type(model).__name__}")
    if model not in FAMILIES:
        raise ValueError(f"unknown model {model!r}; choose one of {sorted(FAMILIES)}")
    return FAMILIES[model]


# --- CE income chapter (issue 10): a finite mixture of normal regressions -------------------------

class Mixture(Normal):
    """Finite mixture of normal regressions (stan/mixture.stan), for log income.

    y_i ~ sum_k pi_k Normal(X_i beta_k, sigma_k), k = 1..K. The record's log-likelihood is the
    *marginal* mixture density (cluster indicators summed out), so it, the bounds and the
    synthetic data do not depend on how the components are labelled. K (the deliberately too
    large number of components) and the Dirichlet concentration are settings of the prior: pass
    them as ``prior={"K": 3, "dirichlet_concentration": 0.5}``; the other settings (the prior of
    the component centres, of their spread over the records and of the scales) are stated in the
    program's header.

    X must start with the intercept column (ones) and have linearly independent columns: the
    program samples in a centred QR basis of X (see :func:`ppmlib.design.independent_columns`
    for a design with nested predictors).

    Draws: ``mixing`` (S, K), ``beta`` (S, P, K) (column k is component k, on the columns of X),
    ``sigma`` (S, K). The program orders the components by their scale, which identifies
    components that differ in spread (log income's narrow bulk and wide tails). Components with
    equal scales that differ only in their centres are not identified by it: a chain that starts
    with their labels the other way round stays there, and R-hat shows it (measured on two
    clusters at 0 and 5 with scales 0.5 and 1: R-hat 1.84 at 2 x 300 draws).
    """
    name = "mixture"
    params = ("mixing", "beta", "sigma")
    # on the log-income scale; a nearly empty component is drawn almost from its prior, so the
    # prior keeps it at plausible incomes (exp() of a wild prior draw would be an absurd income)
    default_prior = {"K": 3, "dirichlet_concentration": 0.5, "prior_centre_mean": 11.0, "prior_centre_sd": 1.0,
                     "prior_spread_sd": 1.0, "prior_sigma_mean": 1.0, "shared_slopes": 1}

    def check_X(self, X, n):
        X = super().check_X(X, n)
        if not np.all(X[:, 0] == 1.0):
            raise ValueError("the mixture's X must start with the intercept column (all ones), as "
                             "ppmlib.design_matrix makes it; its first column is not")
        rank = np.linalg.matrix_rank(X)
        if rank < X.shape[1]:
            raise ValueError(f"the mixture's X must have linearly independent columns (its program samples in a QR "
                             f"basis); this one has {X.shape[1]} columns of rank {rank}: drop the redundant ones "
                             "with ppmlib.design.independent_columns")
        return X

    def stan_data(self, y, X, weights, prior, emit_log_lik):
        K = prior["K"]
        if K != int(K) or K < 1:
            raise ValueError(f"prior['K'] (the number of mixture components) must be a positive integer, got {K!r}")
        for key in ("dirichlet_concentration", "prior_centre_sd", "prior_spread_sd", "prior_sigma_mean"):
            if prior[key] <= 0:
                raise ValueError(f"prior[{key!r}] must be positive, got {prior[key]!r}")
        if prior["shared_slopes"] not in (0, 1):
            raise ValueError(f"prior['shared_slopes'] must be 0 or 1, got {prior['shared_slopes']!r}")
        prior = {**prior, "shared_slopes": int(prior["shared_slopes"])}
        # Family's data, not Normal's: here K is the number of components and P the design's columns
        return {**Family.stan_data(self, y, X, weights, {**prior, "K": int(K)}, emit_log_lik),
                "P": X.shape[1], "X": X}

    def component_log_densities(self, draws, y, X) -> np.ndarray:
        """log pi_k + log Normal(y_i | X_i beta_k, sigma_k), shape (S, n, K)."""
        mu = np.einsum("np,spk->snk", X, draws["beta"])
        sigma = draws["sigma"][:, None, :]
        z = (np.asarray(y, float)[None, :, None] - mu) / sigma
        return np.log(draws["mixing"])[:, None, :] - 0.5 * z**2 - np.log(sigma) - 0.5 * np.log(2 * np.pi)

    def log_lik(self, draws, y, X):
        # the marginal density: log sum_k exp(...), the cluster indicator summed out
        return special.logsumexp(self.component_log_densities(draws, y, X), axis=2)

    def mean(self, draws, X) -> np.ndarray:
        """Model mean of every record under every draw, sum_k pi_k X_i beta_k, S x n."""
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
        """
        return {"log_lik_sum": self.log_lik(draws, y, X).sum(axis=1),
                "predictive_mean": self.mean(draws, X).mean(axis=1),
                "predictive_p90": self.pooled_quantile(draws, X, 0.9)}

    def pooled_quantile(self, draws, X, level: float, tol: float = 1e-4) -> np.ndarray:
        """Per draw, the ``level`` quantile of the records' predictive distributions pooled, (S,).

        Solves mean_i sum_k pi_k Phi((t - mu_ik) / sigma_k) = level for t by bisection, one
        block of draws at a time.
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


FAMILIES[Mixture.name] = Mixture()
