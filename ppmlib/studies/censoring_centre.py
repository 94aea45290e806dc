"""Where the censoring window is centred, and what that does to the censoring paper's claims
(book/strict_privacy.md, "The claims against the centre").

The paper ranks PPM above WCM above CM, and says CM is distorted toward the prior. Its window's
centre r_i is a free choice; the ranking depends on it. On Poisson counts, with exact draws, each
seed draws a database and every total epsilon E runs PPM (LW scaled to 2 Delta = epsilon per
dataset: this database only) beside CM and WCM with each of four centres:

* ``best``: the window's top at the record's saturated log-likelihood (the library's default; public).
* ``zero``: r_i = 0, the paper's literal reading.
* ``pilot``: r_i = log p(y_i | lambda_hat), lambda_hat a noisy clipped mean
  (:func:`ppmlib.mechanism.pilot.count_pilot`) bought with a share of the release's rho, the draws
  getting the rest (:func:`ppmlib.mechanism.pilot.split_budget`): the window follows the data inside
  the guarantee.
* ``at the data``: the same window at the data's own mean, free: *not private*, the reference of
  what a perfectly placed window keeps.

Utility is the *information about the data*: the unweighted posterior's variance over the mean
squared distance of the scheme's draws from the unweighted posterior's mean. It is the information
kept of ``ppmlib.studies.strict_privacy.claims`` (the precision ratio) when the scheme's
posterior is centred where the unweighted one is, and less when it is narrow about another rate,
as a window centred on a noisy estimate can make it. The pull toward the prior is measured as there.
"""
from __future__ import annotations

__all__ = ["CENTRES", "ORACLE", "centre_ledger", "centre_summary", "centre_claims", "centre_figure"]

import numpy as np
import pandas as pd

from ppmlib import _checks
from ppmlib.book.claims import Claims
from ppmlib.mechanism.ledger import solve_per_dataset_epsilon
from ppmlib.mechanism.pilot import PILOT_SHARE, Pilot, count_pilot, split_budget
from ppmlib.seeding import seeds as make_seeds

#: The centres compared, in the order the tables show them.
CENTRES = ("best", "zero", "pilot", "at the data")
#: The centre that is not private (a reference only).
ORACLE = "at the data"


def _at_the_data(y: np.ndarray) -> Pilot:
    """The window's centre at the data's own mean: not private (rho 0 is not a price, it is a reference)."""
    return Pilot({"lambda": np.array([float(y.mean())])}, 0.0, None, (0.0, np.inf), 0.0, 1, 1)


def _members(y, E: float, *, delta: float, m: int, bound: float, share: float, seeds) -> tuple[list, list]:
    """PPM, then CM and WCM at every centre, at total E; (members, (centre, scheme) per member)."""
    from ppmlib.mechanism.lineup import Member
    from ppmlib.studies.strict_privacy import local_weights_at
    eps = solve_per_dataset_epsilon(E, delta, m)
    eps_pilot, rho0 = split_budget(E, delta, m, share)
    found = count_pilot(y, bound=bound, rho=rho0, seed=seeds[0], share=share)
    members = [Member("PPM", "custom", settings={"weights": local_weights_at(y, eps, seed=seeds[1])})]
    labels = [("", "PPM")]                  # PPM has no window
    for centre in CENTRES:
        settings = {"pilot": found, "epsilon": eps_pilot} if centre == "pilot" else \
            {"pilot": _at_the_data(y), "epsilon": eps} if centre == ORACLE else {"centring": centre, "epsilon": eps}
        members.append(Member(f"CM {centre}", "cm", settings=settings))
        members.append(Member(f"WCM {centre}", "wcm", base="Unweighted", settings=settings))
        labels += [(centre, "CM"), (centre, "WCM")]
    return members, labels


def centre_ledger(seeds, totals, *, data, delta: float = 1e-6, m: int = 5, bound: float,
                  share: float = PILOT_SHARE, draws: int = 4000) -> pd.DataFrame:
    """PPM, CM and WCM with every centre of :data:`CENTRES`, on a Poisson database per seed.

    Parameters
    ----------
    seeds : list of int
        One database (``data(seed)``) and one run per seed.
    totals : list of float
        Total epsilons E of the release of m datasets.
    data : callable
        seed -> counts.
    delta : float
        The release's delta.
    m : int
        Datasets per release (the pilot's draws are priced as m).
    bound : float
        The pilot's public bound of a count.
    share : float
        The pilot's share of the release's rho.
    draws : int
        Exact draws per fit.

    Returns
    -------
    pandas.DataFrame
        One row per (seed, total, scheme, centre): per-draw epsilon, share censored, the rate's
        posterior mean and sd, the unweighted posterior's, the information kept and the pull toward
        the prior's mean.
    """
    from ppmlib.inference import exact
    from ppmlib.mechanism.lineup import Member, run as run_lineup
    sampler = exact.ConjugateSampler(chains=2, draws=max(1, draws // 2))
    rows = []
    for seed in seeds:
        y = _checks.counts(data(seed))
        s = make_seeds(_checks.seed(seed), 1 + 3 * len(totals))
        base = run_lineup([Member("Unweighted", "unweighted")], "poisson", y, sampler=sampler, seed=[s[0]], m=1,
                          progress=False)["Unweighted"]
        unweighted = base.location_draws
        for j, E in enumerate(totals):
            members, labels = _members(y, float(E), delta=delta, m=m, bound=bound, share=share,
                                       seeds=s[1 + 3 * j: 3 + 3 * j])
            done = run_lineup(members, "poisson", y, sampler=sampler, seed=[s[3 + 3 * j]] * len(members), m=1,
                              progress=False, given={"Unweighted": base})
            for member, (centre, scheme) in zip(members, labels):
                made = done[member.name]
                lam = made.location_draws
                rows.append({"seed": seed, "total epsilon": float(E), "scheme": scheme, "centre": centre,
                             "per-draw epsilon": made.epsilon, "share censored": made.share_censored or 0.0,
                             "location mean": float(lam.mean()), "location sd": float(lam.std()),
                             "unweighted mean": float(unweighted.mean()),
                             "information kept": float((unweighted.std() / lam.std()) ** 2),
                             "information about the data": _about_the_data(lam, unweighted)})
    return pd.DataFrame(rows)


def _about_the_data(draws: np.ndarray, unweighted: np.ndarray) -> float:
    """The unweighted posterior's variance over the mean squared distance of ``draws`` from its mean:
    the information kept, discounted for a posterior that is narrow about the wrong rate."""
    return float(unweighted.var() / np.mean((draws - unweighted.mean()) ** 2))


def centre_summary(table: pd.DataFrame) -> pd.DataFrame:
    """Per (centre, scheme, total): the information kept and the share censored, their range over seeds."""
    t = table.assign(centre=table["centre"].replace("", "(no window)"))
    out = t.groupby(["centre", "scheme", "total epsilon"], sort=False).agg(
        info_min=("information about the data", "min"), info_max=("information about the data", "max"),
        precision=("information kept", "median"),
        censored=("share censored", "mean"), epsilon=("per-draw epsilon", "mean"))
    return out.rename(columns={"info_min": "information about the data (min)",
                               "info_max": "information about the data (max)", "precision": "precision ratio (median)",
                               "censored": "share censored (mean)", "epsilon": "per-draw epsilon"})


def _info(table: pd.DataFrame) -> pd.DataFrame:
    """Information about the data, indexed by (seed, total), a column per scheme label ("PPM", "CM best", ...)."""
    label = table["scheme"].where(table["centre"] == "", table["scheme"] + " " + table["centre"])
    return table.assign(label=label).pivot_table(index=["seed", "total epsilon"], columns="label",
                                                 values="information about the data")


def centre_claims(table: pd.DataFrame, prior_location: float, *, check: bool = True,
                  into: Claims | None = None, pilot_band=(2.0, 5.0)) -> Claims:
    """The paper's ranking claimed once per centre, and the pilot against the public centre.

    Per centre of :data:`CENTRES`: "PPM keeps the most information" (PPM over the better censored
    scheme, the smallest ratio over seeds and totals, null 1), "WCM keeps more than CM" (the smallest
    difference, null 0) and "CM at the smallest total is pulled toward the prior" (the smallest
    pull, above 0.5, null 0). Then CM with the public centre ``best`` against PPM (the paper's
    ranking reversed: asserted from the band's lower end up, reported below it, where the seeds
    disagree), and the pilot's window against ``best``: CM's information about the data with
    the pilot over CM's with ``best``, the smallest ratio at the totals of ``pilot_band`` (null 1)
    and, reported, below and above it (below, the pilot's noise can exceed the window; above, both
    keep nearly all). A claim is asserted where it holds on every seed with ``check``; the
    not-private centre, and the pilot outside its band, are reported only.

    Parameters
    ----------
    table : pandas.DataFrame
        :func:`centre_ledger`'s table.
    prior_location : float
        The prior mean of the rate.
    check : bool
        Assert what holds.
    into : Claims, optional
        Add to these.
    pilot_band : (float, float)
        The totals (inclusive) where the pilot's claim is asserted; the reversed ranking is asserted
        from its lower end up.

    Returns
    -------
    Claims
    """
    out = into if into is not None else Claims()
    info = _info(table)
    n_seeds = table["seed"].nunique()
    low = table[table["total epsilon"] == table["total epsilon"].min()]

    def add(claim, paper, value, null, predicate, shown, assertable=True):
        holds = bool(predicate(value))
        out.add(claim, paper, shown + ("" if holds else " (not reproduced)"), predicate,
                checked=check and holds and assertable, value=value, null=null)

    for centre in CENTRES:
        private = centre != ORACLE
        tag = f"centre {centre}" + ("" if private else " (not private, reported)")
        ratio = info["PPM"] / info[[f"CM {centre}", f"WCM {centre}"]].max(axis=1)
        add(f"{tag}: PPM keeps the most information (PPM / better censored scheme)", "highest utility",
            float(ratio.min()), 1.0, lambda v: v > 1, f"{ratio.min():.3g} to {ratio.max():.3g} over {n_seeds} seeds",
            private)
        gap = info[f"WCM {centre}"] - info[f"CM {centre}"]
        add(f"{tag}: WCM keeps more information than CM (WCM - CM)", "WCM close to PPM", float(gap.min()), 0.0,
            lambda v: v > 0, f"{gap.min():.3f} to {gap.max():.3f} over {n_seeds} seeds", private)
        cm = low[(low["scheme"] == "CM") & (low["centre"] == centre)]
        pull = (cm["location mean"] - cm["unweighted mean"]) / (prior_location - cm["unweighted mean"])
        add(f"{tag}: CM at total epsilon {low['total epsilon'].min():g} is pulled toward the prior",
            "distorted toward the prior", float(pull.min()), 0.0, lambda v: v > 0.5,
            f"pull {pull.min():.3f} to {pull.max():.3f} over {n_seeds} seeds", private)
    low_end, high_end = pilot_band
    totals = info.index.get_level_values("total epsilon")
    below, band, above = totals < low_end, (totals >= low_end) & (totals <= high_end), totals > high_end

    def above_one(ratio, claim, paper, shown_as, parts):
        """One claim per part of the totals: ``ratio`` above 1 on every seed there (null 1)."""
        for where, when, assertable in parts:
            part = ratio[where]
            if not part.empty:
                add(f"{claim} at totals {when} ({shown_as})", paper, float(part.min()), 1.0, lambda v: v > 1,
                    f"{part.min():.3g} to {part.max():.3g} over {n_seeds} seeds", assertable)

    above_one(info["CM best"] / info["PPM"], "centre best: CM keeps more information than PPM",
              "(the paper: PPM highest)", "CM best / PPM",
              [(below, f"below {low_end:g}", False), (~below, f"from {low_end:g} up", True)])
    above_one(info["CM pilot"] / info["CM best"],
              "the pilot's window keeps more information about the data than the public centre", "(not in the paper)",
              "CM pilot / CM best", [(below, f"below {low_end:g}", False),
                                     (band, f"from {low_end:g} to {high_end:g}", True),
                                     (above, f"above {high_end:g}", False)])
    return out


def centre_figure(table: pd.DataFrame):
    """The information about the data against the total epsilon, a panel per centre: PPM, CM and WCM
    (median over seeds, the range as a band).

    Returns
    -------
    matplotlib.figure.Figure
    """
    import matplotlib.pyplot as plt
    info = _info(table)
    fig, axes = plt.subplots(1, len(CENTRES), figsize=(11, 3.4), sharey=True)
    for ax, centre in zip(axes, CENTRES):
        for label, colour, style in (("PPM", "k", "-o"), (f"CM {centre}", "tab:blue", "-o"),
                                     (f"WCM {centre}", "tab:orange", "--s")):
            by_total = info[label].groupby(level="total epsilon")
            x = np.array(sorted(by_total.groups))
            ax.fill_between(x, by_total.min().loc[x], by_total.max().loc[x], color=colour, alpha=0.2, lw=0)
            ax.plot(x, by_total.median().loc[x], style, ms=3, color=colour, label=label.split(" ")[0])
        ax.set_xscale("log")
        ax.set_title(f"centre: {centre}" + (" (not private)" if centre == ORACLE else ""), fontsize=9)
        ax.set_xlabel(r"total $\varepsilon$")
        ax.grid(alpha=0.3)
    axes[0].set_yscale("log")
    axes[0].set_ylabel("information about the data\n(share of the unweighted posterior's)")
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    return fig
