"""The DP definitions chapter's study (book/dp_definitions.md): its tables of bounds, fit diagnostics
and LW shifts, and its figures of the exact leave-one-out ratios and the LW Delta map.
"""
from __future__ import annotations

__all__ = ["bounds_table", "fit_diagnostics", "lw_shift_table", "em_versus_sw", "loo_ratios",
           "worst_neighbours", "loo_tails", "delta_map"]

import matplotlib.pyplot as plt
import numpy as np

from ppmlib.inference import exact
from ppmlib import _checks
from ppmlib.mechanism.bounds import lipschitz_bound
from ppmlib.models.families import POISSON_PRIOR
from ppmlib.plots import PALETTE, _colour


def bounds_table(fits: dict) -> "pd.DataFrame":
    """One row per mechanism of ``fits`` (name -> (Fit, (n,) weights)): Delta from the draws,
    epsilon = 2 Delta, and the mean and smallest weight."""
    import pandas as pd
    rows = {}
    for name, (fitted, weights) in fits.items():
        delta = lipschitz_bound(fitted.log_lik, weights)
        rows[name] = {"Delta": delta, "epsilon = 2 Delta": 2.0 * delta,
                      "mean weight": float(np.mean(weights)), "min weight": float(np.min(weights))}
    return pd.DataFrame.from_dict(rows, orient="index")


def fit_diagnostics(fits: dict, grid=None) -> "pd.DataFrame":
    """Convergence of every fit: one row per mechanism of ``fits`` (name -> (Fit, weights)), then
    one per refit of an LW (c, g) grid (``grid``: a table with columns c, g, max_rhat, min_ess_bulk,
    min_ess_tail, divergences, diagnostics_ok, as the LW grid returns). Columns max_rhat,
    min_ess_bulk, min_ess_tail, divergences and ok (``ppmlib.inference.diagnostics.is_ok``)."""
    import pandas as pd

    from ppmlib.inference.diagnostics import is_ok
    columns = ["max_rhat", "min_ess_bulk", "min_ess_tail", "divergences", "ok"]
    table = pd.DataFrame.from_dict({name: {**fitted.diagnostics, "ok": is_ok(fitted.diagnostics)}
                                    for name, (fitted, _) in fits.items()}, orient="index")
    if grid is not None:
        labels = [f"LW (c={c:g}, g={g:g})" for c, g in zip(grid["c"], grid["g"])]
        refits = grid.rename(columns={"diagnostics_ok": "ok"}).set_axis(labels)
        table = pd.concat([table, refits])
    return table[columns]


def lw_shift_table(y, base_log_lik, c: float, shifts, *, grid_points: int = 2000, mass: float = 1 - 1e-6,
                   prior_shape: float = POISSON_PRIOR["prior_shape"],
                   prior_rate: float = POISSON_PRIOR["prior_rate"]) -> "pd.DataFrame":
    """LW weights at scale ``c`` for each shift g in ``shifts``, without refitting (the exact Poisson
    pseudo posterior): one row per shift with Delta as the sup of abs(alpha_i f_lambda(y_i)) over
    ``grid_points`` rates spanning the central ``mass`` of the exact pseudo posterior, the number of
    records with weight 0, and the mean weight. ``base_log_lik`` (S, n) from the unweighted fit."""
    import pandas as pd

    from ppmlib.mechanism.weights import lw_weights
    grid_points = _checks.integer(grid_points, "grid_points", low=2)
    prior = dict(prior_shape=prior_shape, prior_rate=prior_rate)
    rows = {}
    for shift in _checks.finite_array(shifts, "shifts", ndim=1):
        weights = lw_weights(base_log_lik, c=c, g=float(shift))
        grid = np.linspace(*exact.central_interval(y, weights, **prior, mass=mass), grid_points)
        rows[f"g = {shift:g}"] = {"Delta (exact pseudo posterior, grid)": float(exact.grid_record_bounds(grid, y, weights).max()),
                                  "records with weight 0": int((weights == 0).sum()), "mean weight": float(weights.mean())}
    return pd.DataFrame.from_dict(rows, orient="index")


def em_versus_sw(sw_draws, grid, sw_logpdf, em_logpdf, a: float):
    """Stan's SW draws, the exact SW Gamma and the grid-normalised EM density on one axis."""
    fig, ax = plt.subplots(figsize=(7, 3.8))
    ax.hist(sw_draws, bins=60, density=True, color=PALETTE["SW"], alpha=0.35, label="Stan SW draws")
    ax.plot(grid, np.exp(sw_logpdf), color="black", lw=2, label="exact Gamma (SW, conjugate)")
    ax.plot(grid, np.exp(em_logpdf), color=PALETTE["SW"], lw=1.5, ls="--", label="EM, normalised on the grid")
    ax.set_xlabel(r"Poisson rate $\lambda$")
    ax.set_ylabel("density")
    ax.set_title(f"Exponential mechanism = scalar-weighted pseudo posterior (a = {a:.3f})")
    ax.legend()
    fig.tight_layout()
    return fig


def _check_colours(checks: dict):
    return [_colour(name, i) for i, name in enumerate(checks)]


def loo_ratios(checks: dict, y):
    """Per neighbour (by the removed record's value): the largest exact log ratio, its by-record
    bound 2 Delta_i and the mechanism's 2 Delta, on a log axis (one panel per LooCheck)."""
    fig, axes = plt.subplots(1, len(checks), figsize=(6 * len(checks), 4.2), sharey=True, squeeze=False)
    floor = 1e-3  # a zero-weight record has a ratio of exactly 0; it is drawn at this floor on the log axis
    for ax, (name, ch), colour in zip(axes[0], checks.items(), _check_colours(checks)):
        ax.scatter(y, np.maximum(ch.ratio, floor), s=9, color=colour, alpha=0.6,
                   label=r"max$_\lambda$ |log ratio| for neighbour $x_{-i}$")
        ax.scatter(y, np.maximum(2 * ch.record_bounds, floor), s=6, color="grey", alpha=0.35, marker="x",
                   label=r"$2\Delta_{\alpha, x_i}$ (by-record bound, draws)")
        ax.axhline(2 * ch.delta, color="red", ls="--", lw=1.5, label=rf"$2\Delta$ = {2 * ch.delta:.2f}")
        ax.set_yscale("log")
        ax.set_xlabel(r"value $y_i$ of the removed record")
        ax.set_title(f"{name}: largest log density ratio per neighbour")
        ax.grid(alpha=0.3)
        ax.legend(loc="lower left", fontsize=8)
    axes[0][0].set_ylabel("absolute log density ratio (log scale)")
    fig.tight_layout()
    return fig


def worst_neighbours(checks: dict, y, *, prior_shape: float, prior_rate: float):
    """For each mechanism, the exact pseudo posterior of the database and of its worst neighbour."""
    prior = dict(prior_shape=prior_shape, prior_rate=prior_rate)
    fig, axes = plt.subplots(1, len(checks), figsize=(6 * len(checks), 4), squeeze=False)
    for ax, (name, ch), colour in zip(axes[0], checks.items(), _check_colours(checks)):
        grid, w, worst = ch.grid, ch.weights, ch.worst
        keep = np.arange(y.size) != worst
        ax.plot(grid, np.exp(exact.log_density(grid, y, w, **prior)), color=colour, lw=2, label=r"$x$ (all records)")
        ax.plot(grid, np.exp(exact.log_density(grid, y[keep], w[keep], **prior)), color="black", lw=1.5, ls="--",
                label=rf"$x_{{-i}}$ (record $y_i$ = {y[worst]}, weight {w[worst]:.2f}, removed)")
        ratio = exact.loo_log_ratio(grid, y, w, **prior)[worst]
        ax.set_title(f"{name}: max |log ratio| = {np.abs(ratio).max():.3f} (2Δ = {2 * ch.delta:.2f})")
        ax.set_xlabel(r"Poisson rate $\lambda$ (grid = the draws' range)")
        ax.set_ylabel("pseudo posterior density")
        ax.set_ylim(0, ax.get_ylim()[1] * 1.3)  # headroom for the legend above the peak
        ax.legend(fontsize=8, loc="upper left")
    fig.tight_layout()
    return fig


def loo_tails(wide, curves: dict, checks: dict, shaded: str = "Unweighted"):
    """The largest log ratio over all neighbours on a wide grid, each mechanism's 2 Delta dashed,
    and the range of the ``shaded`` mechanism's draws as a grey band (log axis)."""
    fig, ax = plt.subplots(figsize=(11, 4.2))
    for (name, curve), colour in zip(curves.items(), _check_colours(checks)):
        ax.plot(wide, curve, color=colour, lw=2, label=f"{name}: max over neighbours")
        ax.axhline(2 * checks[name].delta, color=colour, ls="--", lw=1, label=f"{name}: 2Δ = {2 * checks[name].delta:.2f}")
    ax.axvspan(checks[shaded].grid[0], checks[shaded].grid[-1], color="grey", alpha=0.3,
               label=f"range of the {shaded.lower()} draws")
    ax.set_yscale("log")
    ax.set_xlabel(r"Poisson rate $\lambda$")
    ax.set_ylabel("max |log density ratio| (log scale)")
    ax.set_title("The LOO log ratio far from the data: bounded only where the pseudo posterior lives")
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    return fig


def delta_map(surface, delta_unweighted: float):
    """Delta over a (c, g) grid (the DataFrame of ``lw_delta_grid``): a labelled map, and Delta
    against c for each g beside the unweighted Delta."""
    table = surface.pivot(index="g", columns="c", values="Delta")
    values = table.to_numpy()
    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4))
    image = left.imshow(values, origin="lower", cmap="viridis", aspect="auto")
    left.set_xticks(range(len(table.columns)), [f"{v:g}" for v in table.columns])
    left.set_yticks(range(len(table.index)), [f"{v:g}" for v in table.index])
    for (row, col), value in np.ndenumerate(values):
        bright = value > values.mean()  # dark text on the bright end of the colour map
        left.text(col, row, f"{value:.2f}", ha="center", va="center", color="black" if bright else "white", fontsize=10)
    left.set_xlabel("scale c")
    left.set_ylabel("shift g")
    left.set_title("LW: Lipschitz bound Δ by (c, g)")
    fig.colorbar(image, ax=left, label="Δ")
    for shift, rows in surface.groupby("g"):
        right.plot(rows["c"], rows["Delta"], marker="o", label=f"g = {shift:g}")
    right.axhline(delta_unweighted, color=PALETTE["Unweighted"], ls=":", label=f"Unweighted Δ = {delta_unweighted:.2f}")
    right.set_xlabel("scale c")
    right.set_ylabel("Δ (ε = 2Δ)")
    right.set_title("Δ rises with c and with g")
    right.legend(fontsize=8)
    right.grid(alpha=0.3)
    fig.tight_layout()
    return fig
