"""MCMC convergence diagnostics: rank-normalised split R-hat, bulk ESS and tail ESS (Vehtari et al., 2021).

Implemented here rather than imported from ArviZ so that both Stan backends are judged by the
same short code and ppmlib does not need ArviZ (and xarray) at run time. ArviZ is the test
oracle: ``tests/test_diagnostics.py`` checks R-hat, bulk ESS and tail ESS against
``arviz.rhat`` / ``arviz.ess`` to 1e-6 on synthetic AR(1) chains and on a real Stan fit. The
details follow ArviZ (and Stan) exactly, including the two that change the numbers:

* split chains are the first and the *last* half of each chain (an odd middle draw is dropped);
* Geyer's initial positive sequence stops at the first pair of autocorrelations whose sum is not
  positive, and the even-lag autocorrelation just past that point is still added to tau when it
  is positive (Stan's "improved estimation" of the truncated sum).

``x`` is one scalar quantity's draws, chain after chain: shape (chains * draws_per_chain,).
A constant quantity has no defined R-hat or ESS: the functions return NaN for it.
"""
from __future__ import annotations

__all__ = ["rhat", "ess_bulk", "ess_tail", "summarize", "combine", "is_ok", "GATE", "failing", "MIN_DRAWS"]

import numpy as np
from scipy import stats
from ppmlib.errors import BadArgument

TAIL_PROBS = (0.05, 0.95)  # tail ESS: the worse of the 5% and 95% quantile indicators
#: The fewest draws per chain the diagnostics judge: each split half-chain needs two draws for its
#: variance and its lag-1 autocorrelation. Below this R-hat and ESS are NaN (and :func:`is_ok` fails).
MIN_DRAWS = 4


def _split(x: np.ndarray, chains: int) -> np.ndarray:
    """(2 chains, draws // 2): first and last half of every chain (the middle draw of an odd chain is dropped)."""
    if chains < 1 or x.size == 0 or x.size % chains:
        raise BadArgument(f"{x.size} draws cannot be split into chains={chains} chains of equal length")
    per_chain = x.reshape(chains, -1)
    half = per_chain.shape[1] // 2
    return np.concatenate([per_chain[:, :half], per_chain[:, per_chain.shape[1] - half:]])


def _too_short(c: np.ndarray) -> bool:
    """Split chains too short to judge (fewer than MIN_DRAWS draws per chain): no R-hat, no ESS."""
    return c.shape[1] < MIN_DRAWS // 2


def _rank_normalize(c: np.ndarray) -> np.ndarray:
    """Normal scores of the pooled ranks (Blom's offset 3/8), same shape as ``c``."""
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
    """max(bulk, tail) rank-normalised split R-hat; NaN for a constant quantity.

    Parameters
    ----------
    x : array_like, shape (chains * draws_per_chain,)
        One scalar quantity's draws, chain after chain.
    chains : int
        Number of chains in ``x``.

    Returns
    -------
    float

    See Also
    --------
    ess_bulk, ess_tail : the effective sample sizes from the same split chains.
    summarize : the worst R-hat over every parameter of a fit.

    Examples
    --------
    >>> x = np.random.default_rng(0).normal(size=4000)          # 4 well-mixed chains
    >>> round(rhat(x, chains=4), 3)
    1.0
    >>> round(rhat(x + np.repeat([0, 0, 0, 3.0], 1000), chains=4), 2)   # one chain elsewhere
    1.48
    """
    c = _split(np.asarray(x, float), chains)
    if _too_short(c) or np.ptp(c) == 0:
        return np.nan
    folded = np.abs(c - np.median(c))
    return max(_rhat(_rank_normalize(c)), _rhat(_rank_normalize(folded)))


def _autocorrelation(c: np.ndarray) -> np.ndarray:
    """Combined autocorrelation rho_t of (chains, n) draws, t = 0..n-1 (Vehtari et al. 2021, eq. 10)."""
    m, n = c.shape
    centered = c - c.mean(axis=1, keepdims=True)
    spectrum = np.fft.rfft(centered, n=2 * n, axis=1)
    acov = np.fft.irfft(spectrum * np.conj(spectrum), n=2 * n, axis=1)[:, :n] / n
    within = acov[:, 0].mean() * n / (n - 1)
    var_plus = within * (n - 1) / n + (c.mean(axis=1).var(ddof=1) if m > 1 else 0.0)
    return 1.0 - (within - acov.mean(axis=0)) / var_plus


def _tau(rho: np.ndarray) -> float:
    """Integrated autocorrelation time by Geyer's initial positive, then monotone, sequence.

    Pairs P_k = rho_2k + rho_2k+1 are summed while positive; the even lag just past the last
    positive pair is added too when it is positive (as Stan and ArviZ do).
    """
    n = rho.size
    kept = np.zeros(n)
    kept[0], kept[1] = 1.0, rho[1]
    even, odd = 1.0, rho[1]
    t = 1
    while t < n - 3 and even + odd > 0:
        even, odd = rho[t + 1], rho[t + 2]
        if even + odd >= 0:
            kept[t + 1], kept[t + 2] = even, odd
        t += 2
    last = t - 2                                    # the last lag of the positive sequence
    if even > 0:
        kept[last + 1] = even
    pairs = np.minimum.accumulate(kept[: last + 1].reshape(-1, 2).sum(axis=1))  # monotone sequence
    return float(-1.0 + 2.0 * pairs.sum() + kept[last + 1])


def _ess(c: np.ndarray) -> float:
    """ESS of (chains, n) draws: chains * n / tau, tau floored at 1 / log10(chains * n) as in Stan."""
    size = c.size
    if np.ptp(c) == 0:  # a constant indicator (tail ESS of heavily tied draws): no autocorrelation to estimate
        return float(size)
    return float(size / max(_tau(_autocorrelation(c)), 1.0 / np.log10(size)))


def ess_bulk(x, chains: int) -> float:
    """Bulk effective sample size (rank-normalised split chains); NaN for a constant quantity.

    Parameters
    ----------
    x, chains
        As for :func:`rhat`.

    Returns
    -------
    float

    See Also
    --------
    ess_tail, rhat

    Examples
    --------
    >>> x = np.random.default_rng(0).normal(size=4000)
    >>> round(ess_bulk(x, chains=4))
    3926
    """
    c = _split(np.asarray(x, float), chains)
    if _too_short(c) or np.ptp(c) == 0:
        return np.nan
    return _ess(_rank_normalize(c))


def ess_tail(x, chains: int) -> float:
    """Tail effective sample size: the smaller ESS of the indicators x <= q05 and x <= q95.

    The quantiles are taken over all draws (type 7, numpy's default); NaN for a constant quantity.

    Parameters
    ----------
    x : array_like, shape (chains * draws_per_chain,)
        The draws, chain after chain (as for :func:`rhat`).
    chains : int
        How many chains.

    Returns
    -------
    float

    See Also
    --------
    ess_bulk, rhat
    """
    x = np.asarray(x, float)
    if _too_short(_split(x, chains)) or np.ptp(x) == 0:
        return np.nan
    return min(_ess(_split((x <= np.quantile(x, p)).astype(float), chains)) for p in TAIL_PROBS)


def _worst(values: list, pick) -> float:
    """nanmax / nanmin of a list of diagnostics; NaN when every value is NaN (constant quantities)."""
    return float(pick(values)) if np.isfinite(values).any() else np.nan


def summarize(params: dict, sampler: dict, chains: int) -> dict:
    """Worst-case diagnostics over every scalar component of every parameter.

    Returns max_rhat, min_ess_bulk, min_ess_tail, divergences, draws and chains.

    Parameters
    ----------
    params : dict of str to ndarray
        Each parameter's draws, shape (draws, ...) with the draws of all chains concatenated.
    sampler : dict
        Sampler diagnostics per draw; ``divergent__`` (draws,) is counted when present.
    chains : int
        Number of chains.

    Returns
    -------
    dict

    See Also
    --------
    is_ok : the usual thresholds applied to this dict.

    Examples
    --------
    >>> x = np.random.default_rng(0).normal(size=4000)
    >>> diag = summarize({"mu": x}, {"divergent__": np.zeros(4000)}, chains=4)
    >>> diag["divergences"], diag["draws"], is_ok(diag)
    (0, 4000, True)
    """
    rhats, bulk, tail = [], [], []
    for arr in params.values():
        flat = arr.reshape(arr.shape[0], -1)
        for j in range(flat.shape[1]):
            rhats.append(rhat(flat[:, j], chains))
            bulk.append(ess_bulk(flat[:, j], chains))
            tail.append(ess_tail(flat[:, j], chains))
    divergent = sampler.get("divergent__")
    return {
        "max_rhat": _worst(rhats, np.nanmax),
        "min_ess_bulk": _worst(bulk, np.nanmin),
        "min_ess_tail": _worst(tail, np.nanmin),
        "divergences": int(np.sum(divergent)) if divergent is not None else 0,
        "draws": int(next(iter(params.values())).shape[0]),
        "chains": int(chains),
    }


def combine(diags: list) -> dict:
    """The worst of several :func:`summarize` results (fits used together, e.g. the conditionals of a
    joint synthesis): largest R-hat, smallest ESS, NaN skipped as :func:`summarize` skips it;
    divergences summed.

    Parameters
    ----------
    diags : list of dict
        :func:`summarize` results (max_rhat, min_ess_bulk, min_ess_tail, divergences).

    Returns
    -------
    dict
        The same four keys; a key is NaN only when it is NaN in every result.
    """
    return {"max_rhat": _worst([d["max_rhat"] for d in diags], np.nanmax),
            "min_ess_bulk": _worst([d["min_ess_bulk"] for d in diags], np.nanmin),
            "min_ess_tail": _worst([d["min_ess_tail"] for d in diags], np.nanmin),
            "divergences": int(sum(d["divergences"] for d in diags))}


def is_ok(diag: dict, rhat_max: float = 1.01, ess_min: float = 400) -> bool:
    """The usual thresholds: R-hat below 1.01, bulk AND tail ESS at least 400, no divergences.

    ``diag`` is a :func:`summarize` result (or a row with the same keys, including min_ess_tail).

    Parameters
    ----------
    diag : dict
        A :func:`summarize` result.
    rhat_max : float
        R-hat must be below this.
    ess_min : float
        Bulk and tail ESS must be at least this.

    Returns
    -------
    bool

    Raises
    ------
    ValueError
        ``diag`` lacks one of the keys.
    """
    missing = {"max_rhat", "min_ess_bulk", "min_ess_tail", "divergences"} - set(diag)
    if missing:
        raise BadArgument(f"diag lacks {sorted(missing)}; pass a summarize() result")
    return bool(diag["max_rhat"] < rhat_max and diag["min_ess_bulk"] >= ess_min
                and diag["min_ess_tail"] >= ess_min and diag["divergences"] == 0)


#: :func:`is_ok`'s thresholds in words, as tables and claims state the gate
GATE = "R-hat < 1.01, bulk and tail ESS >= 400, no divergences"


def failing(fits) -> list:
    """The names of the fits that fail :func:`is_ok`.

    Parameters
    ----------
    fits : mapping
        name -> anything with a ``diagnostics`` dict (a :class:`ppmlib.mechanism.synthesis.Synthesis`, a lineup's
        results).

    Returns
    -------
    list
        The names, in the mapping's order; empty when every fit passes.
    """
    return [name for name, fit in fits.items() if not is_ok(fit.diagnostics)]
