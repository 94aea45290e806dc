"""The three synthesizer families: how to check data, build Stan data, and use the draws.

Each family knows its Stan program, its default priors (stated in the program's header), its
per-record log-likelihood from draws (numpy/scipy, checked against Stan's lpmf/lpdf in the tests)
and its posterior predictive sampler.
"""
from __future__ import annotations

__all__ = ["POISSON_PRIOR", "FAMILIES", "Family", "Poisson", "NegBin", "Normal", "family", "negbin_draw"]

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
            raise ValueError(f"X is only used by the 'normal' model; the {self.name!r} model is intercept-only")
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
