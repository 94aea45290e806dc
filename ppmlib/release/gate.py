"""The gate of a release: what is checked before any fit (the draws a fit makes, the memory a run
needs) and after the fits (every fit passes the diagnostics gate, or nothing is released).

A fit that fails the gate (``ppmlib.inference.diagnostics.GATE``) stops the release with
:class:`FitsFailed`, which carries the verdict; ``allow_failed_fits`` releases anyway, and the
manifest says so.
"""
from __future__ import annotations

__all__ = ["gate_line", "FitsFailed", "memory_needed", "check_memory", "diagnostics_verdict", "check", "check_draws", "resamples"]

from ppmlib.errors import BadArgument, DataRefused, FitRejected
from ppmlib.inference.diagnostics import GATE, MIN_DRAWS, failing
from ppmlib.inference.posterior import Sampler
from ppmlib.release import data as _data
from ppmlib.release.data import Prepared


# memory rule of thumb: the bounds hold a few log-likelihood blocks at once
BLOCK_COPIES = 4


class FitsFailed(FitRejected):
    """Some fit of the lineup fails the diagnostics gate; nothing was released
    (a :class:`ppmlib.errors.FitRejected` that carries the gate's verdict).

    Attributes
    ----------
    verdict : dict
        The gate's verdict (:func:`diagnostics_verdict`).
    """

    def __init__(self, message: str, verdict: dict):
        super().__init__(message)
        self.verdict = verdict


def memory_needed(prepared: Prepared, sampler: Sampler, m: int, synthesizers: int) -> int:
    """Bytes a run needs at its peak, roughly: what the fits, the bounds and the report hold at once.

    The bounds read the log-likelihood in blocks of about 2**21 numbers (at least one draw of n
    records: :meth:`ppmlib.Fit.log_lik_blocks`), a few blocks at a time; each synthesizer keeps its
    draws (S x P, per mixture component), its weights and bounds and its m synthetic datasets
    (m x n); the design is n x P; the report's bootstrap of the data holds B x n values.

    Parameters
    ----------
    prepared : Prepared
        The checked data (n records, P design columns).
    sampler : Sampler
        Its chains and draws give S.
    m : int
        Synthetic datasets per synthesizer.
    synthesizers : int
        How many synthesizers the lineup fits.

    Returns
    -------
    int
    """
    n = prepared.n
    draws = sampler.chains * sampler.draws
    columns = prepared.X.shape[1] if prepared.X is not None else 1
    components = int((prepared.prior or {}).get("K", 3)) if prepared.model == "mixture" else 1
    numbers = (BLOCK_COPIES * max(2 ** 21, n) + synthesizers * ((m + 3) * n + draws * (columns + 2) * components)
               + 3 * n * columns + resamples(n) * n)
    return 8 * numbers


def check_memory(prepared: Prepared, sampler: Sampler, m: int, synthesizers: int) -> None:
    """Refuse, before any fit, a run that needs more memory than this machine has (:func:`memory_needed`).

    Parameters
    ----------
    prepared, sampler, m, synthesizers
        As for :func:`memory_needed`.
    """
    need, available = memory_needed(prepared, sampler, m, synthesizers), _data.available_memory()
    if available is not None and need > available:
        raise DataRefused(f"this run needs about {need / 1e6:.0f} MB of memory ({prepared.n} records, "
                          f"{sampler.chains * sampler.draws} draws, {m} datasets per synthesizer) and "
                          f"{available / 1e6:.0f} MB are available; use fewer draws, datasets or records, or a "
                          "larger machine")


def diagnostics_verdict(results, allow_failed_fits: bool = False) -> dict:
    """The diagnostics gate's verdict on every fit of a lineup, as the manifest records it.

    Parameters
    ----------
    results : mapping
        name -> a synthesis with a ``diagnostics`` dict.
    allow_failed_fits : bool
        Whether a failing fit is released anyway.

    Returns
    -------
    dict
        ``verdict`` ("passed" or "failed"), ``gate`` (the thresholds in words), ``failing`` (names)
        and ``released_anyway`` (True only when some fit fails and it was allowed).
    """
    names = failing(results)
    return {"verdict": "failed" if names else "passed", "gate": GATE, "failing": names,
            "released_anyway": bool(names) and bool(allow_failed_fits)}


def check(results, allow_failed_fits: bool) -> dict:
    """The diagnostics gate of a release: the verdict, or :class:`FitsFailed` (nothing released).

    Parameters
    ----------
    results : ppmlib.mechanism.lineup.Results
        The fits of the lineup.
    allow_failed_fits : bool
        Release anyway (the verdict says so).

    Returns
    -------
    dict
        :func:`diagnostics_verdict`.
    """
    verdict = diagnostics_verdict(results, allow_failed_fits)
    if verdict["failing"] and not allow_failed_fits:
        detail = "; ".join(
            f"{name}: max R-hat {results[name].diagnostics['max_rhat']:.3g}, min bulk ESS "
            f"{results[name].diagnostics['min_ess_bulk']:.0f}, min tail ESS {results[name].diagnostics['min_ess_tail']:.0f}, "
            f"{results[name].diagnostics['divergences']} divergences" for name in verdict["failing"])
        raise FitsFailed(f"the fits of {', '.join(verdict['failing'])} fail the diagnostics gate ({GATE}): {detail}. "
                         "Their Delta, epsilon and synthetic data may not come from the pseudo posterior, so nothing "
                         "was released; fit with more draws or chains (allow_failed_fits=True releases anyway, and "
                         "the manifest says so)", verdict)
    return verdict


def check_draws(sampler, m: int) -> None:
    """Refuse, before any fit, a fit too short for the diagnostics gate to judge or for m datasets.

    Parameters
    ----------
    sampler : Sampler
        The NUTS settings of every fit.
    m : int
        The synthetic datasets to release (one draw each).

    Raises
    ------
    ppmlib.errors.BadArgument
        Fewer than ``MIN_DRAWS`` draws per chain, or fewer draws in all than m.
    """
    if sampler.draws < MIN_DRAWS:
        raise BadArgument(f"draws={sampler.draws} per chain is too few for the diagnostics gate to judge a fit (split "
                          f"R-hat and ESS need at least {MIN_DRAWS} draws per chain; the gate asks ESS >= 400); "
                          f"give draws= of at least {MIN_DRAWS} (the default is 1000). Nothing was fitted")
    if sampler.chains * sampler.draws < m:
        raise BadArgument(f"m={m} synthetic datasets need m posterior draws, and chains={sampler.chains} x "
                          f"draws={sampler.draws} make {sampler.chains * sampler.draws}; give more draws= or chains=, "
                          "or a smaller m= value. Nothing was fitted")


def resamples(n: int) -> int:
    """The report's bootstrap resamples: B x n values held, fewer for a large file to stay near 400 MB.

    Parameters
    ----------
    n : int
        Records.

    Returns
    -------
    int
        Between 50 and 500.
    """
    return int(min(500, max(50, 50_000_000 // n)))


def gate_line(verdict: dict) -> str:
    """The summary's line on the diagnostics gate.

    Parameters
    ----------
    verdict : dict
        :func:`diagnostics_verdict`.

    Returns
    -------
    str
    """
    if verdict["verdict"] == "no fits":
        return f"diagnostics: {verdict['gate']}"
    if verdict["failing"]:
        return (f"diagnostics: the fits of {', '.join(verdict['failing'])} FAILED the diagnostics gate "
                f"({verdict['gate']}); released anyway (--allow-failed-fits), and the manifest says so")
    return f"diagnostics: every fit passes the gate ({verdict['gate']})"
