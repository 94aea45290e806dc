"""The vector-weighted chapter's study (book/vector_weighted.md): the 2020 paper's four synthesizers at
one Delta, as a lineup of :mod:`ppmlib.lineup`'s standard members, and the numbers the paper compares.
"""
from __future__ import annotations

__all__ = ["matched_comparison", "matched_measures"]

from .. import lineup
from ..models import family
from ..posterior import Sampler


def matched_comparison(model: str, y, *, cw_radius: float, relative: bool = False, c: float = 1.0,
                       g: float = 0.0, cw_c: float = 1.0, rtol: float = 0.03, max_iter: int = 12, m: int = 20,
                       sampler: Sampler | None = None, seed: int = 0, progress: bool = True) -> dict:
    """Unweighted, LW, and CW and SW matched to LW's Delta (2020 paper; the book's vector-weighted chapter):
    a lineup of :mod:`ppmlib.lineup`'s standard members, run by :func:`ppmlib.lineup.run`.

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
    ppmlib.lineup.Results
        {"Unweighted": ..., "LW": ..., "CW": ..., "SW": ...} of :class:`Synthesis`; the calibrated
        CW and SW carry ``.calibration`` (parameter, value, target, history).

    Raises
    ------
    CalibrationError
        If CW or SW does not reach LW's Delta within ``max_iter`` refits.

    See Also
    --------
    ppmlib.synthesizer : one scheme end to end.
    ppmlib.match_delta : the root finder used for CW and SW.

    Examples
    --------
    >>> y = ppmlib.simulate.poisson(200, 100, seed=1)
    >>> exact = ppmlib.exact.ConjugateSampler()      # exact Gamma draws in place of Stan's
    >>> four = ppmlib.matched_comparison("poisson", y, cw_radius=10.0, sampler=exact, seed=2020, progress=False)
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
    """The numbers the papers compare for one matched comparison (``ppmlib.matched_comparison``).

    ``results`` maps "Unweighted", "LW", "CW" and "SW" to a Synthesis. Returns a dict:
    ``weighted / unweighted Delta``, the largest Delta of the weighted synthesizers over the
    unweighted Delta; ``Delta gap to LW``, the largest relative gap abs(Delta / Delta_LW - 1) of
    the weighted ones; the mean weights and the shares of by-record bounds at or above 0.9 Delta
    (``ppmlib.near_max_share``) of LW and CW; ``sd ratio SW / LW``, the ratio of the posterior sds
    of the mean.
    """
    from ..lipschitz import near_max_share
    missing = {"Unweighted", "LW", "CW", "SW"} - set(results)
    if missing:
        raise ValueError(f"results lacks synthesizer(s) {sorted(missing)}; has {sorted(results)}")
    weighted = [r for name, r in results.items() if name != "Unweighted"]
    lw, cw = results["LW"], results["CW"]
    return {"weighted / unweighted Delta": max(r.delta for r in weighted) / results["Unweighted"].delta,
            "Delta gap to LW": max(abs(r.delta / lw.delta - 1) for r in weighted),
            "mean weight LW": float(lw.weights.mean()), "mean weight CW": float(cw.weights.mean()),
            "near-max share LW": near_max_share(lw.bounds), "near-max share CW": near_max_share(cw.bounds),
            "sd ratio SW / LW": float(results["SW"].location_draws.std() / lw.location_draws.std())}
