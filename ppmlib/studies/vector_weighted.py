"""The vector-weighted chapter's study (book/vector_weighted.md): the 2020 paper's four synthesizers at
one Delta, as a lineup of :mod:`ppmlib.mechanism.lineup`'s standard members, and the numbers the paper compares.
"""
from __future__ import annotations

__all__ = ["matched_comparison", "matched_measures", "claims"]

from ppmlib.mechanism import lineup
from ppmlib.book.claims import Claims
from ppmlib.models.families import family
from ppmlib.inference.posterior import Sampler
from ppmlib.errors import BadArgument


def matched_comparison(model: str, y, *, cw_radius: float, relative: bool = False, c: float = 1.0,
                       g: float = 0.0, cw_c: float = 1.0, rtol: float = 0.03, max_iter: int = 12, m: int = 20,
                       sampler: Sampler | None = None, seed: int = 0, progress: bool = True) -> dict:
    """Unweighted, LW, and CW and SW matched to LW's Delta (2020 paper; the book's vector-weighted chapter):
    a lineup of :mod:`ppmlib.mechanism.lineup`'s standard members, run by :func:`ppmlib.mechanism.lineup.run`.

    LW uses (c, g): alpha_i = clip(c (1 - r_i) + g, 0, 1) with r_i the min-max scaled unweighted
    bound of record i. CW keeps its policy radius ``cw_radius`` (absolute, or relative to abs(y_i))
    and scale ``cw_c`` and is calibrated through its shift g (Delta rises with g), in [-1, 1].
    SW starts at a = Delta_LW / Delta_unweighted and is refined by root finding, in [0, 1].

    Parameters
    ----------
    model, y : as for :func:`ppmlib.synthesizer` (shape (n,))
    cw_radius, relative, cw_c : the CW policy
    c, g : the LW scale and shift
    rtol, max_iter : the matching stops within ``rtol`` of LW's Delta, after at most ``max_iter`` refits
    m, sampler : synthetic datasets and NUTS settings of every fit
    seed : one integer; ``ppmlib.seeds(seed, 4)`` seeds the four synthesizers

    Returns
    -------
    ppmlib.mechanism.lineup.Results
        {"Unweighted": ..., "LW": ..., "CW": ..., "SW": ...} of :class:`Synthesis`; the calibrated
        CW and SW carry ``.calibration`` (parameter, value, target, history).

    Raises
    ------
    ppmlib.errors.CalibrationFailed
        If CW or SW does not reach LW's Delta within ``max_iter`` refits.

    See Also
    --------
    ppmlib.synthesizer : one scheme end to end.
    ppmlib.match_delta : the root finder used for CW and SW.

    Examples
    --------
    >>> y = ppmlib.datasets.simulate.poisson(200, 100, seed=1)
    >>> exact = ppmlib.inference.exact.ConjugateSampler()      # exact Gamma draws in place of Stan's
    >>> four = ppmlib.studies.vector_weighted.matched_comparison("poisson", y, cw_radius=10.0, sampler=exact, seed=2020, progress=False)
    >>> ppmlib.summary_table(four.values())[["Delta", "epsilon"]].round(2)
                 Delta  epsilon
    synthesizer
    Unweighted   15.14    30.28
    LW            4.89     9.77
    CW            4.89     9.78
    SW            4.90     9.81
    """
    members = ["Unweighted", lineup.member("LW", c=c, g=g),
               lineup.member("CW", radius=cw_radius, relative=relative, c=cw_c, match="LW", rtol=rtol, max_iter=max_iter),
               lineup.member("SW", rtol=rtol, max_iter=max_iter)]
    return lineup.run(members, model, family(model).check_y(y), m=m, sampler=sampler, seed=seed, progress=progress)


def matched_measures(results: dict) -> dict:
    """The numbers the papers compare for one matched comparison (``ppmlib.studies.vector_weighted.matched_comparison``).

    ``results`` maps "Unweighted", "LW", "CW" and "SW" to a Synthesis. Returns a dict:
    ``weighted / unweighted Delta``, the largest Delta of the weighted synthesizers over the
    unweighted Delta; ``Delta gap to LW``, the largest relative gap abs(Delta / Delta_LW - 1) of
    the weighted ones; the mean weights and the shares of by-record bounds at or above 0.9 Delta
    (``ppmlib.near_max_share``) of LW and CW; ``sd ratio SW / LW``, the ratio of the posterior sds
    of the mean.
    """
    from ppmlib.mechanism.bounds import near_max_share
    missing = {"Unweighted", "LW", "CW", "SW"} - set(results)
    if missing:
        raise BadArgument(f"results lacks synthesizer(s) {sorted(missing)}; has {sorted(results)}")
    weighted = [r for name, r in results.items() if name != "Unweighted"]
    lw, cw = results["LW"], results["CW"]
    return {"weighted / unweighted Delta": max(r.delta for r in weighted) / results["Unweighted"].delta,
            "Delta gap to LW": max(abs(r.delta / lw.delta - 1) for r in weighted),
            "mean weight LW": float(lw.weights.mean()), "mean weight CW": float(cw.weights.mean()),
            "near-max share LW": near_max_share(lw.bounds), "near-max share CW": near_max_share(cw.bounds),
            "sd ratio SW / LW": float(results["SW"].location_draws.std() / lw.location_draws.std())}


def claims(pois: dict, nb: dict, long_nb, *, delta_rtol: float, into: Claims | None = None) -> Claims:
    """The 2020 paper's statements checked on the chapter's two matched comparisons.

    Each asserted claim is given with its effect (:meth:`ppmlib.book.claims.Claims.add`): the quantity it
    tests and that quantity without the effect (no down-weighting, no difference between LW
    and CW, SW as wide as LW). Claims that hold by construction, or whose band is as wide as
    their spread over seeds, are reported, not asserted.

    Parameters
    ----------
    pois, nb : dict
        :func:`matched_comparison` results on the Poisson and the NB-mixture data.
    long_nb : pandas.DataFrame
        The mixture's :func:`ppmlib.evaluate.utility.long_table`.
    delta_rtol : float
        The matching's relative tolerance on Delta.
    into : ppmlib.book.claims.Claims, optional
        Add the rows to these claims.

    Returns
    -------
    ppmlib.book.claims.Claims
    """
    from ppmlib.evaluate.utility import centre, tail_distortion

    out = into if into is not None else Claims()
    for label, results in (("Poisson", pois), ("NB mixture", nb)):
        r = matched_measures(results)
        ratio = r["weighted / unweighted Delta"]
        out.add(f"{label}: every weighted Delta is far below the unweighted Delta",
                "all three well below Unweighted (2020 paper, sections 3.1-3.2, Figs. 1a, 3b)",
                f"max weighted / unweighted = {ratio:.2f}", lambda v: v < 0.6, value=ratio, null=1.0)
        # the matching stops only within rtol (else it raises), so this row cannot fail: reported
        out.add(f"{label}: LW, CW and SW share one Delta", "equal Delta by design (2020 paper, section 3)",
                f"largest gap {100 * r['Delta gap to LW']:.1f}% (tolerance {100 * delta_rtol:.0f}%; by construction)",
                r["Delta gap to LW"] <= delta_rtol, checked=False)
        weights = r["mean weight LW"] - r["mean weight CW"]
        out.add(f"{label}: at equal Delta LW keeps higher weights than CW",
                "LW weights skewed towards 1, CW over-downweights (2020 paper, sections 3.1-3.2, Figs. 1b, 3a)",
                f"mean weight LW {r['mean weight LW']:.3f} vs CW {r['mean weight CW']:.3f}",
                lambda d: d > 0, value=weights, null=0.0)
        near = r["near-max share LW"] - r["near-max share CW"]
        out.add(f"{label}: at equal Delta LW has more by-record bounds near the maximum than CW",
                "LW bounds concentrate near Delta (2020 paper, sections 3.1-3.2, Figs. 1a, 3b)",
                f"share >= 0.9 Delta: LW {r['near-max share LW']:.3f} vs CW {r['near-max share CW']:.3f}",
                lambda d: d > 0, value=near, null=0.0)
        out.add(f"{label}: SW's posterior of the mean is wider than LW's",
                "much wider credible interval (2020 paper, sections 3.1-3.2, Figs. 2b, 3e)",
                f"sd ratio SW / LW = {r['sd ratio SW / LW']:.2f}", lambda v: v > 1.2, value=r["sd ratio SW / LW"],
                null=1.0)
    a_pois = pois["SW"].calibration["value"]
    # reported: the band 0.30-0.45 is as wide as a's spread over seeds (the chapter's seed ledger), so it tests nothing
    out.add("Poisson: the matched SW scalar weight", "about 0.375 (2020 paper, section 3.1, Fig. 1b)",
            f"a = {a_pois:.3f}", 0.30 <= a_pois <= 0.45, checked=False)
    lw_tail, cw_tail = tail_distortion(long_nb, "LW"), tail_distortion(long_nb, "CW")
    out.add("NB mixture: CW distorts the tails more than LW",
            "CW's 15th/90th percentiles further from the data (2020 paper, section 3.2, Fig. 3c)",
            f"|15th gap| + |90th gap|: LW {lw_tail:.1f} vs CW {cw_tail:.1f}", lambda d: d > 0,
            value=cw_tail - lw_tail, null=0.0)
    mid = centre(long_nb)
    shorter = (mid.loc["15th pct", "LW"] >= mid.loc["15th pct", "Data"]
               and mid.loc["90th pct", "LW"] <= mid.loc["90th pct", "Data"])
    out.add("NB mixture: LW shortens both tails (15th pct up, 90th pct down)", "yes (2020 paper, section 3.2, Fig. 3c)",
            f"15th: {mid.loc['15th pct', 'LW']:.1f} vs data {mid.loc['15th pct', 'Data']:.1f}; "
            f"90th: {mid.loc['90th pct', 'LW']:.1f} vs data {mid.loc['90th pct', 'Data']:.1f}",
            shorter, checked=False)
    return out
