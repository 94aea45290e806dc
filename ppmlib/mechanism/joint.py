"""Several sensitive variables at once: sequential synthesis with one Lipschitz bound for the whole record.

A record x_i = (v_i1, ..., v_iJ) is synthesized from a product of conditionals,
p(v_1 | X) p(v_2 | v_1, X) ..., each a normal or mixture regression (ppmlib's families) on a
design made of insensitive categorical predictors and the earlier variables. Each conditional is
fitted as its own alpha-weighted pseudo posterior by :func:`ppmlib.synthesizer`; this module adds
the bound of the joint release, the weighting schemes on it, and the sequential synthesis.

**The joint bound.** The record's joint log-likelihood is the sum of its conditional terms
f_j(x_i, theta_j), so removing record i (all its variables) changes the joint weighted
log-likelihood by sum_j alpha_ij f_j(x_i, theta_j), and

    Delta_i = max_s abs(sum_j alpha_ij f_j,s(x_i))  <=  sum_j max_s abs(alpha_ij f_j,s(x_i)),

which can be smaller (the terms may have opposite signs, and their maxima need not fall on the
same draw). Delta = max_i Delta_i, and each joint draw, with the synthetic records made from it,
is epsilon = 2 Delta differentially private for the whole record against the removal neighbours
of x (the databases with one whole record removed; adding an arbitrary record is not covered,
replace-one costs 4 Delta). Accounting each variable as its own mechanism composes instead:
epsilon = sum_j 2 Delta_j with Delta_j = max_i max_s abs(alpha_ij f_j,s(x_i)), never smaller.

**Pairing the draws.** The conditionals have disjoint parameters and independent priors, so the
joint pseudo posterior factorises, xi(theta_1, ..., theta_J | x) = prod_j xi_j(theta_j | x), with
the same record weights entering each factor: each fit's draws are draws of its own factor,
independent of the others'. Draw s of every fit, taken together, is therefore one draw of the joint
pseudo posterior, what one Stan program fitting all conditionals at once would return, and Delta
is estimated as for one variable: a maximum over S joint draws. This assumes independent chains
(separate fits with separate seeds), fixed weights and no parameter shared between conditionals.
Any other pairing would be as valid; the maximum over all S^J combinations
(``JointBounds.all_pairs``) is a conservative estimate that does not depend on the pairing.

**Weighting schemes** (:data:`SCHEMES`): "unweighted" (alpha = 1); "joint", one LW weight per
record, alpha_i = clip(c (1 - r_i) + g, 0, 1) with r_i the min-max scaled *joint* bound of the
unweighted synthesizer, used in every conditional; "per_variable", one LW weight per record and
conditional, alpha_ij from conditional j's own unweighted bound (what a user synthesizing each
variable separately would do).

**Sequential synthesis.** Dataset l uses joint draw s_l: the first variable is drawn given the
predictors, the next given the predictors and the *synthetic* first, and so on.
"""
from __future__ import annotations

__all__ = ["SCHEMES", "Conditional", "JointBounds", "JointSynthesis", "joint_bounds", "accumulate_bounds", "joint_synthesizer",
           "synthesize_sequentially", "match_joint", "pair_statistics", "pair_long_table"]

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Callable

import numpy as np

from ppmlib import _checks
from ppmlib.inference.diagnostics import combine
from ppmlib.mechanism.bounds import epsilon as _epsilon
from ppmlib.mechanism.bounds import weight_records
from ppmlib.mechanism.synthesis import Synthesis, match_delta, synthesizer
from ppmlib.inference.posterior import Fit, Sampler, _sampler, spaced_draws
from ppmlib.seeding import seeds
from ppmlib.mechanism.weights import lw_weights
from ppmlib.errors import BadArgument

if TYPE_CHECKING:
    import pandas as pd


#: The weighting schemes of :func:`joint_synthesizer`, with what each gives a record.
SCHEMES = {
    "unweighted": "alpha_ij = 1",
    "joint": "one LW weight alpha_i per record from the joint bound of the unweighted synthesizer, in every conditional",
    "per_variable": "one LW weight alpha_ij per record and conditional, from that conditional's own unweighted bound",
}


@dataclass(frozen=True)
class Conditional:
    """One factor p(variable | predictors, given) of the joint model.

    Attributes
    ----------
    variable : str
        The column of the data this conditional synthesizes.
    predictors : tuple of str
        Insensitive categorical columns, one-hot coded with :func:`ppmlib.design_matrix` (an
        intercept is always included). They are released as they are, not synthesized.
    given : tuple of str
        Earlier variables of the sequence used as numeric regressors: their confidential values to
        fit, their synthetic values to synthesize.
    model : str
        "normal" or "mixture" (a family with a design matrix).
    prior : dict, optional
        Overrides of the family's default prior settings.
    centres : dict, optional
        ``{given variable: constant}`` subtracted from its column. A regressor far from 0 (log
        expenditure, about 9.5) makes intercept and slope strongly correlated and the sampler slow;
        centring fixes that. Use a public constant: a centre computed from the confidential data
        would be one more data-dependent choice outside the guarantee.
    """
    variable: str
    predictors: tuple = ()
    given: tuple = ()
    model: str = "normal"
    prior: dict | None = None
    centres: dict | None = None

    def design(self, base: np.ndarray, values: dict) -> np.ndarray:
        """The (n, P + len(given)) design: the predictors' columns, then the given variables' (centred) values.

        Parameters
        ----------
        base : ndarray, shape (n, P)
            The predictors' columns (:func:`ppmlib.design_matrix` of ``predictors``, with its intercept).
        values : dict of str to array_like, shape (n,)
            At least the ``given`` variables' values: confidential ones to fit, synthetic ones to synthesize.

        Returns
        -------
        ndarray, shape (n, P + len(given))
        """
        centres = self.centres or {}
        return np.column_stack([base] + [np.asarray(values[v], float) - centres.get(v, 0.0) for v in self.given])


@dataclass(frozen=True)
class JointBounds:
    """By-record bounds of a joint release, all from one pass over the paired draws.

    Attributes
    ----------
    paired : ndarray, shape (n,)
        max_s abs(sum_j alpha_ij f_j,s(x_i)), draw s of every conditional taken together.
    all_pairs : ndarray, shape (n,)
        The maximum over every combination of the conditionals' draws (conservative).
    conditional : ndarray, shape (n, J)
        max_s abs(alpha_ij f_j,s(x_i)), each conditional's own bounds.
    """
    paired: np.ndarray
    all_pairs: np.ndarray
    conditional: np.ndarray

    @property
    def summed(self) -> np.ndarray:
        """(n,) sum_j of the conditional bounds: at least ``all_pairs``, which is at least ``paired``."""
        return self.conditional.sum(axis=1)


def _weighted_terms(fit: Fit, part: slice, alpha: np.ndarray) -> np.ndarray:
    """alpha_i f_s(x_i) on the draws ``part`` (lipschitz.weight_records's rule for a zero weight)."""
    return weight_records(fit.model.log_lik({k: v[part] for k, v in fit.draws.items()}, fit.y, fit.X), alpha)


def joint_bounds(fits, weights, max_elements: int = 2**21) -> JointBounds:
    """By-record bounds of the joint release of J conditional fits, draw s of each paired.

    Parameters
    ----------
    fits : sequence of Fit
        The J alpha-weighted conditional fits, to the same n records, with the same number of draws S.
    weights : array_like, shape (n,) or (n, J)
        The record weights: one per record (used in every conditional) or one per record and conditional.
    max_elements : int
        Draws are processed in blocks of about this many numbers per conditional (memory stays flat in S).

    Returns
    -------
    JointBounds
        ``paired`` (the bounds, whose maximum is the joint Delta), ``all_pairs`` and ``conditional``.

    Notes
    -----
    A record of weight 1 whose log-likelihood is -1, -3, -2 under the first conditional's three
    draws and +2.5, -0.2, -1 under the second's: paired, the largest of abs(1.5), abs(-3.2), abs(-3) is 3.2; over every
    combination the sum lies between -3 - 1 = -4 and -1 + 2.5 = 1.5, so 4; the conditional bounds
    are 3 and 2.5, summed 5.5. The positive term cancels part of the negative one on the same draw.
    """
    fits = list(fits)
    if not fits or not all(isinstance(f, Fit) for f in fits):
        raise TypeError("fits must be a non-empty sequence of ppmlib.Fit")
    n, S = fits[0].y.size, fits[0].n_draws
    for j, f in enumerate(fits):
        if f.y.size != n or f.n_draws != S:
            raise BadArgument(f"fits[{j}] has {f.y.size} records and {f.n_draws} draws; fits[0] has {n} and {S}: "
                             "the conditionals must be fitted to the same records with the same number of draws")
    alpha = _checks.real_array(weights, "weights")
    alpha = np.repeat(alpha[:, None], len(fits), axis=1) if alpha.ndim == 1 else alpha
    if alpha.shape != (n, len(fits)):
        raise BadArgument(f"weights must have shape ({n},) or ({n}, {len(fits)}), got {alpha.shape}")
    alpha = np.column_stack([_checks.weights(alpha[:, j], n, f"weights[:, {j}]") for j in range(len(fits))])
    step = max(1, int(max_elements) // n)
    blocks = ([_weighted_terms(f, slice(start, min(start + step, S)), alpha[:, j]) for j, f in enumerate(fits)]
              for start in range(0, S, step))
    return accumulate_bounds(blocks, n, len(fits))


def accumulate_bounds(blocks, n: int, J: int) -> JointBounds:
    """The three record-level bounds of J conditionals, accumulated over blocks of draws.

    Parameters
    ----------
    blocks : iterable of lists of J arrays, each of shape (S_block, n)
        Per block of draws, each conditional's weighted log-likelihood terms alpha_ij f_j.
    n : int
        Records.
    J : int
        Conditionals.

    Returns
    -------
    JointBounds
        Paired (one draw of every conditional), all pairs (every combination of draws) and
        conditional (each alone) bounds, shape (n,), (n,) and (n, J).
    """
    paired = np.zeros(n)
    top = np.full((n, J), -np.inf)     # running max_s alpha f and min_s alpha f per conditional
    bottom = np.full((n, J), np.inf)
    conditional = np.zeros((n, J))
    for terms in blocks:
        with np.errstate(invalid="ignore"):
            np.maximum(paired, np.abs(sum(terms)).max(axis=0), out=paired)
        for j, t in enumerate(terms):
            np.maximum(top[:, j], t.max(axis=0), out=top[:, j])
            np.minimum(bottom[:, j], t.min(axis=0), out=bottom[:, j])
            np.maximum(conditional[:, j], np.abs(t).max(axis=0), out=conditional[:, j])
    # over all combinations the sum ranges from sum_j min_j to sum_j max_j, so its largest abs is at an end
    all_pairs = np.maximum(np.abs(top.sum(axis=1)), np.abs(bottom.sum(axis=1)))
    return JointBounds(paired, all_pairs, conditional)


@dataclass(eq=False)
class JointSynthesis:
    """One joint synthesizer's complete result.

    Attributes
    ----------
    name : str
        Label in tables and figures.
    scheme : str
        A key of :data:`SCHEMES`.
    settings : dict
        c, g and the seed (the seed alone for "unweighted").
    conditionals : tuple of Conditional
        The :class:`Conditional` sequence, in synthesis order.
    weights : ndarray, shape (n, J)
        alpha_ij (equal columns under "unweighted" and "joint").
    parts : dict of str to Synthesis
        variable -> the conditional's :class:`ppmlib.Synthesis` (its fit, its own bounds and Delta_j).
    synthetic : ndarray, shape (m, n, J)
        The m sequentially synthesized datasets.
    bounds : JointBounds
        The by-record bounds (:class:`JointBounds`).
    delta : float
        max(bounds.paired), the joint Delta.
    epsilon : float
        2 delta, per dataset, for the whole record.
    calibration : dict
        Filled by :func:`match_joint` (empty otherwise).
    """
    name: str
    scheme: str
    settings: dict
    conditionals: tuple
    weights: np.ndarray
    parts: dict
    synthetic: np.ndarray
    # the joint account: what one synthetic dataset costs the whole record
    bounds: JointBounds
    delta: float
    epsilon: float
    calibration: dict = field(default_factory=dict)

    @property
    def variables(self) -> tuple:
        return tuple(c.variable for c in self.conditionals)

    @property
    def composed_delta(self) -> float:
        """sum_j Delta_j: the conditionals accounted as separate mechanisms."""
        return float(sum(p.delta for p in self.parts.values()))

    @property
    def composed_epsilon(self) -> float:
        """sum_j 2 Delta_j, sequential composition of the separate accounts (never below ``epsilon``)."""
        return _epsilon(self.composed_delta)

    @property
    def diagnostics(self) -> dict:
        """The worst of the conditional fits' diagnostics (R-hat, ESS, divergences summed)."""
        return combine([p.diagnostics for p in self.parts.values()])

    def synthetic_of(self, variable: str) -> np.ndarray:
        """(m, n) synthetic values of one variable.

        Parameters
        ----------
        variable : str
            One of ``variables``.

        Returns
        -------
        ndarray, shape (m, n)
            A view of ``synthetic``.

        Raises
        ------
        ValueError
            A variable this synthesis does not hold.
        """
        if variable not in self.variables:
            raise BadArgument(f"unknown variable {variable!r}; this synthesis has {list(self.variables)}")
        return self.synthetic[:, :, self.variables.index(variable)]

    def summary(self) -> dict:
        """One row for a table: the joint Delta and epsilon, the per-variable ones and their sum, the weights.

        Returns
        -------
        dict
            synthesizer, joint Delta, epsilon (joint), ``Delta <variable>`` for each variable, epsilon
            (composed), mean weight, min weight, max R-hat, min bulk ESS and divergences.
        """
        d = self.diagnostics
        row = {"synthesizer": self.name, "joint Delta": self.delta, "epsilon (joint)": self.epsilon}
        row.update({f"Delta {v}": p.delta for v, p in self.parts.items()})
        row.update({"epsilon (composed)": self.composed_epsilon, "mean weight": float(self.weights.mean()),
                    "min weight": float(self.weights.min()), "max R-hat": d["max_rhat"],
                    "min bulk ESS": d["min_ess_bulk"], "divergences": d["divergences"]})
        return row


def _conditionals(conditionals, data) -> tuple:
    if not hasattr(data, "columns"):
        raise TypeError(f"data must be a pandas DataFrame with one row per record, got {type(data).__name__}")
    conds = tuple(conditionals)
    if not conds or not all(isinstance(c, Conditional) for c in conds):
        raise TypeError("conditionals must be a non-empty sequence of ppmlib.mechanism.joint.Conditional")
    seen = []
    for c in conds:
        if c.variable in seen:
            raise BadArgument(f"variable {c.variable!r} is synthesized twice")
        missing = [v for v in c.given if v not in seen]
        if missing:
            raise BadArgument(f"{c.variable!r} is given {missing}, which are not earlier in the sequence "
                             f"(before it: {seen or 'none'})")
        stray = sorted(set(c.centres or {}) - set(c.given))
        if stray:
            raise BadArgument(f"the conditional for {c.variable!r} centres {stray}, which it is not given")
        absent = [col for col in (c.variable, *c.predictors) if col not in data.columns]
        if absent:
            raise BadArgument(f"columns {absent} of the conditional for {c.variable!r} are not in the data")
        seen.append(c.variable)
    return conds


def _weights(scheme: str, base, conds: tuple, n: int, c: float, g: float) -> np.ndarray:
    """(n, J) record weights of a scheme; "joint" and "per_variable" need the unweighted ``base``."""
    if scheme not in SCHEMES:
        raise BadArgument(f"unknown scheme {scheme!r}; choose one of {list(SCHEMES)}")
    J = len(conds)
    if scheme == "unweighted":
        return np.ones((n, J))
    if not isinstance(base, JointSynthesis) or base.scheme != "unweighted":
        raise TypeError(f"scheme {scheme!r} needs base=, the unweighted JointSynthesis of the same conditionals")
    if base.conditionals != conds or base.weights.shape[0] != n:
        raise BadArgument(f"base was fitted to {base.weights.shape[0]} records with conditionals for "
                         f"{list(base.variables)}; these are {n} records with conditionals for "
                         f"{[cd.variable for cd in conds]} (give the unweighted synthesizer of the same ones)")
    # lw_weights takes the max over draws of |log-likelihood|; the base's bounds already are those
    # maxima (its weights are 1), so as one-draw "matrices" they give the LW weights without another
    # pass over every draw's log-likelihood (match_joint asks for weights at many c)
    if scheme == "per_variable":
        return np.column_stack([lw_weights(bounds[None, :], c=c, g=g) for bounds in base.bounds.conditional.T])
    return np.repeat(lw_weights(base.bounds.paired[None, :], c=c, g=g)[:, None], J, axis=1)


def joint_synthesizer(conditionals, data: "pd.DataFrame", scheme: str = "unweighted", *, base=None,
                      c: float = 1.0, g: float = 0.0, m: int = 20, sampler: Sampler | None = None, seed: int = 0,
                      name: str | None = None) -> JointSynthesis:
    """Weights, one alpha-weighted fit per conditional, the joint bound, and sequential synthesis.

    Parameters
    ----------
    conditionals : sequence of Conditional
        The factors of the joint model in synthesis order (a variable may be given only earlier ones).
    data : pandas.DataFrame
        One row per record: every conditional's variable (numeric) and predictors (categorical).
    scheme : str
        A key of :data:`SCHEMES`: "unweighted", "joint" or "per_variable".
    base : JointSynthesis, optional
        The unweighted synthesizer of the same conditionals: its bounds set the LW risks ("joint"
        and "per_variable" need it).
    c, g : float
        LW scale and shift: alpha = clip(c (1 - r) + g, 0, 1).
    m : int
        Synthetic datasets, one per joint draw (they cost m epsilon together).
    sampler : Sampler, optional
        NUTS settings of every conditional's fit.
    seed : int
        ``ppmlib.seeds(seed, J + 1)``: one seed per conditional's fit, then the synthesis seed.
    name : str, optional
        Label in tables (default: the scheme).

    Returns
    -------
    JointSynthesis
        weights (n, J), parts (the conditional Synthesis objects), bounds, delta, epsilon
        (joint, whole record), composed_epsilon (per variable, added), synthetic (m, n, J).

    Examples
    --------
    The normal regressions need Stan, so this example is shown, not run (the API page runs the same
    calls on the CE-like sample)::

        conds = [Conditional("log_exp", ("Education",)),
                 Conditional("log_income", ("Education", "Earner"), given=("log_exp",))]
        unweighted = joint_synthesizer(conds, df, seed=1)
        lw = joint_synthesizer(conds, df, "joint", base=unweighted, c=0.7, seed=2)
        lw.epsilon <= lw.composed_epsilon, lw.synthetic.shape      # (True, (20, 994, 2))
    """
    from ppmlib.datasets.design import design_matrix

    conds = _conditionals(conditionals, data)
    sampler = _sampler(sampler)
    m = _checks.integer(m, "m", low=1)
    if m > sampler.total_draws:
        raise BadArgument(f"m = {m} synthetic datasets need at least m draws; {sampler} makes {sampler.total_draws}")
    seed = _checks.seed(seed)
    c, g = _checks.real(c, "c", low=0), _checks.real(g, "g")
    values = {cd.variable: _checks.finite_array(data[cd.variable].to_numpy(), f"data[{cd.variable!r}]", ndim=1)
              for cd in conds}
    n, J = len(data), len(conds)
    alpha = _weights(scheme, base, conds, n, c, g)
    bases = {cd.variable: design_matrix(data, cd.predictors).to_numpy() for cd in conds}
    *fit_seeds, synthesis_seed = seeds(seed, J + 1)
    parts = {cd.variable: synthesizer(cd.model, values[cd.variable], "custom", weights=alpha[:, j],
                                      X=cd.design(bases[cd.variable], values), m=1, sampler=sampler,
                                      seed=fit_seeds[j], name=cd.variable, prior=cd.prior)
             for j, cd in enumerate(conds)}
    bounds = joint_bounds([p.fit for p in parts.values()], alpha)
    delta = float(bounds.paired.max())
    synthetic = synthesize_sequentially({v: p.fit for v, p in parts.items()}, conds, bases, m, synthesis_seed)
    settings = {"c": c, "g": g, "seed": seed} if scheme != "unweighted" else {"seed": seed}
    return JointSynthesis(name or scheme, scheme, settings, conds, alpha, parts, synthetic, bounds, delta,
                          _epsilon(delta))


def synthesize_sequentially(fits: dict, conditionals, bases: dict, m: int, seed) -> np.ndarray:
    """m synthetic datasets, each from one joint draw: variable j given the synthetic earlier ones.

    The m draws are evenly spaced over the fits (as :meth:`ppmlib.Fit.synthesize`), and draw s of
    every conditional is used together.

    Parameters
    ----------
    fits : dict of str to Fit
        Each variable's conditional fit (equal numbers of draws).
    conditionals : sequence of Conditional
        The synthesis order.
    bases : dict of str to ndarray, shape (n, P)
        Each variable's predictor columns (the given variables are appended from the synthetic values).
    m : int
        Datasets, at most the number of draws.
    seed : int or numpy.random.Generator

    Returns
    -------
    ndarray, shape (m, n, J)
    """
    conds = tuple(conditionals)
    chosen = spaced_draws(next(iter(fits.values())).n_draws, m)   # the draws Fit.synthesize would use
    n = next(iter(bases.values())).shape[0]
    rng = np.random.default_rng(seed)
    out = np.empty((len(chosen), n, len(conds)))
    for l, s in enumerate(chosen):
        drawn = {}
        for j, cd in enumerate(conds):
            fit = fits[cd.variable]
            draw = {k: v[s:s + 1] for k, v in fit.draws.items()}
            drawn[cd.variable] = out[l, :, j] = fit.model.predict(draw, cd.design(bases[cd.variable], drawn), n, rng)[0]
    return out


class _Composed:
    """A JointSynthesis seen through its composed Delta (sum_j Delta_j), for :func:`match_delta`."""

    def __init__(self, joint: JointSynthesis):
        self.joint, self.delta, self.calibration = joint, joint.composed_delta, {}


def match_joint(make: Callable[[float], JointSynthesis], target: float, *, on: str = "joint", start: float = 0.5,
                low: float = 0.0, high: float = 1.0, parameter: str = "c", rtol: float = 0.03, max_iter: int = 12,
                progress: bool = True) -> JointSynthesis:
    """:func:`ppmlib.match_delta` for a joint synthesizer: refit until its joint Delta (``on="joint"``) or
    its composed Delta, sum_j Delta_j (``on="composed"``), is within ``rtol`` of ``target``.

    Parameters
    ----------
    make : callable
        The parameter (LW's scale c, say) -> JointSynthesis; the Delta must rise with it. Each call refits.
    target : float
        The Delta to reach.
    on : str
        "joint" or "composed": which Delta is matched.
    start, low, high, parameter, rtol, max_iter, progress
        As for :func:`ppmlib.match_delta`.

    Returns
    -------
    JointSynthesis
        The first result within tolerance, with ``.calibration`` filled (and ``on`` recorded).

    Raises
    ------
    ppmlib.errors.CalibrationFailed
        If ``max_iter`` refits do not get within tolerance.
    """
    if on == "joint":
        return match_delta(make, target, start, low, high, parameter=parameter, rtol=rtol, max_iter=max_iter,
                           progress=progress)
    if on != "composed":
        raise BadArgument(f"on must be 'joint' or 'composed', got {on!r}")
    found = match_delta(lambda x: _Composed(make(x)), target, start, low, high, parameter=parameter, rtol=rtol,
                        max_iter=max_iter, progress=progress)
    found.joint.calibration = {**found.calibration, "on": "composed Delta"}
    return found.joint


# --- utility of the joint release: estimands of a pair of variables ---------------------------------

def pair_statistics(first, second) -> "pd.DataFrame":
    """Joint estimands of two variables in each of m datasets: their correlation and the least-squares
    slope and intercept of ``second`` on ``first``.

    Parameters
    ----------
    first, second : array_like, shape (m, n) or (n,)
        The two variables, dataset by dataset.

    Returns
    -------
    pandas.DataFrame
        m rows; columns "correlation", "slope", "intercept".

    Examples
    --------
    >>> pair_statistics([1.0, 2.0, 3.0, 4.0], [2.0, 4.0, 5.0, 9.0]).round(3)
       correlation  slope  intercept
    0        0.965    2.2       -0.5
    """
    import pandas as pd

    x = np.atleast_2d(_checks.finite_array(first, "first"))
    y = np.atleast_2d(_checks.finite_array(second, "second"))
    if x.shape != y.shape or x.ndim != 2:
        raise BadArgument(f"first and second must have the same shape (m, n) or (n,), got {x.shape} and {y.shape}")
    xc, yc = x - x.mean(axis=1, keepdims=True), y - y.mean(axis=1, keepdims=True)
    sxy, sxx, syy = (xc * yc).sum(axis=1), (xc**2).sum(axis=1), (yc**2).sum(axis=1)
    slope = sxy / sxx
    return pd.DataFrame({"correlation": sxy / np.sqrt(sxx * syy), "slope": slope,
                         "intercept": y.mean(axis=1) - slope * x.mean(axis=1)})


def pair_long_table(first, second, synthetic: dict, B: int = 500, seed=0) -> "pd.DataFrame":
    """:func:`pair_statistics` of the data's bootstrap ("Data", records resampled as pairs) and of each
    synthesizer's datasets, long format like :func:`ppmlib.evaluate.utility.long_table`.

    Parameters
    ----------
    first, second : array_like, shape (n,)
        The confidential variables.
    synthetic : dict of str to (ndarray, ndarray)
        Each synthesizer's pair of (m, n) synthetic arrays.
    B : int
        Bootstrap resamples of the records.
    seed : int

    Returns
    -------
    pandas.DataFrame
        Columns source, statistic ("correlation", "slope", "intercept"), value.
    """
    import pandas as pd

    first = _checks.finite_array(first, "first", ndim=1)
    second = _checks.finite_array(second, "second", ndim=1)
    B = _checks.integer(B, "B", low=1)
    rows = np.random.default_rng(seed).integers(0, first.size, size=(B, first.size))  # resample records
    frames = [pair_statistics(first[rows], second[rows]).assign(source="Data")]
    frames += [pair_statistics(a, b).assign(source=name) for name, (a, b) in synthetic.items()]
    wide = pd.concat(frames, ignore_index=True)
    return wide.melt(id_vars="source", var_name="statistic", value_name="value")
