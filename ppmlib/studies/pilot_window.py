"""Why CM's window cannot simply follow the data: the censored objective along sigma, on real wages
(book/strict_privacy.md, "A window that follows the data: the pilot").

CM releases draws from xi(theta) exp(sum_i u_i(theta)), u_i = clip(log p(y_i | theta) - r_i,
-epsilon/2, epsilon/2). The centre r_i decides where the sum peaks, and so where the draws sit:

* the fixed public centre (the command's): r_i puts the window's top at log Normal(y_i | y_i,
  sigma_ref), sigma_ref = 1 public. A record that fits well sits at the top whatever sigma is, so
  the bulk does not pull sigma down and the tails push it up: the peak lies above the data's
  residual SD.
* the pilot's centre (:mod:`ppmlib.mechanism.pilot`): r_i = log p(y_i | theta_hat). A record gains
  at most epsilon/2 however well it fits and loses at most epsilon/2 however badly, so the sum
  counts records more than it weighs them. On a wage file, whose log has a peaked bulk and long
  tails, it peaks at a sigma that fits the bulk, well below the residual SD: a second, narrow mode.
  A wider window (a larger epsilon per draw) weighs the records again: from a total of 10 or 20 up
  the peak returns to the data's scale.

:func:`window_profile` computes the profile max over beta of the sum at each sigma of a grid (Nelder
and Mead, warm-started along the grid in both directions, the larger kept), on the public wage files
of :mod:`ppmlib.studies.public_wages`. It is an analysis of the objective (it reads the data's own
least-squares fit), not a release. :func:`profile_claims` states where the peaks lie against the
data's residual SD, on every file and seed.
"""
from __future__ import annotations

__all__ = ["WINDOWS", "residual_sd", "window_profile", "profile_ledger", "profile_peaks", "peaks_by_total",
           "profile_claims", "profile_figure", "gate_comparison"]

import numpy as np
import pandas as pd

from ppmlib import _checks
from ppmlib.book.claims import Claims

#: The windows compared: the command's fixed public centre and the pilot's data-following one.
WINDOWS = ("fixed centre", "pilot")

#: The profile's grid of sigma, as multiples of the data's residual SD.
SIGMA_RATIOS = np.round(np.linspace(0.3, 2.5, 45), 3)


def residual_sd(y, X) -> float:
    """The root mean square of the least-squares residuals of y on X (the data's own scale)."""
    y = np.asarray(y, float)
    beta = np.linalg.lstsq(X, y, rcond=None)[0]
    return float(np.sqrt(np.mean((y - X @ beta) ** 2)))


def window_profile(y, X, cens, sigmas, start) -> np.ndarray:
    """max over beta of sum_i u_i(beta, sigma) at each sigma (the normal model, weights 1).

    Parameters
    ----------
    y : array, shape (n,)
        The model's outcome.
    X : array, shape (n, K)
        The design.
    cens : ppmlib.models.censoring.Censoring
        The window and its centres.
    sigmas : array, shape (G,)
        The grid, increasing.
    start : array, shape (K,)
        Where the first search starts (each later one starts at its neighbour's optimum).

    Returns
    -------
    ndarray, shape (G,)
    """
    from scipy.optimize import minimize

    from ppmlib.models.censoring import censored_terms
    from ppmlib.models.families import family
    normal, weights = family("normal"), np.ones(np.shape(y)[0])

    def total(beta, sigma):
        log_lik = normal.log_lik({"beta": beta[None, :], "sigma": np.array([sigma])}, y, X)
        return float(censored_terms(log_lik, weights, cens).sum())

    best = np.full(len(sigmas), -np.inf)
    for order in (range(len(sigmas)), reversed(range(len(sigmas)))):
        beta = np.asarray(start, float)
        for g in order:
            found = minimize(lambda b: -total(b, sigmas[g]), beta, method="Nelder-Mead",
                             options={"xatol": 1e-4, "fatol": 1e-3, "maxfev": 4000})
            beta, best[g] = found.x, max(best[g], -found.fun)
    return best


def _windows(design, total: float, *, delta: float, m: int, share: float, pilot_seed: int) -> dict:
    """The two windows of one release at ``total``: label -> Censoring (each at its own per-draw epsilon)."""
    from ppmlib.studies.public_wages import FILES
    from ppmlib.mechanism.ledger import solve_per_dataset_epsilon
    from ppmlib.mechanism.pilot import pilot, split_budget
    from ppmlib.models.censoring import censoring
    from ppmlib.models.families import family
    normal, weights = family("normal"), np.ones(design.y.size)
    eps_pilot, rho0 = split_budget(total, delta, m, share)
    found = pilot(design.y, design.X, bounds=FILES[design.name][3], rho=rho0, seed=pilot_seed, share=share)
    return {"fixed centre": censoring(normal, design.y, design.X, weights, solve_per_dataset_epsilon(total, delta, m),
                                      centring="best", reference_scale=1.0),
            "pilot": censoring(normal, design.y, design.X, weights, eps_pilot, centring="pilot", at=found.theta)}


def profile_ledger(names, seeds, total: float = 5.0, *, n: int = 3000, delta: float = 1e-6, m: int = 5,
                   share: float = 0.2, ratios=SIGMA_RATIOS) -> pd.DataFrame:
    """The profile of both windows on each public wage file and seed (a new sample of n rows each).

    The pilot's noise is seeded with seed + 1, as in ``benchmarks/bench_pilot_window.py``.

    Parameters
    ----------
    names : list of str
        Keys of :data:`ppmlib.studies.public_wages.FILES`.
    seeds : list of int
        Each draws the sample and the pilot's noise.
    total, delta : float
        The release's (epsilon, delta); m datasets.
    share : float
        The pilot's share of the release's rho.
    ratios : array
        The grid of sigma over the data's residual SD.

    Returns
    -------
    pandas.DataFrame
        One row per (file, seed, window, sigma): ``sigma / residual SD`` and ``objective`` (minus its
        largest value over the grid, so the peak is 0).
    """
    from ppmlib.studies.public_wages import design_of
    total = _checks.real(total, "total", low=0, low_open=True)
    rows = []
    for name in names:
        for seed in seeds:
            design = design_of(name, n, seed)
            scale = residual_sd(design.y, design.X)
            start = np.linalg.lstsq(design.X, design.y, rcond=None)[0]
            for label, cens in _windows(design, total, delta=delta, m=m, share=share, pilot_seed=seed + 1).items():
                values = window_profile(design.y, design.X, cens, np.asarray(ratios) * scale, start)
                rows += [{"file": name, "seed": seed, "window": label, "sigma / residual SD": float(r),
                          "objective": float(v - values.max())} for r, v in zip(ratios, values)]
    return pd.DataFrame(rows)


def profile_peaks(profile: pd.DataFrame) -> pd.DataFrame:
    """Where each profile peaks: sigma / residual SD at the largest objective, per (file, seed, window)."""
    at_peak = profile.loc[profile.groupby(["file", "seed", "window"])["objective"].idxmax()]
    return at_peak.pivot_table(index=["file", "seed"], columns="window", values="sigma / residual SD")


def peaks_by_total(names, seed: int, totals, **settings) -> pd.DataFrame:
    """:func:`profile_peaks` of one seed at each total: rows (total epsilon, file), a column per window.

    ``settings`` go to :func:`profile_ledger` (n, delta, m, share, ratios).
    """
    return pd.concat({float(total): profile_peaks(profile_ledger(names, [seed], total, **settings)).droplevel("seed")
                      for total in totals}, names=["total epsilon"])


def profile_claims(peaks: pd.DataFrame, *, check: bool = True, into: Claims | None = None) -> Claims:
    """Where the two windows' objectives peak against the data's residual SD, on every file and seed.

    The null of each is 1, the peak of an objective that targets the data's own scale.

    Parameters
    ----------
    peaks : pandas.DataFrame
        :func:`profile_peaks`' table.
    check : bool
        Assert the claims (else report them).
    into : Claims, optional
        Add the rows to these claims (default: new ones).

    Returns
    -------
    Claims
    """
    claims = Claims() if into is None else into
    narrow = float(peaks["pilot"].max())
    claims.add("the pilot's window peaks below 0.85 of the data's residual SD on every file and seed",
               "(our measurement)", f"at most {narrow:.2f}", lambda v: v < 0.85, check, value=narrow, null=1.0)
    wide = float(peaks["fixed centre"].min())
    claims.add("the fixed centre's window (sigma_ref = 1) peaks above 1.15 times the data's residual SD on every "
               "file and seed", "(our measurement)", f"at least {wide:.2f}", lambda v: v > 1.15, check, value=wide,
               null=1.0)
    return claims


def profile_figure(profile: pd.DataFrame, seed: int):
    """The profile of both windows against sigma / residual SD, a panel per file, for one seed.

    Returns
    -------
    matplotlib.figure.Figure
    """
    import matplotlib.pyplot as plt
    one = profile[profile["seed"] == seed]
    names = list(dict.fromkeys(one["file"]))
    fig, axes = plt.subplots(1, len(names), figsize=(3.6 * len(names), 3.3), sharey=True, squeeze=False)
    for ax, name in zip(axes[0], names):
        for label, colour in zip(WINDOWS, ("tab:blue", "tab:red")):
            part = one[(one["file"] == name) & (one["window"] == label)]
            ax.plot(part["sigma / residual SD"], part["objective"], color=colour, label=label)
        ax.axvline(1.0, color="k", lw=0.8, ls="--")
        ax.set_ylim(-150, 10)
        ax.set_title(name, fontsize=9)
        ax.set_xlabel(r"$\sigma$ / the data's residual SD")
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel(r"$\max_\beta \sum_i u_i$ (0 at the peak)")
    axes[0][0].legend(fontsize=8)
    fig.tight_layout()
    return fig


def gate_comparison(fixed: pd.DataFrame, piloted: pd.DataFrame) -> pd.DataFrame:
    """The fixed centre's and the pilot's CM fits at the command's sampler, cell by cell.

    Parameters
    ----------
    fixed, piloted : pandas.DataFrame
        Rows of ``benchmarks/bench_pilot_window.py`` (one variant each; the pilot's at one share).

    Returns
    -------
    pandas.DataFrame
        Per (file, total epsilon): the gate, S_pMSE, the SD ratio and the coverage of each.
    """
    shown = ["gate", "max R-hat", "S_pMSE logit", "SD log y ratio", "coverage 95%"]
    both = pd.concat([fixed.assign(window="fixed centre"), piloted.assign(window="pilot")])
    return both.pivot_table(index=["file", "total epsilon"], columns="window", values=shown,
                            aggfunc="first")[shown]
