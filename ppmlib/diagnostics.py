"""MCMC convergence diagnostics: rank-normalised split R-hat and bulk ESS (Vehtari et al., 2021).

Implemented here (about forty lines) rather than pulled from ArviZ so that both Stan backends are
judged by the same code. ``x`` is one scalar quantity's draws, chain after chain.
"""
from __future__ import annotations

import numpy as np
from scipy import stats


def _split(x: np.ndarray, chains: int) -> np.ndarray:
    per_chain = x.reshape(chains, -1)
    half = per_chain.shape[1] // 2
    return np.concatenate([per_chain[:, :half], per_chain[:, half:2 * half]])


def _rank_normalize(c: np.ndarray) -> np.ndarray:
    ranks = stats.rankdata(c, method="average").reshape(c.shape)
    return stats.norm.ppf((ranks - 0.375) / (c.size + 0.25))


def _rhat(c: np.ndarray) -> float:
    n = c.shape[1]
    within = c.var(axis=1, ddof=1).mean()
    between = n * c.mean(axis=1).var(ddof=1)
    if within == 0:
        return np.nan
    return float(np.sqrt(((n - 1) / n * within + between / n) / within))


def rhat(x, chains: int) -> float:
    """max(bulk, tail) rank-normalised split R-hat; NaN for a constant quantity."""
    c = _split(np.asarray(x, float), chains)
    if np.ptp(c) == 0:
        return np.nan
    folded = np.abs(c - np.median(c))
    return max(_rhat(_rank_normalize(c)), _rhat(_rank_normalize(folded)))


def _ess(c: np.ndarray) -> float:
    m, n = c.shape
    centered = c - c.mean(axis=1, keepdims=True)
    spectrum = np.fft.rfft(centered, n=2 * n, axis=1)
    acov = np.fft.irfft(spectrum * np.conj(spectrum), axis=1)[:, :n] / n
    within = acov[:, 0].mean() * n / (n - 1)
    var_plus = within * (n - 1) / n + (c.mean(axis=1).var(ddof=1) if m > 1 else 0.0)
    rho = 1.0 - (within - acov.mean(axis=0)) / var_plus
    rho[0] = 1.0
    # Geyer's initial positive, then monotone, sequence of paired autocorrelations
    pairs = rho[: n - n % 2].reshape(-1, 2).sum(axis=1)
    stop = np.argmax(pairs <= 0) if (pairs <= 0).any() else pairs.size
    pairs = np.minimum.accumulate(pairs[:stop])
    tau = -1.0 + 2.0 * pairs.sum()
    return float(m * n / max(tau, 1.0 / np.log10(m * n)))


def ess_bulk(x, chains: int) -> float:
    """Bulk effective sample size (rank-normalised split chains); NaN for a constant quantity."""
    c = _split(np.asarray(x, float), chains)
    if np.ptp(c) == 0:
        return np.nan
    return _ess(_rank_normalize(c))


def summarize(params: dict, sampler: dict, chains: int) -> dict:
    """Worst-case diagnostics over every scalar component of every parameter."""
    rhats, esses = [], []
    for arr in params.values():
        flat = arr.reshape(arr.shape[0], -1)
        for j in range(flat.shape[1]):
            rhats.append(rhat(flat[:, j], chains))
            esses.append(ess_bulk(flat[:, j], chains))
    divergent = sampler.get("divergent__")
    return {
        "max_rhat": float(np.nanmax(rhats)) if np.isfinite(rhats).any() else np.nan,
        "min_ess_bulk": float(np.nanmin(esses)) if np.isfinite(esses).any() else np.nan,
        "divergences": int(np.sum(divergent)) if divergent is not None else 0,
        "draws": int(next(iter(params.values())).shape[0]),
        "chains": int(chains),
    }


def is_ok(diag: dict, rhat_max: float = 1.01, ess_min: float = 400) -> bool:
    """The usual thresholds: R-hat below 1.01, bulk ESS at least 400, no divergences."""
    return bool(diag["max_rhat"] < rhat_max and diag["min_ess_bulk"] >= ess_min and diag["divergences"] == 0)
