"""The strict privacy chapter's study (book/strict_privacy.md): the censored mechanisms beside the
pseudo posterior mechanism and the peers, at equal total (epsilon, delta) of the whole release.

At every total epsilon E of a grid (and one delta), the release of m synthetic datasets is priced
by the ledger (:mod:`ppmlib.mechanism.ledger`): the per-dataset epsilon is the largest whose m
draws are (E, delta)-DP, by zCDP composition or basic composition. At that per-dataset epsilon
:func:`mechanism_grid` runs CM, WCM and the strict weighted scheme (censored: every database) and
PPM (LW calibrated so that its local 2 Delta is that epsilon: this database only; skipped where
LW cannot reach it); :func:`peer_grid` runs the perturbed histogram at pure E and AIM and MST at
(E, delta). :func:`scores` scores every release as the alternatives chapter does
(:func:`ppmlib.studies.against_alternatives.score`) and adds the share of records censored.
:func:`seed_ledger` reruns the mechanisms on several seeds for the claims, which :func:`claims`
checks with values and nulls.
"""
from __future__ import annotations

__all__ = ["MECHANISMS", "LITERAL_CM", "PEERS", "exact_grid", "centring_table", "local_weights_at", "guarantee_table", "ledger_table", "mechanism_grid", "peer_grid", "fit_table", "scores", "pull_toward_prior", "pull_figure",
           "seed_ledger", "claims", "utility_figure", "target_cells", "coverage_table",
           "seed_summary", "one_run", "seed_targets", "k_summary"]

import time

import numpy as np
import pandas as pd

from ppmlib import _checks
from ppmlib.book.claims import Claims
from ppmlib.mechanism.ledger import ledger, solve_per_dataset_epsilon
from ppmlib.seeding import seeds as make_seeds

#: The mechanism's schemes compared, by the chapter's names, and the registry's scheme behind each.
MECHANISMS = {"PPM (local)": "lw", "CM": "cm", "WCM": "wcm", "strict weighted": "strict_weighted"}
#: CM with the paper's literal censoring (r_i = 0), run beside ours where a study asks for it.
LITERAL_CM = "CM (r_i = 0)"
#: The peers compared (:data:`ppmlib.baselines.peers.PEERS`).
PEERS = ("Histogram", "AIM", "MST")


def centring_table(y, epsilons, *, sampler, seed=0) -> pd.DataFrame:
    """CM on Poisson counts with the two centrings: the share censored and the posterior of lambda.

    Parameters
    ----------
    y : array_like, shape (n,)
        Counts.
    epsilons : list of float
        Per-draw epsilons.
    sampler : ppmlib.Sampler
        Usually ``ppmlib.inference.exact.ConjugateSampler`` (exact censored draws).
    seed : int
        The fits' seed.

    Returns
    -------
    pandas.DataFrame
        Indexed by (centring, epsilon): share censored, posterior mean and sd of lambda.
    """
    from ppmlib.mechanism.lineup import Member, run as run_lineup
    keys = [(centring, eps) for centring in ("best", "zero") for eps in epsilons]   # the fixed centres (no pilot)
    members = [Member("Unweighted", "unweighted")] + [
        Member(f"CM {c} {e:g}", "cm", settings={"epsilon": e, "centring": c}) for c, e in keys]
    done = run_lineup(members, "poisson", y, sampler=sampler, seed=[seed] * len(members), m=1, progress=False)
    rows = {}
    for (centring, eps), member in zip(keys, members[1:]):
        made = done[member.name]
        rows[(centring, eps)] = {"share censored": made.share_censored, "posterior mean": float(made.location_draws.mean()),
                                 "posterior sd": float(made.location_draws.std())}
    base = done["Unweighted"]
    rows[("uncensored", np.nan)] = {"share censored": 0.0, "posterior mean": float(base.location_draws.mean()),
                                    "posterior sd": float(base.location_draws.std())}
    return pd.DataFrame(rows).T.rename_axis(["centring", "epsilon"])


def local_weights_at(y, epsilon: float, *, draws: int = 4000, seed=0, iterations: int = 30) -> np.ndarray:
    """LW's weights on Poisson counts, scaled until 2 Delta over their own exact draws is ``epsilon``.

    The local mechanism at a nominal epsilon, without Stan: LW's weights from the exact unweighted
    draws, then alpha <- min(1, alpha epsilon / (2 Delta)) with Delta from exact draws of the
    alpha-weighted posterior, repeated (Delta falls nearly in proportion to the weights).

    Parameters
    ----------
    y : array_like, shape (n,)
        Counts.
    epsilon : float
        The nominal per-draw epsilon.
    draws : int
        Exact draws per step.
    seed : int
        Their seed.
    iterations : int
        Rescaling steps.

    Returns
    -------
    ndarray, shape (n,)
    """
    from ppmlib.inference import exact
    from ppmlib.mechanism.weights import lw_weights
    y = _checks.counts(y)
    first, second = make_seeds(_checks.seed(seed), 2)
    alpha = lw_weights(exact.poisson_log_lik(exact.sample(y, size=draws, seed=first), y).T)
    for _ in range(iterations):
        lam = exact.sample(y, alpha, size=draws, seed=second)
        delta = float((alpha * np.abs(exact.poisson_log_lik(lam, y).T)).max())
        alpha = np.clip(alpha * epsilon / (2 * delta), 0, 1)
    return alpha


def guarantee_table(databases: dict, *, epsilon: float, box: dict, added: int = 10**6, seed=0,
                    grid=None) -> pd.DataFrame:
    """:func:`ppmlib.mechanism.guarantee.strict_check` of CM, WCM, the strict weighted scheme and
    uncensored LW at the same nominal epsilon, on each Poisson database.

    Parameters
    ----------
    databases : dict
        Name -> counts.
    epsilon : float
        The per-draw epsilon.
    box : dict
        The strict weighted scheme's public box ``{"lambda": (low, high)}``.
    added : int
        The value of the record added (the other direction of the neighbours).
    seed : int
        The exact draws' seed (LW's weights).
    grid : array_like, optional
        The rates of the quadrature (default :data:`ppmlib.mechanism.guarantee.STRICT_GRID`).

    Returns
    -------
    pandas.DataFrame
        Indexed by (database, mechanism): the largest abs log ratio over the removal neighbours and
        for the added record, the share censored, whether the guarantee holds.
    """
    from ppmlib.inference import exact
    from ppmlib.mechanism.censoring import box_weights
    from ppmlib.mechanism.guarantee import strict_check
    from ppmlib.mechanism.weights import lw_weights
    from ppmlib.models.families import family
    fam = family("poisson")
    rows = {}
    for name, y in databases.items():
        y = _checks.counts(y)
        lw = lw_weights(exact.poisson_log_lik(exact.sample(y, size=4000, seed=seed), y).T)
        mechanisms = {"CM": (np.ones(y.size), 1.0, True), "WCM": (lw, 1.0, True),
                      "strict weighted": (box_weights(fam, y, None, box, epsilon),
                                          float(box_weights(fam, np.array([added]), None, box, epsilon)[0]), True),
                      "LW (uncensored)": (local_weights_at(y, epsilon, seed=seed), 1.0, False)}
        for mech, (alpha, added_weight, censored) in mechanisms.items():
            check = strict_check(mech, y, alpha, epsilon, censored=censored, added=added, added_weight=added_weight,
                                 grid=grid)
            rows[(name, mech)] = {"largest |log ratio|": check.worst, "removal": float(check.removal.max()),
                                  "addition": check.addition, "epsilon": epsilon, "within epsilon": check.holds(),
                                  "share censored": check.share_censored}
    return pd.DataFrame(rows).T.rename_axis(["database", "mechanism"])


def ledger_table(totals, *, delta: float, m: int) -> pd.DataFrame:
    """The ledger of a release of m datasets at every total epsilon: what each number is.

    Parameters
    ----------
    totals : list of float
        Total epsilons.
    delta : float
        The release's delta.
    m : int
        Datasets.

    Returns
    -------
    pandas.DataFrame
        Per total: the per-dataset epsilon, m epsilon, rho, the zCDP epsilon at delta, the release's
        (epsilon, delta) and which composition gives it.
    """
    rows = []
    for E, eps in _per_dataset(totals, delta, m).items():
        book = ledger(eps, m, delta=delta)
        rows.append({"total epsilon": E, "per-dataset epsilon": eps, "m epsilon (basic)": book.basic_total,
                     "rho = m eps^2/8": book.rho, f"zCDP epsilon at delta {delta:g}": book.zcdp_total,
                     "release epsilon": book.total[0], "release delta": book.total[1],
                     "from": "basic composition" if book.total[1] == 0 else "zCDP"})
    return pd.DataFrame(rows).set_index("total epsilon")


def exact_grid(y, totals, *, delta: float = 1e-6, m: int = 5, box: dict, draws: int = 4000, seed=0,
               names=tuple(MECHANISMS) + (LITERAL_CM,)) -> dict:
    """The mechanism's schemes on Poisson counts at every total epsilon, with exact draws (no Stan).

    As :func:`mechanism_grid`, but every fit samples its posterior exactly
    (:class:`ppmlib.inference.exact.ConjugateSampler`: Gamma draws, or the censored density by
    inverse CDF on a grid), and PPM is LW with its weights scaled until 2 Delta over its own exact
    draws is the per-dataset epsilon (:func:`local_weights_at`), run as a "custom" scheme.

    Parameters
    ----------
    y : array_like, shape (n,)
        Counts.
    totals : list of float
        Total epsilons E.
    delta : float
        The release's delta.
    m : int
        Datasets per release.
    box : dict
        The strict weighted scheme's public box ``{"lambda": (low, high)}``.
    draws : int
        Exact draws per fit.
    seed : int
        Root of every seed.
    names : sequence of str
        Which of :data:`MECHANISMS` (and :data:`LITERAL_CM`) to run.

    Returns
    -------
    dict
        (name, E) -> (Synthesis, seconds); ("Unweighted", None) too.
    """
    from ppmlib.inference import exact
    from ppmlib.mechanism.lineup import Member, run as run_lineup
    y = _checks.counts(y)
    per = _per_dataset(totals, delta, m)
    sampler = exact.ConjugateSampler(chains=2, draws=max(1, draws // 2))
    s = make_seeds(_checks.seed(seed), 2 + 5 * len(per))
    done = run_lineup([Member("Unweighted", "unweighted")], "poisson", y, sampler=sampler, seed=[s[0]], m=m,
                      progress=False)
    base = done["Unweighted"]
    out = {("Unweighted", None): (base, done.seconds["Unweighted"])}
    for j, (E, eps) in enumerate(per.items()):
        members, member_seeds = [], []
        for k, name in enumerate((*MECHANISMS, LITERAL_CM)):
            if name not in names:
                continue
            scheme = MECHANISMS.get(name, "cm")
            if name == LITERAL_CM:
                members.append(Member(name, "cm", settings={"epsilon": eps, "centring": "zero"}))
            elif scheme == "lw":     # LW scaled to 2 Delta = eps over its own exact draws: its weights as given
                members.append(Member(name, "custom", settings={"weights": local_weights_at(y, eps, seed=s[1])}))
            elif scheme == "wcm":
                members.append(Member(name, "wcm", base="Unweighted", settings={"epsilon": eps}))
            elif scheme == "strict_weighted":
                members.append(Member(name, "strict_weighted", settings={"epsilon": eps, "box": box}))
            else:
                members.append(Member(name, "cm", settings={"epsilon": eps}))
            member_seeds.append(s[2 + 5 * j + k])
        done = run_lineup(members, "poisson", y, sampler=sampler, seed=member_seeds, m=m, progress=False,
                          given={"Unweighted": base})
        out.update({(name, E): (done[name], done.seconds[name]) for name in done if name != "Unweighted"})
    return out


def _per_dataset(totals, delta, m) -> dict:
    return {float(E): solve_per_dataset_epsilon(E, delta, m) for E in totals}


def mechanism_grid(design, totals, *, delta: float = 1e-6, m: int = 10, box: dict | None = None,
                   reference_scale: float = 1.0, centring: str = "best", c_range=(0.05, 5.0), tau: float = 0.1,
                   sampler=None, seed=0, names=tuple(MECHANISMS), progress: bool = False,
                   prior: dict | None = None) -> dict:
    """The mechanism's schemes at every total epsilon of the grid: {(name, E): (Synthesis, seconds)}.

    The per-dataset epsilon at E is :func:`ppmlib.mechanism.ledger.solve_per_dataset_epsilon`
    (E, delta, m). The unweighted fit is made once (key ("Unweighted", None)); LW's risks and WCM's
    weights come from it. PPM is LW calibrated to that epsilon (within ``tau`` on Delta, c in
    ``c_range``), run only where LW reaches it.

    Parameters
    ----------
    design : ppmlib.studies.against_alternatives.Design
        The data, its model and design matrix.
    totals : list of float
        The total epsilons E of the whole release.
    delta : float
        The release's delta.
    m : int
        Synthetic datasets per release.
    box : dict, optional
        The strict weighted scheme's public parameter box (:func:`ppmlib.mechanism.censoring.box_weights`).
    reference_scale : float
        The public reference scale of the normal model's centring.
    centring : str
        "best" or "zero".
    c_range : (float, float)
        LW's scale range.
    tau : float
        LW's calibration tolerance.
    sampler : ppmlib.Sampler, optional
        NUTS settings.
    seed : int
        Root of every fit's seed.
    names : sequence of str
        Which of :data:`MECHANISMS` to run.
    progress : bool
        Progress bars.
    prior : dict, optional
        The model's prior settings (the binned model's public bins), shared by every fit.

    Returns
    -------
    dict
        (name, E) -> (Synthesis, seconds).
    """
    from ppmlib.mechanism.lineup import Member, run as run_lineup
    per = _per_dataset(totals, delta, m)
    s = make_seeds(_checks.seed(seed), 2 + 4 * len(per))
    shared = dict(X=design.X, m=m, sampler=sampler, prior=prior)
    done = run_lineup([Member("Unweighted", "unweighted")], design.model, design.y, seed=[s[0]], progress=progress,
                      **shared)
    base = done["Unweighted"]
    out = {("Unweighted", None): (base, done.seconds["Unweighted"])}
    lw_ends = None
    censored = dict(centring=centring, reference_scale=reference_scale)
    for j, (E, eps) in enumerate(per.items()):
        members, member_seeds = [], []
        for k, name in enumerate(n for n in MECHANISMS if n != "PPM (local)"):
            if name not in names:
                continue
            scheme = MECHANISMS[name]
            extra = {"box": box} if scheme == "strict_weighted" else {}
            members.append(Member(name, scheme, base="Unweighted" if scheme == "wcm" else None,
                                  settings={"epsilon": eps, **censored, **extra}))
            member_seeds.append(s[2 + 4 * j + k])
        if members:
            done = run_lineup(members, design.model, design.y, seed=member_seeds, given={"Unweighted": base},
                              progress=progress, **shared)
            out.update({(name, E): (done[name], done.seconds[name]) for name in done if name != "Unweighted"})
        if "PPM (local)" not in names:
            continue
        if lw_ends is None:
            ends = run_lineup([Member("LW low", "lw", base="Unweighted", settings={"c": c_range[0]}),
                               Member("LW high", "lw", base="Unweighted", settings={"c": c_range[1]})],
                              design.model, design.y, seed=[s[1], s[1]], given={"Unweighted": base}, **shared)
            lw_ends = (ends["LW low"].epsilon, ends["LW high"].epsilon)
        if lw_ends[0] <= eps <= lw_ends[1]:
            done = run_lineup([Member("PPM (local)", "lw", base="Unweighted", epsilon=eps,
                                      settings={"tau": tau, "c_range": tuple(c_range)})],
                              design.model, design.y, seed=[s[1]], given={"Unweighted": base}, **shared)
            out[("PPM (local)", E)] = (done["PPM (local)"], done.seconds["PPM (local)"])
    return out


def peer_grid(design, totals, *, delta: float = 1e-6, m: int = 10, names=PEERS, settings: dict | None = None,
              seed=0, progress: bool = False, only: dict | None = None) -> dict:
    """The peers at every total epsilon: the histogram at pure E, AIM and MST at (E, delta).

    Parameters
    ----------
    design : Design
        The data and its table.
    totals : list of float
        The total epsilons.
    delta : float
        AIM's and MST's delta.
    m : int
        Releases.
    names : sequence of str
        Peers.
    settings : dict, optional
        Peer name -> keyword arguments (delta is set here).
    seed : int
        Root seed.
    progress : bool
        Progress bar.
    only : dict, optional
        Peer name -> the totals it runs at (a subset of ``totals``: a slow peer at fewer totals);
        a peer not named runs at every total.

    Returns
    -------
    dict
        (name, E) -> (list of m releases, seconds).
    """
    from ppmlib.baselines import peers
    settings = {k: dict(v) for k, v in (settings or {}).items()}
    for name in ("AIM", "MST"):
        settings.setdefault(name, {})["delta"] = delta
    only = only or {}
    out = {}
    for name in names:
        # each peer at its own totals, seeded from the root seed (deterministic, per peer)
        wanted = [float(E) for E in totals if float(E) in {float(t) for t in only.get(name, totals)}]
        if not wanted:
            continue
        out.update(peers.run([name], design.data, design.table, wanted, m=m, seed=seed,
                             settings={k: v for k, v in settings.items() if k == name}, progress=progress))
    return out


def fit_table(mechanisms: dict, *, delta: float = 1e-6, m: int = 10) -> pd.DataFrame:
    """Every Stan fit of :func:`mechanism_grid` with its diagnostics and whether it passes the gate.

    A fit that fails the gate (:data:`ppmlib.inference.diagnostics.GATE`) stays in the table with
    its values: its row of :func:`scores` rests on draws that may not represent the posterior.

    Parameters
    ----------
    mechanisms : dict
        :func:`mechanism_grid`'s result, (name, E) -> (Synthesis, seconds).
    delta : float
        The release's delta (for the per-dataset epsilon).
    m : int
        Synthetic datasets per release.

    Returns
    -------
    pandas.DataFrame
        One row per fit: synthesizer, total epsilon, per-dataset epsilon, share censored, max R-hat,
        min bulk and tail ESS, divergences, mean tree depth, mean leapfrog steps per draw, seconds,
        and "gate" (True when the fit passes).
    """
    from ppmlib.inference.diagnostics import is_ok
    rows = []
    for (name, E), (result, seconds) in mechanisms.items():
        d, stats = result.diagnostics, result.fit.sampler
        rows.append({"synthesizer": name, "total epsilon": E,
                     "per-dataset epsilon": np.nan if E is None else solve_per_dataset_epsilon(E, delta, m),
                     "share censored": result.share_censored if result.share_censored is not None else 0.0,
                     "max R-hat": d["max_rhat"], "min bulk ESS": d["min_ess_bulk"], "min tail ESS": d["min_ess_tail"],
                     "divergences": d["divergences"],
                     "mean tree depth": float(np.mean(stats["treedepth__"])) if "treedepth__" in stats else np.nan,
                     "leapfrog per draw": float(np.mean(stats["n_leapfrog__"])) if "n_leapfrog__" in stats else np.nan,
                     "seconds": seconds, "gate": bool(is_ok(d))})
    return pd.DataFrame(rows)


def scores(design, mechanisms: dict, peer_results: dict, *, delta: float, m: int, B: int = 100, seed=0) -> pd.DataFrame:
    """One row per (synthesizer, total E): the ledger, the share censored, utility and risk.

    Parameters
    ----------
    design : Design
        The data.
    mechanisms : dict
        :func:`mechanism_grid`'s result.
    peer_results : dict
        :func:`peer_grid`'s result.
    delta : float
        The release's delta.
    m : int
        Releases per synthesizer.
    B : int
        Bootstrap resamples for the quantile's variance.
    seed : int
        Seeds the scores' resampling.

    Returns
    -------
    pandas.DataFrame
        synthesizer, total epsilon, per-dataset epsilon, covers, release (epsilon, delta), share
        censored, the posterior mean of the location parameter (the mechanisms), S_pMSE, overlaps,
        EMR, TMR, seconds.
    """
    from ppmlib.baselines.peers import frames_of
    from ppmlib.studies.against_alternatives import score
    rows = []
    for (name, E), (result, seconds) in mechanisms.items():
        frames = frames_of(result.synthetic, design.data, design.table.column)
        book = ledger(result.epsilon, m, delta=delta, guarantee=result.guarantee,
                      draws=result.k_draws) if E is not None else None
        rows.append({"synthesizer": name, "total epsilon": E, "per-dataset epsilon": result.epsilon if E else np.nan,
                     "covers": book.scope if book else "no guarantee",
                     "release epsilon": book.total[0] if book else np.nan,
                     "release delta": book.total[1] if book else np.nan,
                     "share censored": result.share_censored if result.share_censored is not None else 0.0,
                     "location mean": float(result.location_draws.mean()),
                     "location sd": float(result.location_draws.std()),
                     **score(design, frames, B=B, seed=seed), "seconds": seconds})
    covers = {"Histogram": "every database (pure epsilon-DP)", "AIM": "every database ((epsilon, delta) via zCDP)",
              "MST": "every database ((epsilon, delta) via zCDP)", "CART": "no formal privacy"}
    for (name, E), (releases, seconds) in peer_results.items():
        rows.append({"synthesizer": name, "total epsilon": E, "per-dataset epsilon": np.nan, "covers": covers[name],
                     "release epsilon": E if name != "CART" else np.nan,
                     "release delta": 0.0 if name == "Histogram" else delta if name != "CART" else np.nan,
                     "share censored": np.nan, "location mean": np.nan, "location sd": np.nan, **score(design, releases, B=B, seed=seed),
                     "seconds": seconds})
    return pd.DataFrame(rows)


def pull_toward_prior(mechanisms: dict, prior_location: float, name: str = "CM") -> pd.DataFrame:
    """How far the censored posterior's location moved from the unweighted posterior's toward the prior's.

    pull = (mean_name - mean_unweighted) / (prior_location - mean_unweighted): 0 where censoring
    changed nothing, 1 where the posterior mean sits at the prior's.

    Parameters
    ----------
    mechanisms : dict
        :func:`mechanism_grid`'s result.
    prior_location : float
        The prior mean of the location parameter (the family's ``location``).
    name : str
        The scheme.

    Returns
    -------
    pandas.DataFrame
        Per total E: the posterior mean and sd of the location, and the pull.
    """
    base = mechanisms[("Unweighted", None)][0].location_draws.mean()
    rows = []
    for (n, E), (result, _) in sorted(((k, v) for k, v in mechanisms.items() if k[0] == name), key=lambda kv: kv[0][1]):
        draws = result.location_draws
        rows.append({"total epsilon": E, "per-dataset epsilon": result.epsilon, "location mean": float(draws.mean()),
                     "location sd": float(draws.std()), "share censored": result.share_censored,
                     "pull toward prior": float((draws.mean() - base) / (prior_location - base))})
    return pd.DataFrame(rows)


def pull_figure(mechanisms: dict, prior_location: float, names=("CM", "WCM", "strict weighted"), xlabel="location",
                log_y: bool = False):
    """The location's posterior (mean and central 90%) of each censored scheme against the total epsilon,
    with the unweighted posterior's mean and the prior mean as lines.

    Parameters
    ----------
    mechanisms : dict
        :func:`mechanism_grid`'s result.
    prior_location : float
        The prior mean of the location.
    names : sequence of str
        The schemes drawn.
    xlabel : str
        What the location is.
    log_y : bool
        A log scale for the location (when a scheme sits at the prior, far from the data).

    Returns
    -------
    matplotlib.figure.Figure
    """
    import matplotlib.pyplot as plt
    from ppmlib.plots import _colour
    fig, ax = plt.subplots(figsize=(6.4, 3.8))
    base = mechanisms[("Unweighted", None)][0].location_draws
    for i, name in enumerate(names):
        keys = sorted(E for (n, E) in mechanisms if n == name)
        if not keys:
            continue
        draws = [mechanisms[(name, E)][0].location_draws for E in keys]
        shift = 1 + 0.06 * (i - 1)   # side by side on the log axis
        lo, mid, hi = (np.array([np.quantile(d, q) for d in draws]) for q in (0.05, 0.5, 0.95))
        ax.errorbar(np.array(keys) * shift, mid, yerr=[mid - lo, hi - mid], fmt="-o", ms=4, capsize=3,
                    color=_colour(name, i), label=name)
    ax.axhline(base.mean(), color="k", ls="--", lw=1, label="unweighted posterior mean")
    ax.axhline(prior_location, color="grey", ls=":", lw=1.5, label="prior mean")
    ax.set_xscale("log")
    if log_y:
        ax.set_yscale("log")
    ax.set_xlabel(r"total $\varepsilon$ of the release")
    ax.set_ylabel(f"{xlabel}: posterior median and 90% interval")
    ax.set_title("Censoring pulls the posterior toward the prior as ε falls")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    return fig


def utility_figure(table: pd.DataFrame, measures: dict, title: str = ""):
    """One panel per measure against the total epsilon, a line per synthesizer.

    Parameters
    ----------
    table : pandas.DataFrame
        :func:`scores`.
    measures : dict
        column -> (label, log scale?).
    title : str
        Figure title.

    Returns
    -------
    matplotlib.figure.Figure
    """
    from ppmlib.studies.against_alternatives import measures_by_epsilon
    fig = measures_by_epsilon(table.rename(columns={"total epsilon": "epsilon"}), measures, title)
    for ax in fig.axes:
        ax.set_xlabel(r"total $\varepsilon$ of the release ($\delta$ as stated)")
    return fig


def seed_ledger(design, totals, seeds, *, m: int, delta: float, B: int = 50, data=None, **options) -> pd.DataFrame:
    """The mechanisms at every total epsilon on several seeds: one row per (seed, total, synthesizer).

    With ``data`` (a callable seed -> Poisson counts) each seed draws its own database and runs
    :func:`exact_grid` on it (``design`` is then unused); otherwise :func:`mechanism_grid` on ``design``.

    Parameters
    ----------
    design : Design or None
        The data.
    totals : list of float
        Total epsilons.
    seeds : list of int
        One full run per seed.
    m, delta : int, float
        Releases and delta.
    B : int
        Bootstrap resamples.
    data : callable, optional
        seed -> counts, for exact runs.
    **options
        For :func:`mechanism_grid` (or :func:`exact_grid`).

    Returns
    -------
    pandas.DataFrame
        seed, synthesizer, total epsilon, S_pMSE logit, overlaps, share censored, pull toward the prior.
    """
    from ppmlib.studies.against_alternatives import count_design
    frames = []
    for seed in seeds:
        if data is not None:
            y = data(seed)
            design = count_design(y, model="poisson")
            fits = exact_grid(y, totals, delta=delta, m=m, seed=seed, **options)
        else:
            fits = mechanism_grid(design, totals, delta=delta, m=m, seed=seed, **options)
        table = scores(design, fits, {}, delta=delta, m=m, B=B, seed=seed)
        unweighted = fits[("Unweighted", None)][0].location_draws
        table["unweighted location"] = float(unweighted.mean())
        # the information a scheme keeps: its posterior's precision of the location, as a share of the unweighted one
        table["information kept"] = (unweighted.std() / table["location sd"]) ** 2
        table.insert(0, "seed", seed)
        frames.append(table)
    return pd.concat(frames, ignore_index=True)


def claims(ledger_table: pd.DataFrame, prior_location: float, *, check: bool = True, into: Claims | None = None,
           prefix: str = "") -> Claims:
    """The paper's qualitative claims, checked on every seed of :func:`seed_ledger`'s table.

    Utility is measured on the posterior, where it is not blurred by the noise of m synthetic
    datasets: the *information kept*, (sd of the unweighted posterior's location / sd of the
    scheme's)^2, the share of the data's information the scheme still uses.

    * PPM keeps the highest utility: at every seed and total, PPM's information kept over the best
      censored scheme's; value the smallest such ratio, null 1.
    * WCM comes close to PPM, closer than CM: WCM's information kept minus CM's, the smallest over
      seeds and totals; null 0.
    * CM is distorted toward the prior: the literal censoring (r_i = 0) at the smallest total, the
      pull (location mean - unweighted) / (prior mean - unweighted), the smallest over seeds;
      predicate above 0.5, null 0 (no pull). Our centring's pull is shown beside it.

    A claim whose predicate fails is shown as not reproduced (the table says so); a claim is
    asserted only where it held on every seed tried and has power.

    Parameters
    ----------
    ledger_table : pandas.DataFrame
        :func:`seed_ledger`'s table.
    prior_location : float
        The prior mean of the location.
    check : bool
        Assert the claims that hold.
    into : Claims, optional
        Add to these.
    prefix : str
        Put before every claim.

    Returns
    -------
    Claims
    """
    out = into if into is not None else Claims()
    t = ledger_table.dropna(subset=["total epsilon"])
    info = t.pivot_table(index=["seed", "total epsilon"], columns="synthesizer", values="information kept")
    n_seeds = t["seed"].nunique()
    censored = [c for c in ("CM", "WCM", "strict weighted") if c in info.columns]

    def add(claim, paper, ours, value, null, predicate):
        holds = predicate(value)
        out.add(prefix + claim, paper, ours + ("" if holds else " (not reproduced)"), predicate,
                checked=check and holds, value=value, null=null)

    if "PPM (local)" in info.columns and censored:
        ratio = (info["PPM (local)"] / info[censored].max(axis=1)).dropna()
        add("PPM keeps the most information (PPM / best censored scheme)", "highest utility",
            f"{ratio.min():.2f} to {ratio.max():.2f} over {n_seeds} seeds", float(ratio.min()), 1.0, lambda v: v > 1)
    if {"WCM", "CM"} <= set(info.columns):
        gap = (info["WCM"] - info["CM"]).dropna()
        add("WCM keeps more information than CM (WCM - CM)", "WCM close to PPM",
            f"{gap.min():.3f} to {gap.max():.3f} over {n_seeds} seeds", float(gap.min()), 0.0, lambda v: v > 0)
    for name in (LITERAL_CM, "CM"):
        rows = t[t["synthesizer"] == name]
        if rows.empty:
            continue
        low = rows[rows["total epsilon"] == rows["total epsilon"].min()]
        pull = (low["location mean"] - low["unweighted location"]) / (prior_location - low["unweighted location"])
        add(f"{name} at total epsilon {rows['total epsilon'].min():g} is pulled toward the prior",
            "distorted toward the prior", f"pull {pull.min():.3f} to {pull.max():.3f} over {n_seeds} seeds",
            float(pull.min()), 0.0, lambda v: v > 0.5)
    return out


def target_cells(table: pd.DataFrame, candidate: str) -> pd.DataFrame:
    """The strict release's targets for one synthesizer, cell by cell, from the peers benchmark's rows.

    Per (file, total E) where the candidate and AIM both have a seed-1 row (:func:`one_run`): the candidate's, AIM's and
    the histogram's S_pMSE (logit), whether the candidate's is no worse than AIM's, no worse than
    1.5 x the histogram's (asked at E >= 2 only), whether its time is at most half AIM's, and
    (at E = 5) whether its synthetic SD of log y is within 10% of the data's.

    Parameters
    ----------
    table : pandas.DataFrame
        ``benchmarks/results/against_peers.json``'s rows (:func:`ppmlib.book.results.table`).
    candidate : str
        The synthesizer's label in the rows.

    Returns
    -------
    pandas.DataFrame
        One row per cell; the boolean columns are None where a target is not asked.
    """
    rows = []
    table = _numeric(one_run(table), ["total epsilon", "S_pMSE logit", "seconds", "SD log y ratio"])
    for (file, E), cell in table.dropna(subset=["total epsilon"]).groupby(["file", "total epsilon"]):
        by = cell.set_index("synthesizer")
        if candidate not in by.index or "AIM" not in by.index:
            continue
        mine, aim = by.loc[candidate], by.loc["AIM"]
        hist = by["S_pMSE logit"].get("Histogram", np.nan)
        rows.append({"file": file, "total epsilon": E, "S_pMSE": mine["S_pMSE logit"], "AIM": aim["S_pMSE logit"],
                     "histogram": hist, "<= AIM": bool(mine["S_pMSE logit"] <= aim["S_pMSE logit"]),
                     "<= 1.5 histogram": bool(mine["S_pMSE logit"] <= 1.5 * hist) if E >= 2 else None,
                     "<= half AIM's time": bool(mine["seconds"] <= aim["seconds"] / 2),
                     "SD within 10%": bool(abs(mine["SD log y ratio"] - 1) <= 0.1) if E == 5 else None})
    return pd.DataFrame(rows)


def one_run(table: pd.DataFrame) -> pd.DataFrame:
    """The peers benchmark's one-run-per-cell rows: seed 1 (rows recorded before the seed was kept count as seed 1).

    Parameters
    ----------
    table : pandas.DataFrame
        ``benchmarks/results/against_peers.json``'s rows.

    Returns
    -------
    pandas.DataFrame
    """
    if "seed" not in table:
        return table
    return table[pd.to_numeric(table["seed"], errors="coerce").fillna(1) == 1]


def seed_targets(table: pd.DataFrame, candidate: str) -> pd.DataFrame:
    """The strict release's targets on every seed the candidate and AIM were both run on.

    Per (file, total E), over those seeds: the mean S_pMSE (logit) of the candidate, AIM and the
    histogram, the candidate's ratio to each mean, its worst single-seed ratio to AIM, its mean
    synthetic SD of log y over the data's, and the number of seeds.

    Parameters
    ----------
    table : pandas.DataFrame
        ``benchmarks/results/against_peers.json``'s rows (with a seed column).
    candidate : str
        The synthesizer's label in the rows.

    Returns
    -------
    pandas.DataFrame
        Indexed by (file, total epsilon): "candidate", "AIM", "Histogram", "to AIM", "to histogram",
        "worst seed to AIM", "SD log y ratio", "seeds".
    """
    t = _numeric(table, ["total epsilon", "S_pMSE logit", "SD log y ratio"])
    t = t.assign(seed=pd.to_numeric(t.get("seed", 1), errors="coerce").fillna(1))
    t = t[t["synthesizer"].isin([candidate, "AIM", "Histogram"])].dropna(subset=["total epsilon"])
    wide = t.pivot_table(index=["file", "total epsilon", "seed"], columns="synthesizer",
                         values=["S_pMSE logit", "SD log y ratio"])
    pmse = wide["S_pMSE logit"].dropna(subset=[candidate, "AIM"])
    by = ["file", "total epsilon"]
    out = pmse.groupby(level=by).mean().rename(columns={candidate: "candidate"})
    out["to AIM"] = out["candidate"] / out["AIM"]
    out["to histogram"] = out["candidate"] / out["Histogram"]
    out["worst seed to AIM"] = (pmse[candidate] / pmse["AIM"]).groupby(level=by).max()
    out["SD log y ratio"] = wide["SD log y ratio"][candidate].loc[pmse.index].groupby(level=by).mean()
    out["seeds"] = pmse.groupby(level=by).size()
    return out[["candidate", "AIM", "Histogram", "to AIM", "to histogram", "worst seed to AIM", "SD log y ratio",
                "seeds"]]


def k_summary(table: pd.DataFrame) -> pd.DataFrame:
    """k's effect (``benchmarks/results/nss_bins_k.json``): per total E and how the datasets were drawn,
    the means over seeds and files of S_pMSE, the analyst's coverage, the intervals' width over the
    confidential data's and the synthetic SD of log y over the data's.

    Parameters
    ----------
    table : pandas.DataFrame
        The k benchmark's rows.

    Returns
    -------
    pandas.DataFrame
        Indexed by (total epsilon, datasets from).
    """
    measures = ["S_pMSE logit", "coverage 95%", "width ratio", "SD log y ratio"]
    return _numeric(table, ["total epsilon", *measures]).groupby(["total epsilon", "datasets from"])[measures].mean()


def coverage_table(table: pd.DataFrame) -> pd.DataFrame:
    """The coverage of the analyst's 95% intervals, synthesizer x (file, total E), where it was measured.

    Parameters
    ----------
    table : pandas.DataFrame
        ``benchmarks/results/against_peers.json``'s rows.

    Returns
    -------
    pandas.DataFrame
        Rows: synthesizers; columns: (file, total epsilon), a total of infinity for the releases
        without privacy (CART, the unweighted fit); values: the share of the regression's
        coefficients whose combined interval covers the confidential estimate.
    """
    measured = _numeric(one_run(table), ["coverage 95%", "total epsilon"]).dropna(subset=["coverage 95%"])
    measured = measured.fillna({"total epsilon": np.inf})
    return measured.pivot_table(index="synthesizer", columns=["file", "total epsilon"], values="coverage 95%")


def _numeric(table: pd.DataFrame, columns) -> pd.DataFrame:
    """The table with ``columns`` as numbers (a value the results file left empty is NaN)."""
    return table.assign(**{c: pd.to_numeric(table[c], errors="coerce") for c in columns if c in table})


def seed_summary(table: pd.DataFrame) -> pd.DataFrame:
    """The seed ledger of NSS over bins beside the histogram (``benchmarks/results/nss_bins_seeds.json``),
    per (file, total): each synthesizer's mean S_pMSE over the seeds, their ratio, the seeds on which
    NSS over bins was no worse, and its mean coverage.

    Parameters
    ----------
    table : pandas.DataFrame
        The seed ledger's rows.

    Returns
    -------
    pandas.DataFrame
        Indexed by (file, total epsilon): "NSS bins", "histogram" (mean S_pMSE), "ratio", "seeds no
        worse", "seeds", "NSS bins coverage", "histogram coverage".
    """
    table = _numeric(table, ["total epsilon", "S_pMSE logit", "coverage 95%"])
    nss = table["synthesizer"].str.startswith("ppm NSS bins")
    wide = table.assign(who=np.where(nss, "NSS bins", "histogram")).pivot_table(
        index=["file", "total epsilon", "seed"], columns="who", values=["S_pMSE logit", "coverage 95%"])
    pmse, cover = wide["S_pMSE logit"], wide["coverage 95%"]
    by = ["file", "total epsilon"]
    out = pmse.groupby(level=by).mean()
    out["ratio"] = out["NSS bins"] / out["histogram"]
    out["seeds no worse"] = (pmse["NSS bins"] <= pmse["histogram"]).groupby(level=by).sum()
    out["seeds"] = pmse.groupby(level=by).size()
    out["NSS bins coverage"] = cover["NSS bins"].groupby(level=by).mean()
    out["histogram coverage"] = cover["histogram"].groupby(level=by).mean()
    return out
