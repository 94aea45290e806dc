"""Attribute-disclosure risk of synthetic data by importance sampling (the course slides' method).

The intruder knows every other record's true value, the synthesizer (a normal model with mean
mu_hi and sd sigma_h under posterior draw h) and the released synthetic data Z, and guesses record
i's value among y_i + offsets with a uniform prior. By Bayes' rule the guess probabilities are
proportional to p(Z | y*). Refitting the model for every guess would be exact but costly; instead
the H draws of the fit to the true data are reweighted (importance sampling):

    p(Z | y*) ~ (1/H) sum_h p_h q_h,   log p_h = sum_j log N(z_j | mu_hj, sigma_h),
    q_h = w_h / sum_h' w_h',           w_h = N(y* | mu_hi, sigma_h) / N(y_i | mu_hi, sigma_h).

p_h is a product over all synthetic records, so everything stays in log space (log-sum-exp).

Under an alpha-weighted (pseudo posterior) synthesizer, replacing y_i by y* multiplies the pseudo
posterior by [N(y* | mu_hi, sigma_h) / N(y_i | mu_hi, sigma_h)]^alpha_i, so record i's ratios are
raised to alpha_i (``weights=``). An intruder who does not know alpha uses the unweighted ratios
(``weights=None``) on the same draws: a second, misspecified reading.

The loops of the attribute-risk chapter (over H, over m, over synthetic datasets) are here too:
:func:`risk_by_draws`, :func:`risk_by_m`, :func:`risk_by_dataset`.
"""
from __future__ import annotations

__all__ = ["DEFAULT_OFFSETS", "AttributeRisk", "attribute_risk", "synthetic_log_lik", "log_weights", "risk_inputs",
           "guess_table", "risk_summary", "risk_by_draws", "risk_by_m", "generating_sigma", "risk_by_dataset",
           "expected_risk", "IdentificationRisk", "identification_risk", "joint_attribute_risk"]

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from ppmlib import _checks
from ppmlib.errors import BadArgument

if TYPE_CHECKING:
    from ppmlib.inference.posterior import Fit

DEFAULT_OFFSETS = np.round(np.arange(-2.5, 2.5 + 1e-9, 0.5), 10)  # G = 11, 0 is the truth


@dataclass(frozen=True)
class AttributeRisk:
    """Guess probabilities for every record.

    Attributes
    ----------
    probs : ndarray, shape (n, G)
        Probability of each guess, normalised over the G guesses.
    prob_true : ndarray, shape (n,)
        Probability of the true value (offset 0).
    rank_true : ndarray, shape (n,)
        Rank of the true value, 1 = most probable; ties take the best rank.
    guesses : ndarray, shape (n, G)
        The guessed values y_i + offsets.
    offsets : ndarray, shape (G,)
    draw_share : ndarray, shape (H,)
        p(Z | theta_h) normalised over the draws: how much each draw explains Z (all records).
    """
    probs: np.ndarray
    prob_true: np.ndarray
    rank_true: np.ndarray
    guesses: np.ndarray
    offsets: np.ndarray
    draw_share: np.ndarray


def _inputs(y, z, mu, sigma, offsets):
    y = _checks.finite_array(y, "y", ndim=1)
    n = y.size
    z = _checks.finite_array(z, "z")
    if z.ndim == 1:
        z = z[None, :]
    if z.ndim != 2 or z.shape[1] != n:
        raise BadArgument(f"z must be (n,) or (m, n) synthetic values with n = {n}, got shape {z.shape}")
    mu = _checks.finite_array(mu, "mu", ndim=2)
    if mu.shape[1] != n:
        raise BadArgument(f"mu must be (H, n) model means with n = {n}, got shape {mu.shape}")
    sigma = _checks.finite_array(sigma, "sigma", ndim=1)
    if sigma.size != mu.shape[0]:
        raise BadArgument(f"sigma must be (H,) with H = {mu.shape[0]} (the rows of mu), got shape {sigma.shape}")
    if (sigma <= 0).any():
        raise BadArgument(f"sigma must be positive; found {sigma[sigma <= 0][0]:g}")
    offsets = DEFAULT_OFFSETS if offsets is None else _checks.finite_array(offsets, "offsets", ndim=1)
    if not np.any(offsets == 0):
        raise BadArgument("offsets must contain 0 (the true value is one of the guesses)")
    return y, z, mu, sigma, offsets


def synthetic_log_lik(z: np.ndarray, mu: np.ndarray, sigma: np.ndarray) -> np.ndarray:
    """log p_h for every dataset and draw: sum_j log N(z_lj | mu_hj, sigma_h), shape (m, H).

    The sum of squares is expanded (sum z^2 - 2 z.mu_h + sum mu_h^2) so that it is two matrix
    products and never an (m, H, n) array.

    Parameters
    ----------
    z : ndarray, shape (m, n)
        The released datasets.
    mu : ndarray, shape (H, n)
        Each draw's mean of every record.
    sigma : ndarray, shape (H,)
        Each draw's sd.

    Returns
    -------
    ndarray, shape (m, H)
    """
    n = z.shape[1]
    squares = (z**2).sum(axis=1)[:, None] - 2.0 * z @ mu.T + (mu**2).sum(axis=1)[None, :]
    return -0.5 * squares / sigma**2 - n * np.log(sigma) - 0.5 * n * np.log(2.0 * np.pi)


def _per_dataset_log_lik(z: np.ndarray, mu: np.ndarray, sigma: np.ndarray) -> np.ndarray:
    """:func:`synthetic_log_lik` with the synthetic records' own means: (H, n) for all datasets or (m, H, n)."""
    mu = _checks.finite_array(mu, "mu_synthetic")
    if mu.ndim == 2:
        mu = np.broadcast_to(mu, (z.shape[0], *mu.shape))
    if mu.shape != (z.shape[0], sigma.size, z.shape[1]):
        raise BadArgument(f"mu_synthetic must be (H, n) or (m, H, n) = {(z.shape[0], sigma.size, z.shape[1])}, "
                         f"got shape {mu.shape}")
    return np.concatenate([synthetic_log_lik(z[l:l + 1], mu[l], sigma) for l in range(z.shape[0])])


def _logsumexp0(x: np.ndarray) -> np.ndarray:
    """log sum exp over the first axis, shifted by the maximum (lean: this is the hot path)."""
    top = x.max(axis=0)
    return top + np.log(np.exp(x - top).sum(axis=0))


def log_weights(y, mu, sigma, offsets) -> np.ndarray:
    """log w_h for every draw, record and guess, shape (H, n, G).

    log w_h = log N(y_i + d | mu_hi, sigma_h) - log N(y_i | mu_hi, sigma_h) for an offset d; the
    normal constants cancel and the squares factor: (y + d - mu)^2 - (y - mu)^2 = d (d + 2 (y - mu)).

    Parameters
    ----------
    y : ndarray, shape (n,)
        The confidential values.
    mu : ndarray, shape (H, n)
        Each draw's mean of every record.
    sigma : ndarray, shape (H,)
        Each draw's sd.
    offsets : ndarray, shape (G,)
        The guesses' offsets d from y_i.

    Returns
    -------
    ndarray, shape (H, n, G)
    """
    resid = (y[None, :] - mu)[:, :, None]                                      # (H, n, 1)
    return -offsets * (offsets + 2.0 * resid) / (2.0 * sigma[:, None, None] ** 2)


def attribute_risk(y, z, mu, sigma, offsets=None, weights=None, mu_synthetic=None) -> AttributeRisk:
    """Probability of each guess y_i + offset for every record, by importance sampling.

    Parameters
    ----------
    y : (n,) true values of the synthesized variable
    z : (n,) one synthetic dataset, or (m, n) m of them (their likelihoods multiply)
    mu : (H, n) the synthesizer's mean of every record under each of H posterior draws
    sigma : (H,) the synthesizer's standard deviation under each draw
    offsets : (G,) guesses relative to the truth; must contain 0. Default -2.5, -2.0, ..., 2.5.
    weights : (n,) the synthesizer's record weights alpha in [0, 1]: record i's importance ratios
        are raised to alpha_i. None = the unweighted synthesizer (all alpha_i = 1), or an intruder
        who does not know alpha.
    mu_synthetic : (H, n) or (m, H, n), optional
        The means of the *synthetic* records when they differ from the confidential records' ``mu``
        (sequential synthesis: a variable drawn given synthetic earlier variables); one (H, n) per
        dataset. None: ``mu`` (the other variables were released as they are).

    Returns
    -------
    AttributeRisk
        probs (n, G), prob_true (n,), rank_true (n,), guesses (n, G), offsets (G,), draw_share (H,).

    See Also
    --------
    ppmlib.evaluate.disclosure.risk_inputs : (mu, sigma) from a fitted normal synthesizer.
    ppmlib.evaluate.disclosure.guess_table : one record's guesses, most probable first.
    ppmlib.evaluate.disclosure.risk_by_draws : the estimator for several numbers of draws H.
    ppmlib.evaluate.disclosure.risk_by_m : the estimator on the first m released datasets.
    ppmlib.evaluate.disclosure.risk_by_dataset : the estimator on each of K datasets alone.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> y = rng.normal(size=6)                                  # 6 records
    >>> mu, sigma = rng.normal(0, 0.1, size=(4, 6)), np.full(4, 1.0)   # 4 draws
    >>> risk = attribute_risk(y, y + 0.1, mu, sigma)
    >>> risk.probs.shape, risk.prob_true.shape, bool(np.allclose(risk.probs.sum(axis=1), 1))
    ((6, 11), (6,), True)

    With a fitted normal synthesizer ``fit`` (a Stan fit) and its released datasets ``z``, the
    inputs come from the fit: ``attribute_risk(y, z, *risk_inputs(fit, 50), weights=fit.weights)``.
    """
    y, z, mu, sigma, offsets = _inputs(y, z, mu, sigma, offsets)
    alpha = _checks.weights(weights, y.size)
    # underflow (every likelihood 0) shows as NaN, refused just below with a message, not a warning
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        log_w = alpha[None, :, None] * log_weights(y, mu, sigma, offsets)          # (H, n, G)
        log_p = (synthetic_log_lik(z, mu, sigma) if mu_synthetic is None                # (m, H)
                 else _per_dataset_log_lik(z, mu_synthetic, sigma))
        log_q = log_w - _logsumexp0(log_w)                                         # normalised over draws
        # log p(Z_l | y*) = LSE_h(log p_h + log q_h) - log H, one dataset at a time (a loop over the
        # few datasets, never over records, guesses or draws); the datasets' likelihoods multiply.
        log_evidence = sum(_logsumexp0(log_p_l[:, None, None] + log_q) for log_p_l in log_p)
        log_evidence = log_evidence - z.shape[0] * np.log(mu.shape[0])
        top = log_evidence.max(axis=1, keepdims=True)                              # uniform prior: normalise
        probs = np.exp(log_evidence - top)
        probs /= probs.sum(axis=1, keepdims=True)
    undefined = ~np.isfinite(probs).all(axis=1)
    if undefined.any():  # every guess has likelihood 0 (underflow): no risk can be computed
        raise BadArgument(f"attribute risk is undefined for {undefined.sum()} of {y.size} records: the synthetic data "
                         "have likelihood 0 under every guess and draw (underflow). Check that z, mu and sigma are on "
                         "the same scale (e.g. all on the log scale) and that sigma is not tiny.")
    true_col = int(np.flatnonzero(offsets == 0)[0])
    prob_true = probs[:, true_col]
    rank_true = 1 + (probs > prob_true[:, None]).sum(axis=1)
    log_share = log_p.sum(axis=0)
    draw_share = np.exp(log_share - _logsumexp0(log_share))
    return AttributeRisk(probs, prob_true, rank_true, y[:, None] + offsets[None, :], offsets, draw_share)


def risk_inputs(fit: "Fit", H: int) -> tuple[np.ndarray, np.ndarray]:
    """(mu, sigma) for ``attribute_risk`` from H evenly spaced draws of a normal-model Fit:
    mu is (H, n), the model mean of every record under each draw, and sigma is (H,).

    Only the 'normal' family has a per-record mean X_i beta and an sd sigma (``Normal.mean`` and
    the ``sigma`` draws); any other fit is refused with a ValueError, anything but a Fit with a
    TypeError.

    Parameters
    ----------
    fit : Fit
        A fit of the 'normal' family.
    H : int
        The number of evenly spaced draws.

    Returns
    -------
    mu : ndarray, shape (H, n)
    sigma : ndarray, shape (H,)
    """
    from ppmlib.models.families import Normal
    from ppmlib.inference.posterior import Fit
    if not isinstance(fit, Fit):
        raise TypeError(f"fit must be a ppmlib.Fit of the 'normal' model, got {type(fit).__name__}")
    if not isinstance(fit.model, Normal) or "sigma" not in fit.draws:
        raise BadArgument(f"attribute_risk needs a normal synthesizer with one scale; this fit is {fit.model.name!r}")
    H = _checks.integer(H, "H", low=1)
    if H > fit.n_draws:
        raise BadArgument(f"H = {H} draws requested but the fit has {fit.n_draws}")
    keep = np.zeros(fit.n_draws, dtype=bool)
    keep[np.linspace(0, fit.n_draws - 1, H).round().astype(int)] = True
    thinned = fit.subset(keep)
    return thinned.model.mean(thinned.draws, thinned.X), thinned.draws["sigma"]


def guess_table(risk: AttributeRisk, record: int):
    """The G guesses of one record with their probabilities, most probable first (a DataFrame).

    Parameters
    ----------
    risk : AttributeRisk
        The estimator's result.
    record : int
        The record's 0-based index.

    Returns
    -------
    pandas.DataFrame
        Columns guess, offset and probability, most probable first.
    """
    import pandas as pd
    record = _checks.integer(record, "record", low=0)
    if record >= risk.probs.shape[0]:
        raise BadArgument(f"record must be below n = {risk.probs.shape[0]}, got {record}")
    table = pd.DataFrame({"guess": risk.guesses[record], "offset": risk.offsets,
                          "probability": risk.probs[record], "true value": risk.offsets == 0})
    return table.sort_values("probability", ascending=False, kind="stable").reset_index(drop=True)


# --- The chapter's studies: the same estimator over H, over m, and over synthetic datasets ---------

def risk_summary(risk: AttributeRisk, sigma_h, sigma_draws) -> dict:
    """The global numbers behind a rank distribution.

    ``sigma_h`` (H,) are the sigmas of the draws the estimator used and ``sigma_draws`` (S,) all of
    the fit's sigma draws. The synthetic data favour the draws whose sigma matches their spread:
    ``effective sigma`` is the draw_share-weighted mean of sigma_h, and its percentile among the
    posterior draws says whether the one released dataset is wider (high) or narrower (low) than
    a typical draw. ``draws that matter`` is 1 / sum(draw_share^2).

    Parameters
    ----------
    risk : AttributeRisk
        The estimator's result.
    sigma_h : array_like, shape (H,)
        The sigmas of the draws the estimator used.
    sigma_draws : array_like, shape (S,)
        All of the fit's sigma draws.

    Returns
    -------
    dict
    """
    sigma_h = _checks.finite_array(sigma_h, "sigma_h", ndim=1)
    sigma_draws = _checks.finite_array(sigma_draws, "sigma_draws", ndim=1)
    if sigma_h.size != risk.draw_share.size:
        raise BadArgument(f"sigma_h must have one value per draw used (H = {risk.draw_share.size}), got {sigma_h.size}")
    effective = float(risk.draw_share @ sigma_h)
    G = risk.offsets.size
    return {"median P(true)": float(np.median(risk.prob_true)), "mean P(true)": float(risk.prob_true.mean()),
            "max P(true)": float(risk.prob_true.max()),
            "share P(true) < 1/G": float(np.mean(risk.prob_true < 1 / G)),
            "mean rank": float(risk.rank_true.mean()), "share ranked 1st": float(np.mean(risk.rank_true == 1)),
            f"share ranked {G // 2 + 2}..{G}": float(np.mean(risk.rank_true > G // 2 + 1)),
            "draws that matter": float(1.0 / np.sum(risk.draw_share**2)),
            "effective sigma": effective, "its percentile among the sigma draws": float(np.mean(sigma_draws < effective))}


def risk_by_draws(fit, y, z, H_values, offsets=None, weights=None, progress: bool = False):
    """The estimator with H evenly spaced draws, for each H in ``H_values`` (a DataFrame indexed by H).

    Besides the summaries it reports the largest change of any record's P(true) against the
    largest H, the reference: the Monte Carlo error of the importance sampler.

    Parameters
    ----------
    fit : Fit
        A normal-model fit.
    y : array_like, shape (n,)
        The confidential values.
    z : array_like, shape (m, n)
        The released datasets.
    H_values : sequence of int
        The numbers of draws to try.
    offsets : array_like, shape (G,), optional
        The guesses' offsets (default ``DEFAULT_OFFSETS``).
    weights : array_like, shape (n,), optional
        The weights the intruder uses (None: all ones).
    progress : bool
        Show a progress bar.

    Returns
    -------
    pandas.DataFrame
        Indexed by H.

    See Also
    --------
    risk_summary : the columns of each row.
    risk_by_m, risk_by_dataset
    """
    import pandas as pd

    from ppmlib.progress import progress_bar
    H_values = sorted({_checks.integer(h, "H_values[...]", low=1) for h in H_values})
    risks = {h: attribute_risk(y, z, *risk_inputs(fit, h), offsets, weights)
             for h in progress_bar(H_values, desc="H", enabled=progress)}
    reference = risks[H_values[-1]].prob_true
    sigma_draws = fit.draws["sigma"]
    rows = {h: {**risk_summary(r, risk_inputs(fit, h)[1], sigma_draws),
                f"max |P(true) - P(true) at H = {H_values[-1]}|": float(np.abs(r.prob_true - reference).max())}
            for h, r in risks.items()}
    return pd.DataFrame(rows).T.rename_axis("H")


def risk_by_m(y, z, mu, sigma, m_values, sigma_draws, offsets=None, weights=None):
    """The estimator on the first m released datasets z[:m], for each m: (risks by m, summary table).

    ``z`` is (M, n) with M >= max(m_values); ``mu`` (H, n), ``sigma`` (H,) and ``sigma_draws`` (S,)
    as in :func:`ppmlib.attribute_risk` and :func:`risk_summary`. Returns a dict m -> AttributeRisk and a
    DataFrame indexed by m.

    Parameters
    ----------
    y : array_like, shape (n,)
        The confidential values.
    z : array_like, shape (M, n)
        The released datasets, M >= max(m_values).
    mu, sigma
        As for :func:`ppmlib.attribute_risk`.
    m_values : sequence of int
        The numbers of datasets to use.
    sigma_draws : ndarray, shape (S,)
        All of the fit's sigma draws.
    offsets : array_like, shape (G,), optional
        The guesses' offsets (default ``DEFAULT_OFFSETS``).
    weights : array_like, shape (n,), optional
        The weights the intruder uses (None: all ones).

    Returns
    -------
    (dict of int to AttributeRisk, pandas.DataFrame)

    See Also
    --------
    risk_by_draws, risk_by_dataset
    """
    import pandas as pd
    z = np.atleast_2d(_checks.finite_array(z, "z"))
    m_values = sorted({_checks.integer(k, "m_values[...]", low=1) for k in m_values})
    if m_values[-1] > z.shape[0]:
        raise BadArgument(f"m_values go up to {m_values[-1]} but z holds {z.shape[0]} datasets")
    risks = {k: attribute_risk(y, z[:k], mu, sigma, offsets, weights) for k in m_values}
    table = pd.DataFrame({k: risk_summary(r, sigma, sigma_draws) for k, r in risks.items()}).T.rename_axis("m")
    return risks, table


def generating_sigma(fit, m: int) -> np.ndarray:
    """sigma of the m draws that ``fit.synthesize(m, ...)`` turns into datasets (evenly spaced draws).

    Parameters
    ----------
    fit : Fit
        A normal-model fit.
    m : int
        The number of datasets ``fit.synthesize`` makes.

    Returns
    -------
    ndarray, shape (m,)
    """
    from ppmlib.inference.posterior import spaced_draws
    return fit.draws["sigma"][spaced_draws(fit.n_draws, m)]


def risk_by_dataset(fit, y, H: int, K: int, seed, offsets=None, weights=None, decimals: int | None = 1,
                    progress: bool = False):
    """The rank pattern over K synthetic datasets, each drawn from its own posterior draw (m = 1).

    The draws are K evenly spaced draws of ``fit``; each dataset is rounded to ``decimals`` like the
    chapter's data. One row per dataset: the generating draw's sigma and its percentile among all
    sigma draws, then :func:`risk_summary` of the estimator on that dataset alone.

    Parameters
    ----------
    fit, y
        The normal-model fit and the confidential values it saw.
    H : int
        Draws used by the estimator.
    K : int
        The number of datasets, one per evenly spaced draw.
    seed : int
        The randomness of the datasets.
    offsets : array_like, shape (G,), optional
        The guesses' offsets (default ``DEFAULT_OFFSETS``).
    weights : array_like, shape (n,), optional
        The weights the intruder uses (None: all ones).
    decimals : int or None
        Rounding of the synthetic values, as the chapter's data.
    progress : bool
        Show a progress bar.

    Returns
    -------
    pandas.DataFrame
        One row per dataset.

    See Also
    --------
    generating_sigma : the sigma of the draws behind released datasets.
    risk_by_draws, risk_by_m
    """
    import pandas as pd

    from ppmlib.progress import progress_bar
    K = _checks.integer(K, "K", low=1)
    if K > fit.n_draws:
        raise BadArgument(f"K = {K} datasets need K draws; the fit has {fit.n_draws}")
    mu, sigma = risk_inputs(fit, H)
    sigma_draws = fit.draws["sigma"]
    rng = np.random.default_rng(_checks.seed(seed))
    rows = []
    for index in progress_bar(np.linspace(0, fit.n_draws - 1, K).round().astype(int), desc="datasets", enabled=progress):
        one = fit.subset(np.arange(fit.n_draws) == index)
        z = one.model.predict(one.draws, one.X, fit.y.size, rng)
        z = np.round(z, decimals) if decimals is not None else z
        generating = float(sigma_draws[index])
        rows.append({"draw": int(index), "generating sigma": generating,
                     "its percentile": float(np.mean(sigma_draws < generating)),
                     **risk_summary(attribute_risk(y, z, mu, sigma, offsets, weights), sigma, sigma_draws)})
    return pd.DataFrame(rows)


def expected_risk(by_dataset: dict, column: str = "mean P(true)", reference: str | None = None,
                  confidence: float = 0.95):
    """The expected risk over releases, per synthesizer, and each one's difference from a reference.

    Parameters
    ----------
    by_dataset : dict
        Synthesizer name -> the table of :func:`risk_by_dataset` (one row per released dataset).
    column : str
        The per-release risk to average ("mean P(true)", "median P(true)", "max P(true)", ...).
    reference : str, optional
        The synthesizer the others are compared with (default: the first).
    confidence : float
        Level of the intervals.

    Returns
    -------
    pandas.DataFrame
        One row per synthesizer: releases K, the mean of ``column`` over them with its t interval,
        the difference from the reference's mean and its Welch interval (the two sets of releases
        are independent), and whether that interval excludes 0.
    """
    import pandas as pd
    from scipy import stats
    confidence = _checks.real(confidence, "confidence", low=0, high=1, low_open=True, high_open=True)
    names = list(by_dataset)
    if not names:
        raise BadArgument("by_dataset is empty: give one table of releases per synthesizer")
    reference = names[0] if reference is None else reference
    if reference not in by_dataset:
        raise BadArgument(f"reference {reference!r} is not in by_dataset ({names})")
    values = {name: np.asarray(table[column], dtype=float) for name, table in by_dataset.items()}
    if min(v.size for v in values.values()) < 2:
        raise BadArgument("every synthesizer needs at least 2 releases for an interval")
    quantile = 0.5 + confidence / 2
    ref = values[reference]
    rows = {}
    for name, v in values.items():
        se = v.std(ddof=1) / np.sqrt(v.size)
        half = stats.t.ppf(quantile, v.size - 1) * se
        row = {"releases": v.size, "mean": v.mean(), "low": v.mean() - half, "high": v.mean() + half}
        if name != reference:
            a, b = v.var(ddof=1) / v.size, ref.var(ddof=1) / ref.size
            df = (a + b) ** 2 / (a**2 / (v.size - 1) + b**2 / (ref.size - 1))   # Welch-Satterthwaite
            diff, half = v.mean() - ref.mean(), stats.t.ppf(quantile, df) * np.sqrt(a + b)
            row.update({f"minus {reference}": diff, "diff low": diff - half, "diff high": diff + half,
                        "difference is real": bool(diff - half > 0 or diff + half < 0)})
        rows[name] = row
    return pd.DataFrame.from_dict(rows, orient="index").rename_axis(column)


# ---------------------------------------------------------------------------------------------
# identification risk (Reiter and Mitra 2009; Hornby and Hu 2021)
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class IdentificationRisk:
    """Identification risk of m partially synthetic datasets, one row of numbers per dataset.

    Attributes
    ----------
    emr : (m,) expected match risk, sum over records with c_i > 0 of T_i / c_i
    tmr : (m,) true match rate, the share of records with c_i T_i = 1 (a unique match that is right)
    fmr : (m,) false match rate, the share of the unique matches (c_i = 1) that are wrong; NaN
        when no record has a unique match
    unique : (m,) s, the number of records with exactly one match
    matches : (n, m) c_i, the number of synthetic records that match record i
    own : (n, m) T_i, whether record i's own synthetic row is among its matches (1 when c_i = 0,
        as the authors' package sets it; such a record adds nothing to any rate)
    """
    emr: np.ndarray
    tmr: np.ndarray
    fmr: np.ndarray
    unique: np.ndarray
    matches: np.ndarray
    own: np.ndarray

    @property
    def risk(self) -> np.ndarray:
        """(n, m) each record's match risk T_i / c_i (0 when nothing matches); EMR is its column sum."""
        return np.where(self.matches > 0, self.own / np.maximum(self.matches, 1), 0.0)

    @property
    def true_match(self) -> np.ndarray:
        """(n, m) K_i: 1 when record i has exactly one match and it is its own row."""
        return ((self.matches * self.own) == 1).astype(int)

    @property
    def false_match(self) -> np.ndarray:
        """(n, m) F_i: 1 when record i has exactly one match and it is another row."""
        return ((self.matches * (1 - self.own)) == 1).astype(int)

    def summary(self) -> dict:
        """The rates averaged over the m datasets (FMR over the datasets where it is defined).

        Returns
        -------
        dict
            {"EMR", "TMR", "FMR", "unique matches"}: floats (FMR NaN when no dataset defines it).
        """
        fmr = self.fmr[np.isfinite(self.fmr)]
        return {"EMR": float(self.emr.mean()), "TMR": float(self.tmr.mean()),
                "FMR": float(fmr.mean()) if fmr.size else float("nan"), "unique matches": float(self.unique.mean())}


def _numeric(column) -> bool:
    import pandas as pd
    return pd.api.types.is_numeric_dtype(column) and not pd.api.types.is_bool_dtype(column)


def _radii(confidential, keys: list, synthesized: list, radius) -> dict:
    """Column -> radius for the columns matched within a radius; every other column is matched exactly."""
    if radius is None:
        return {}
    if isinstance(radius, dict):
        unknown = sorted(set(radius) - set(keys) - set(synthesized))
        if unknown:
            raise BadArgument(f"radius names columns {unknown} that are neither keys nor synthesized")
        chosen = dict(radius)
    else:
        chosen = {column: radius for column in synthesized if _numeric(confidential[column])}
    for column in chosen:
        if not _numeric(confidential[column]):
            raise BadArgument(f"radius is given for column {column!r}, which is not numeric; it is matched exactly")
        chosen[column] = _checks.real(chosen[column], f"radius[{column!r}]", low=0, low_open=True)
    return chosen


def _match_counts(confidential, release, exact: list, radius: dict, relative: bool) -> tuple[np.ndarray, np.ndarray]:
    """(c_i, T_i) for one synthetic dataset: the ``exact`` columns equal, every column of ``radius``
    strictly inside (y_i - r_i, y_i + r_i), compared as the authors' package compares.

    Records and synthetic rows are grouped by their exact columns (compared as text). With one
    column matched within a radius, each group's synthetic values are sorted once and c_i is a
    difference of two binary searches (O(n log n)); with several, each record's group is scanned.
    """
    n = len(confidential)
    inside_of = []
    for column, r in radius.items():
        y = confidential[column].to_numpy(float)
        half = r * np.abs(y) if relative else np.full(n, r)
        z = _checks.finite_array(release[column].to_numpy(float), column, ndim=1)
        inside_of.append((y - half, y + half, z))
    known, released = _exact_codes(confidential, release, exact)
    # T_i: row i of the release is record i's; it matches when its key is i's and it lies inside every ball
    own = known == released
    for lo, hi, z in inside_of:
        own &= (z > lo) & (z < hi)
    if len(inside_of) == 1:
        c = _counts_in_balls(known, released, *inside_of[0])
    else:
        c = _counts_by_scan(known, released, inside_of)
    return c, np.where(c > 0, own, True).astype(int)


def _exact_codes(confidential, release, exact: list) -> tuple[np.ndarray, np.ndarray]:
    """Integer codes of the ``exact`` columns' values as text, shared by the records and the release, (n,) each."""
    n = len(confidential)
    if not exact:
        return np.zeros(n, dtype=np.int64), np.zeros(n, dtype=np.int64)
    both = np.concatenate([confidential[exact].astype(str).to_numpy(), release[exact].astype(str).to_numpy()])
    codes = np.zeros(2 * n, dtype=np.int64)
    for column in both.T:   # mixed radix over the columns' own codes: equal codes mean equal text in every column
        _, index = np.unique(column, return_inverse=True)
        codes = codes * (int(index.max()) + 1) + index.reshape(-1)
        _, codes = np.unique(codes, return_inverse=True)   # keep the codes small
        codes = codes.reshape(-1)
    return codes[:n], codes[n:]


def _counts_in_balls(known: np.ndarray, released: np.ndarray, lo: np.ndarray, hi: np.ndarray,
                     z: np.ndarray) -> np.ndarray:
    """c_i = #{k : released_k == known_i, lo_i < z_k < hi_i}, by binary search in the sorted (key, z)."""
    order = np.lexsort((z, released))
    keys, values = released[order], z[order]
    start = np.searchsorted(keys, known, side="left")
    stop = np.searchsorted(keys, known, side="right")
    c = np.zeros(known.size, dtype=int)
    for key in np.unique(known):
        rows = np.flatnonzero(known == key)
        first, last = start[rows[0]], stop[rows[0]]
        if first == last:
            continue
        group = values[first:last]
        above_lo = np.searchsorted(group, lo[rows], side="right")   # values <= lo come before
        below_hi = np.searchsorted(group, hi[rows], side="left")    # values < hi come before
        c[rows] = np.maximum(below_hi - above_lo, 0)
    return c


def _counts_by_scan(known: np.ndarray, released: np.ndarray, inside_of: list) -> np.ndarray:
    """c_i for several columns matched within a radius (or none): each record's group scanned."""
    order = np.argsort(released, kind="stable")
    keys = released[order]
    c = np.zeros(known.size, dtype=int)
    for i, key in enumerate(known):
        rows = order[np.searchsorted(keys, key, side="left"):np.searchsorted(keys, key, side="right")]
        inside = np.ones(rows.size, dtype=bool)
        for lo, hi, z in inside_of:
            inside &= (z[rows] > lo[i]) & (z[rows] < hi[i])
        c[i] = int(inside.sum())
    return c


def identification_risk(confidential, synthetic, keys, synthesized, radius=None,
                        relative: bool = True) -> IdentificationRisk:
    """Identification risk of partially synthetic data (Reiter and Mitra 2009; Hornby and Hu 2021).

    The intruder knows, for every confidential record i, its un-synthesized ``keys`` and its true
    values of the ``synthesized`` variables, and looks for it in a released dataset whose rows are
    the confidential rows with those variables synthesized (row i of the release is record i's). A
    synthetic record matches i when it agrees with i on every column: exactly, or, for a numeric
    column with a radius, strictly within it, y_i - r_i < z < y_i + r_i with r_i = radius * abs(y_i)
    (``relative``) or r_i = radius. Then c_i is the number of matches, T_i = 1 when row i's own
    synthetic record is among them, K_i = 1 when c_i T_i = 1 and F_i = 1 when c_i (1 - T_i) = 1, and

        EMR = sum_i T_i / c_i (over records with c_i > 0),  TMR = sum_i K_i / n,  FMR = sum_i F_i / s,

    with s the number of records with c_i = 1. Each synthetic dataset is scored alone. On positive
    values this equals the authors' R package IdentificationRiskCalculation (its continuous and
    categorical functions, tested to 1e-12 against its output); for a negative value the package's
    relative radius r * y_i is negative and nothing matches, here the ball has radius r * abs(y_i).

    Parameters
    ----------
    confidential : pandas.DataFrame
        The confidential records.
    synthetic : DataFrame or list of DataFrame
        One or m releases with the same rows (the keys as released, ``synthesized`` synthetic).
    keys : str or list of str
        The un-synthesized columns the intruder knows (matched exactly unless ``radius`` names them).
    synthesized : str or list of str
        The synthesized columns. Non-numeric columns (strings, categories, booleans) are matched exactly.
    radius : float, dict or None
        A float: the radius of every numeric synthesized column (keys matched exactly). A dict:
        column -> radius for the numeric columns, keys included, that are matched within a radius;
        the others are matched exactly. None: every column matched exactly (categorical data).
    relative : bool
        Whether a radius is a share of abs(y_i) (the package's default) or absolute.

    Returns
    -------
    IdentificationRisk

    Raises
    ------
    BadArgument
        A column missing, a release whose number of rows differs from the confidential data's, or a radius for a column that is not numeric or not among the keys and synthesized columns.

    Examples
    --------
    >>> import pandas as pd
    >>> data = pd.DataFrame({"g": ["a", "a", "b", "b"], "y": [10.0, 20.0, 30.0, 40.0]})
    >>> release = pd.DataFrame({"g": ["a", "a", "b", "b"], "y": [11.0, 12.0, 31.0, 30.0]})
    >>> risk = identification_risk(data, release, ["g"], "y", radius=0.25)
    >>> risk.matches[:, 0].tolist(), risk.own[:, 0].tolist()
    ([2, 0, 2, 1], [1, 1, 1, 0])
    >>> risk.summary()
    {'EMR': 1.0, 'TMR': 0.0, 'FMR': 1.0, 'unique matches': 1.0}
    """
    import pandas as pd
    from ppmlib.evaluate.utility import _as_frames
    if not isinstance(confidential, pd.DataFrame):
        raise TypeError(f"confidential must be a DataFrame, got {type(confidential).__name__}")
    frames = _as_frames(synthetic)
    keys = [keys] if isinstance(keys, str) else list(keys)
    synthesized = [synthesized] if isinstance(synthesized, str) else list(synthesized)
    needed = [*keys, *synthesized]
    for name, frame in [("confidential", confidential), *((f"synthetic[{j}]", f) for j, f in enumerate(frames))]:
        missing = [c for c in needed if c not in frame.columns]
        if missing:
            raise BadArgument(f"{name} lacks columns {missing}")
        if len(frame) != len(confidential):
            raise BadArgument(f"{name} has {len(frame)} rows; a partially synthetic release has the "
                              f"confidential data's {len(confidential)}, row for row")
    if not isinstance(relative, (bool, np.bool_)):
        raise TypeError(f"relative must be True or False, got {type(relative).__name__}")
    radii = _radii(confidential, keys, synthesized, radius)
    for column in radii:
        _checks.finite_array(confidential[column].to_numpy(float), column, ndim=1)
    exact = [column for column in needed if column not in radii]
    per_set = [_match_counts(confidential, frame, exact, radii, relative) for frame in frames]
    c = np.stack([p[0] for p in per_set], axis=1)
    own = np.stack([p[1] for p in per_set], axis=1)
    unique = (c == 1).sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        emr = np.where(c > 0, own / np.maximum(c, 1), 0.0).sum(axis=0)
        tmr = ((c * own) == 1).sum(axis=0) / len(confidential)
        fmr = np.where(unique > 0, ((c * (1 - own)) == 1).sum(axis=0) / np.maximum(unique, 1), np.nan)
    return IdentificationRisk(emr, tmr, fmr, unique, c, own)


def joint_attribute_risk(synthesis, variable: str, H: int, *, datasets: int = 1, offsets=None,
                   knows_weights: bool = True) -> AttributeRisk:
    """Attribute-disclosure risk of one normal conditional's variable in the joint release.

    The intruder knows every other record, record i's other variables (its true values of the
    ``given`` variables), the model and the first ``datasets`` synthetic datasets. In those, the
    variable was drawn given the *synthetic* earlier variables, so the likelihood of the synthetic
    data uses the synthetic design, and the importance ratios of the guesses the true one
    (:func:`ppmlib.attribute_risk` with ``mu_synthetic``). The earlier conditionals do not involve
    the variable, so their factor of p(Z | guess) is the same for every guess and drops out.

    Parameters
    ----------
    synthesis : ppmlib.mechanism.joint.JointSynthesis
    variable : str
        A variable synthesized by a "normal" conditional.
    H : int
        Evenly spaced draws of that conditional's fit used by the importance sampler.
    datasets : int
        How many of the released datasets the intruder uses (their likelihoods multiply).
    offsets : array_like, optional
        Guesses relative to the truth (default: ``ppmlib.evaluate.disclosure.DEFAULT_OFFSETS``).
    knows_weights : bool
        Raise record i's ratios to its weight alpha_ij (an intruder who knows the weights).

    Returns
    -------
    ppmlib.AttributeRisk
    """
    from dataclasses import replace
    if variable not in synthesis.variables:
        raise BadArgument(f"unknown variable {variable!r}; this synthesis has {list(synthesis.variables)}")
    datasets = _checks.integer(datasets, "datasets", low=1)
    if datasets > synthesis.synthetic.shape[0]:
        raise BadArgument(f"datasets = {datasets}, but the synthesis holds {synthesis.synthetic.shape[0]}")
    j = synthesis.variables.index(variable)
    cond, fit = synthesis.conditionals[j], synthesis.parts[variable].fit
    mu, sigma = risk_inputs(fit, H)
    predictors = fit.X[:, :fit.X.shape[1] - len(cond.given)]  # Conditional.design puts the given columns last
    mu_synthetic = np.stack([
        risk_inputs(replace(fit, X=cond.design(predictors, {v: synthesis.synthetic_of(v)[l] for v in cond.given})), H)[0]
        for l in range(datasets)])
    return attribute_risk(fit.y, synthesis.synthetic[:datasets, :, j], mu, sigma, offsets,
                           synthesis.weights[:, j] if knows_weights else None, mu_synthetic=mu_synthetic)
