"""The risk-efficient weights chapter's study (book/risk_efficient.md): whack-a-mole on the course's CE sample.

The synthesizer is the course slides' regression of log income on log expenditure. The intruder
knows each record's UrbanRural and Race (its pattern) and looks for its log income among the
synthetic records of its pattern within a radius (:mod:`ppmlib.mechanism.pairwise`). Four weighting
schemes are compared with the unweighted synthesizer: the marginal and the pairwise
identification-risk weights (Hu, Savitsky and Williams), and LW and LW_final matched to the
pairwise scheme's Delta. For every synthesizer the record-level risk is the authors' IR_i over the
m released datasets; a record's risk "rises" under a scheme when its IR_i is above the unweighted
synthesizer's, and "rises clearly" when the difference is more than ``z`` standard errors (over
the m datasets of each).
"""
from __future__ import annotations

__all__ = ["KEYS", "REFIT", "record_risks", "schemes_lineup", "whack_a_mole", "seed_table", "seed_contrasts", "risk_shift_plot"]

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from ppmlib import _checks
from ppmlib.mechanism.lineup import Member, member, run
from ppmlib.mechanism.pairwise import identification_counts

KEYS = ("UrbanRural", "Race")  # what the intruder knows about every record (the slides' un-synthesized categories)
REFIT = "Unweighted again"     # the unweighted synthesizer refitted with another seed: how many rises are noise


def record_risks(synthetic, y, radius: float, keys, relative: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Each record's identification risk IR_i over the released datasets, and its standard error.

    Parameters
    ----------
    synthetic : ndarray, shape (m, n)
        The released values (row i of a dataset is record i's).
    y : ndarray, shape (n,)
        The confidential values.
    radius : float
        The intruder's matching radius (absolute on this scale, or relative).
    keys : array_like or DataFrame with n rows
        The intruder's known variables.
    relative : bool
        Whether ``radius`` is a share of abs(y_i).

    Returns
    -------
    risk : ndarray, shape (n,)
        IR_i = mean over datasets of (1 - c_il / M_i) T_il.
    se : ndarray, shape (n,)
        Its standard error over the m datasets (sd / sqrt(m); 0 when m = 1).
    """
    c, T, M = identification_counts(y, synthetic, radius, keys, relative)
    per_set = (1.0 - c / M[:, None]) * T
    m = per_set.shape[1]
    se = per_set.std(axis=1, ddof=1) / np.sqrt(m) if m > 1 else np.zeros(per_set.shape[0])
    return per_set.mean(axis=1), se


def schemes_lineup(radius: float, keys, c: float = 1.0, g: float = 0.0, tau: float = 0.05,
                   with_lw: bool = True) -> tuple:
    """Unweighted, the marginal and pairwise identification-risk schemes, LW and LW_final at the pairwise Delta,
    and the unweighted synthesizer once more with its own seed (:data:`REFIT`: the noise floor of the counts).

    Parameters
    ----------
    radius : float
        The agency's matching radius for the weights (absolute on the synthesized scale).
    keys : ndarray, shape (n,) or (n, k)
        The intruder's known variables.
    c, g : float
        Scale and shift of both risk-based schemes (the authors' defaults: 1 and 0).
    tau : float
        LW's and LW_final's calibration tolerances.
    with_lw : bool
        Include LW (matched to the pairwise scheme's Delta) and LW_final.

    Returns
    -------
    tuple of Member
    """
    policy = dict(radius=radius, keys=keys, c=c, g=g)
    members = [member("Unweighted"), member("IR_marginal", **policy), member("IR_pairwise", **policy)]
    if with_lw:
        members += [member("LW", match="IR_pairwise", tau=tau), member("LW_final", tau=tau)]
    # the noise floor: the unweighted synthesizer again, with its own seed (last, so the others keep theirs)
    return tuple(members) + (Member(REFIT, "unweighted"),)


def whack_a_mole(results, y, radius: float, keys, z: float = 2.0, reference: str = "Unweighted") -> pd.DataFrame:
    """Per synthesizer: its Delta and epsilon, its mean and largest IR_i, and how many records' risk rose.

    Parameters
    ----------
    results : mapping name -> Synthesis
        The synthesizers (``reference`` among them), each with its m released datasets.
    y : ndarray, shape (n,)
        The confidential values.
    radius : float
        The intruder's radius (absolute on the synthesized scale).
    keys : array_like
        The intruder's known variables.
    z : float
        A rise is "clear" when it is more than z standard errors of the difference.
    reference : str
        The synthesizer the rises are counted against.

    Returns
    -------
    pandas.DataFrame
        One row per synthesizer.
    """
    z = _checks.real(z, "z", low=0)
    risks = {name: record_risks(s.synthetic, y, radius, keys) for name, s in results.items()}
    base, base_se = risks[reference]
    top = base >= np.quantile(base, 0.9)
    rows = {}
    for name, (risk, se) in risks.items():
        diff, spread = risk - base, np.sqrt(se**2 + base_se**2)
        rows[name] = {"Delta": results[name].delta, "epsilon": results[name].epsilon,
                      "mean IR": float(risk.mean()), "max IR": float(risk.max()),
                      "mean IR, top decile": float(risk[top].mean()),
                      "risk rises": int((diff > 0).sum()), "risk falls": int((diff < 0).sum()),
                      "rises clearly": int((diff > z * spread).sum()),
                      "falls clearly": int((diff < -z * spread).sum())}
    return pd.DataFrame(rows).T


def seed_table(y, X, keys, seeds, radius: float, c: float = 1.0, g: float = 0.0, m: int = 20, sampler=None,
               z: float = 2.0) -> pd.DataFrame:
    """The whack-a-mole counts of the marginal and pairwise schemes, and of the unweighted refit, on several seeds
    (no LW fits).

    Parameters
    ----------
    y, X : ndarray
        Log income (n,) and the design matrix (n, 2).
    keys : array_like
        The intruder's known variables.
    seeds : sequence of int
        One run of Unweighted, IR_marginal and IR_pairwise per seed.
    radius, c, g : float
        As for :func:`schemes_lineup`.
    m : int
        Released datasets per synthesizer.
    sampler : Sampler, optional
        NUTS settings.
    z : float
        As for :func:`whack_a_mole`.

    Returns
    -------
    pandas.DataFrame
        One row per seed and scheme: Delta, epsilon, mean IR, rises, rises clearly.
    """
    frames = {}
    for seed in seeds:
        done = run(schemes_lineup(radius, keys, c, g, with_lw=False), "normal", y, X=X, m=m, sampler=sampler,
                   seed=int(seed), progress=False)
        table = whack_a_mole(done, y, radius, keys, z)
        frames[int(seed)] = table.loc[["IR_marginal", "IR_pairwise", REFIT],
                                      ["Delta", "epsilon", "mean IR", "risk rises", "rises clearly", "falls clearly"]]
    return pd.concat(frames, names=["seed", "scheme"])


def seed_contrasts(by_seed: pd.DataFrame) -> pd.DataFrame:
    """Per seed, what the chapter's "on every seed" claims compare, from :func:`seed_table`.

    Returns
    -------
    pandas.DataFrame
        Indexed by seed: clear rises of the marginal scheme minus the unweighted refit's (whack-a-mole
        beyond refit noise), clear rises and any rises of the marginal scheme minus the pairwise
        scheme's, and the mean IR of the marginal scheme minus the pairwise scheme's.
    """
    wide = by_seed.unstack("scheme")
    return pd.DataFrame({
        "clear rises, marginal - refit": (wide[("rises clearly", "IR_marginal")] - wide[("rises clearly", REFIT)]).astype(int),
        "clear rises, marginal - pairwise": (wide[("rises clearly", "IR_marginal")]
                                             - wide[("rises clearly", "IR_pairwise")]).astype(int),
        "any rises, marginal - pairwise": (wide[("risk rises", "IR_marginal")] - wide[("risk rises", "IR_pairwise")]).astype(int),
        "mean IR, marginal - pairwise": wide[("mean IR", "IR_marginal")] - wide[("mean IR", "IR_pairwise")]})


def risk_shift_plot(results, y, radius: float, keys, names=("IR_marginal", "IR_pairwise"),
                    reference: str = "Unweighted"):
    """Each record's IR_i under a scheme against its IR_i unweighted (one panel per scheme).

    Parameters
    ----------
    results : mapping name -> Synthesis
    y : ndarray, shape (n,)
    radius : float
    keys : array_like
    names : sequence of str
        The schemes to show.
    reference : str
        The synthesizer on the horizontal axis.

    Returns
    -------
    matplotlib.figure.Figure
    """
    from ppmlib.plots import PALETTE
    base = record_risks(results[reference].synthetic, y, radius, keys)[0]
    fig, axes = plt.subplots(1, len(names), figsize=(5.5 * len(names), 4.2), sharey=True, squeeze=False)
    top = max(base.max(), *(record_risks(results[n].synthetic, y, radius, keys)[0].max() for n in names))
    for ax, name in zip(axes[0], names):
        risk = record_risks(results[name].synthetic, y, radius, keys)[0]
        rises = risk > base
        ax.scatter(base[~rises], risk[~rises], s=8, alpha=0.5, color=PALETTE.get(reference, "grey"), label="falls or equal")
        ax.scatter(base[rises], risk[rises], s=8, alpha=0.7, color="crimson", label=f"rises ({rises.sum()})")
        ax.plot([0, top], [0, top], color="black", lw=1)
        ax.set(xlabel=f"IR_i, {reference}", title=name)
        ax.legend(loc="upper left")
    axes[0, 0].set_ylabel("IR_i under the scheme")
    fig.tight_layout()
    return fig
