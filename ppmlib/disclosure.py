"""Attribute-disclosure risk of synthetic data by importance sampling (ALGORITHMS.md section 10).

The intruder knows every other record's true value, the synthesizer (a normal model with mean
mu_hi and sd sigma_h under posterior draw h) and the released synthetic data Z, and guesses record
i's value among y_i + offsets with a uniform prior. By Bayes' rule the guess probabilities are
proportional to p(Z | y*). Refitting the model for every guess would be exact but costly; instead
the H draws of the fit to the true data are reweighted (importance sampling):

    p(Z | y*) ~ (1/H) sum_h p_h q_h,   log p_h = sum_j log N(z_j | mu_hj, sigma_h),
    q_h = w_h / sum_h' w_h',           w_h = N(y* | mu_hi, sigma_h) / N(y_i | mu_hi, sigma_h).

p_h is a product over all synthetic records, so everything stays in log space (log-sum-exp).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from . import _checks

DEFAULT_OFFSETS = np.round(np.arange(-2.5, 2.5 + 1e-9, 0.5), 10)  # G = 11, 0 is the truth


@dataclass(frozen=True)
class AttributeRisk:
    """Guess probabilities for every record.

    probs : (n, G) probability of each guess, normalised over the G guesses
    prob_true : (n,) probability of the true value (offset 0)
    rank_true : (n,) rank of the true value, 1 = most probable; ties take the best rank
    guesses : (n, G) the guessed values y_i + offsets
    offsets : (G,)
    """
    probs: np.ndarray
    prob_true: np.ndarray
    rank_true: np.ndarray
    guesses: np.ndarray
    offsets: np.ndarray


def _inputs(y, z, mu, sigma, offsets):
    y = _checks.finite_array(y, "y", ndim=1)
    n = y.size
    z = _checks.finite_array(z, "z")
    if z.ndim == 1:
        z = z[None, :]
    if z.ndim != 2 or z.shape[1] != n:
        raise ValueError(f"z must be (n,) or (m, n) synthetic values with n = {n}, got shape {z.shape}")
    mu = _checks.finite_array(mu, "mu", ndim=2)
    if mu.shape[1] != n:
        raise ValueError(f"mu must be (H, n) model means with n = {n}, got shape {mu.shape}")
    sigma = _checks.finite_array(sigma, "sigma", ndim=1)
    if sigma.size != mu.shape[0]:
        raise ValueError(f"sigma must be (H,) with H = {mu.shape[0]} (the rows of mu), got shape {sigma.shape}")
    if (sigma <= 0).any():
        raise ValueError(f"sigma must be positive; found {sigma[sigma <= 0][0]:g}")
    offsets = DEFAULT_OFFSETS if offsets is None else _checks.finite_array(offsets, "offsets", ndim=1)
    if not np.any(offsets == 0):
        raise ValueError("offsets must contain 0 (the true value is one of the guesses)")
    return y, z, mu, sigma, offsets


def synthetic_log_lik(z: np.ndarray, mu: np.ndarray, sigma: np.ndarray) -> np.ndarray:
    """log p_h for every dataset and draw: sum_j log N(z_lj | mu_hj, sigma_h), shape (m, H).

    The sum of squares is expanded (sum z^2 - 2 z.mu_h + sum mu_h^2) so that it is two matrix
    products and never an (m, H, n) array.
    """
    n = z.shape[1]
    squares = (z**2).sum(axis=1)[:, None] - 2.0 * z @ mu.T + (mu**2).sum(axis=1)[None, :]
    return -0.5 * squares / sigma**2 - n * np.log(sigma) - 0.5 * n * np.log(2.0 * np.pi)


def _logsumexp0(x: np.ndarray) -> np.ndarray:
    """log sum exp over the first axis, shifted by the maximum (lean: this is the hot path)."""
    top = x.max(axis=0)
    return top + np.log(np.exp(x - top).sum(axis=0))


def log_weights(y, mu, sigma, offsets) -> np.ndarray:
    """log w_h for every draw, record and guess, shape (H, n, G).

    log w_h = log N(y_i + d | mu_hi, sigma_h) - log N(y_i | mu_hi, sigma_h) for an offset d; the
    normal constants cancel and the squares factor: (y + d - mu)^2 - (y - mu)^2 = d (d + 2 (y - mu)).
    """
    resid = (y[None, :] - mu)[:, :, None]                                      # (H, n, 1)
    return -offsets * (offsets + 2.0 * resid) / (2.0 * sigma[:, None, None] ** 2)


def attribute_risk(y, z, mu, sigma, offsets=None) -> AttributeRisk:
    """Probability of each guess y_i + offset for every record, by importance sampling.

    Parameters
    ----------
    y : (n,) true values of the synthesized variable
    z : (n,) one synthetic dataset, or (m, n) m of them (their likelihoods multiply)
    mu : (H, n) the synthesizer's mean of every record under each of H posterior draws
    sigma : (H,) the synthesizer's standard deviation under each draw
    offsets : (G,) guesses relative to the truth; must contain 0. Default -2.5, -2.0, ..., 2.5.
    """
    y, z, mu, sigma, offsets = _inputs(y, z, mu, sigma, offsets)
    log_w = log_weights(y, mu, sigma, offsets)                                 # (H, n, G)
    log_p = synthetic_log_lik(z, mu, sigma)                                    # (m, H)
    log_q = log_w - _logsumexp0(log_w)                                         # normalised over draws
    # log p(Z_l | y*) = LSE_h(log p_h + log q_h) - log H, one dataset at a time (a loop over the
    # few datasets, never over records, guesses or draws); the datasets' likelihoods multiply.
    log_evidence = sum(_logsumexp0(log_p_l[:, None, None] + log_q) for log_p_l in log_p)
    log_evidence = log_evidence - z.shape[0] * np.log(mu.shape[0])
    top = log_evidence.max(axis=1, keepdims=True)                              # uniform prior: normalise
    probs = np.exp(log_evidence - top)
    probs /= probs.sum(axis=1, keepdims=True)
    true_col = int(np.flatnonzero(offsets == 0)[0])
    prob_true = probs[:, true_col]
    rank_true = 1 + (probs > prob_true[:, None]).sum(axis=1)
    return AttributeRisk(probs, prob_true, rank_true, y[:, None] + offsets[None, :], offsets)


def risk_inputs(fit, H: int) -> tuple[np.ndarray, np.ndarray]:
    """(mu, sigma) for ``attribute_risk`` from H evenly spaced draws of a normal-model Fit:
    mu is (H, n), the model mean of every record under each draw, and sigma is (H,)."""
    if fit.model.name != "normal":
        raise ValueError(f"attribute_risk needs a normal synthesizer; this fit is {fit.model.name!r}")
    H = _checks.integer(H, "H", low=1)
    if H > fit.n_draws:
        raise ValueError(f"H = {H} draws requested but the fit has {fit.n_draws}")
    keep = np.zeros(fit.n_draws, dtype=bool)
    keep[np.linspace(0, fit.n_draws - 1, H).round().astype(int)] = True
    thinned = fit.subset(keep)
    return thinned.model.mean(thinned.draws, thinned.X), thinned.draws["sigma"]


def guess_table(risk: AttributeRisk, record: int):
    """The G guesses of one record with their probabilities, most probable first (a DataFrame)."""
    import pandas as pd
    record = _checks.integer(record, "record", low=0)
    if record >= risk.probs.shape[0]:
        raise ValueError(f"record must be below n = {risk.probs.shape[0]}, got {record}")
    table = pd.DataFrame({"guess": risk.guesses[record], "offset": risk.offsets,
                          "probability": risk.probs[record], "true value": risk.offsets == 0})
    return table.sort_values("probability", ascending=False, kind="stable").reset_index(drop=True)
