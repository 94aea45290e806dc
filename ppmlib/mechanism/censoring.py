"""Strict epsilon-DP by censoring (Hu, Williams and Savitsky 2022): every record's term is clipped.

Record i contributes u_i(theta) = clip(alpha_i (f_theta(x_i) - r_i), -epsilon/2, epsilon/2) to the
log posterior instead of alpha_i f_theta(x_i). When alpha_i and r_i depend only on record i and
public constants, each draw from xi_c(theta | x) proportional to xi(theta) exp(sum_i u_i(theta)) is
epsilon-DP for *every* database, against removing or adding one record: the log density ratio
between neighbours is u_j(theta) minus the log of an average of exp(u_j), and both lie in the
window, so it spans at most epsilon. It is also epsilon-bounded-range, which the ledger
(:mod:`ppmlib.mechanism.ledger`) prices as epsilon^2/8-zCDP. The guarantee assumes exact draws;
MCMC draws approximate them.

The centre r_i (ALGORITHMS section 15 leaves it open). Subtracting any r_i leaves the uncensored
posterior unchanged; it decides where censoring binds. Our choice, ``centring="best"``, puts the
window's top at the record's best log-likelihood s_i, its log-density at the parameter that fits
it best (from its own value and public constants only), so r_i = s_i - epsilon / (2 alpha_i):
record i is censored only where alpha_i (s_i - f_theta(x_i)) > epsilon, i.e. where the draw fits it
more than epsilon (weighted) worse than it could be fitted, and never for a draw that fits it well.
``centring="zero"`` is r_i = 0, the paper's literal censoring of the likelihood into
[exp(-epsilon/2), exp(epsilon/2)]: a log-density is rarely within epsilon/2 of 0 (a Poisson
count near 100 has log p about -3.2), so nearly every record is censored and the posterior falls
back to the prior. The chapter measures both (book/strict_privacy.md). ``centring="pilot"`` (with
``at``, a released estimate theta_hat: :mod:`ppmlib.mechanism.pilot`) is r_i = log p(y_i | theta_hat):
the window follows the data, no record is censored at theta_hat, and the pilot's rho_0 is added
to the ledger's; theta_hat is a released DP output, so each draw stays epsilon-DP given it.

s_i by family (``Family.best_log_lik``): Poisson, the saturated
log-likelihood at lambda = y_i; negative binomial, the same Poisson value (its supremum over phi
at mu = y_i for a count); normal and mixture, log Normal(y_i | y_i, sigma_ref) with a public
reference scale (a density is unbounded as its scale falls, so no finite best value exists).

Weights: CM has alpha = 1; WCM takes LW's weights, which come from a fit to all of x, so WCM is
strict *for the weights as given*, as the local mechanism is; :func:`box_weights` makes weights
from the record's own value and a public parameter box, which keep the guarantee with no caveat.
"""
from __future__ import annotations

__all__ = ["CENTRINGS", "Censoring", "censoring", "censored_terms", "censored_share", "box_weights",
           "draw_of_dataset", "with_k_draws"]

import dataclasses

import numpy as np

from ppmlib import _checks
from ppmlib.errors import BadArgument
from ppmlib.inference.posterior import spaced_draws
from ppmlib.mechanism.ledger import check_draws
from ppmlib.models.censoring import CENTRINGS, Censoring, censored_share, censored_terms, censoring


def box_weights(model, y, X, box: dict, c: float, *, reference_scale: float = 1.0) -> np.ndarray:
    """Strict weights: alpha_i = min(1, c / B_i), B_i = max over a public parameter box of abs(f(x_i) - s_i).

    B_i (the family's ``box_loss_bound``) is the record's largest log-likelihood loss from its best
    value s_i over ``box``, parameter ranges stated before seeing the data, so
    alpha_i depends on record i's own value and public constants only, and the censored
    mechanism with these weights is epsilon-DP for every database with no caveat about the
    weights. With c = epsilon and the "best" centring, no record is censored at any parameter
    in the box where no record fits better than its best value s_i (always for the counts; for the
    normal and mixture families when ``reference_scale`` is at most the box's smallest sigma).

    Parameters
    ----------
    model : Family
        The family.
    y, X : arrays
        As the family's checks return them.
    box : dict
        The family's ranges: ``{"lambda": (low, high)}`` (Poisson), ``{"mu": ..., "phi": ...}``
        (negative binomial), ``{"mean": ..., "sigma": ...}`` (normal, mixture).
    c : float
        The weighted loss allowed at the box's worst point, > 0 (epsilon: none censored in the box).
    reference_scale : float
        As for :func:`ppmlib.models.censoring.censoring`.

    Returns
    -------
    ndarray, shape (n,)
        alpha in (0, 1].
    """
    c = _checks.real(c, "c", low=0, low_open=True)
    worst = model.box_loss_bound(y, X, box, reference_scale=reference_scale)
    with np.errstate(divide="ignore"):
        return np.minimum(1.0, np.where(worst > 0, c / np.where(worst > 0, worst, 1.0), 1.0))


def draw_of_dataset(m: int, k: int) -> np.ndarray:
    """Which of k draws each of m datasets uses: dataset j (1..m) uses draw ceil(j k / m) (1..k).

    Parameters
    ----------
    m : int
        Datasets, >= 1.
    k : int
        Draws, 1 <= k <= m (refused otherwise, naming k).

    Returns
    -------
    ndarray of int, shape (m,)
        The draw of each dataset, 0-based.

    Examples
    --------
    >>> draw_of_dataset(5, 2).tolist()
    [0, 0, 1, 1, 1]
    """
    m = _checks.integer(m, "m", low=1)
    k = check_draws(k, m)
    j = np.arange(1, m + 1)
    return -(-(j * k) // m) - 1


def with_k_draws(result, k: int, seed, *, m: int | None = None):
    """A censored release's m datasets remade from k <= m of its fit's draws (the ledger then prices k).

    The k draws are evenly spaced over the fit (``spaced_draws``); dataset j takes draw
    ceil(j k / m), so datasets that share a draw differ only by the synthetic values' randomness:
    post-processing of that draw, free under the guarantee. With k < m the between-dataset spread
    no longer carries the parameter's uncertainty (the combining rules under-cover).

    Parameters
    ----------
    result : ppmlib.mechanism.synthesis.Synthesis
        A censored scheme's result (guarantee "strict" or "strict, weights as given").
    k : int
        Draws, 1 <= k <= m.
    seed : int or numpy.random.Generator
        The synthetic values' randomness.
    m : int, optional
        Datasets (default: as many as ``result`` holds).

    Returns
    -------
    Synthesis
        The same fit and ledger inputs, ``synthetic`` remade and ``draws`` = k.
    """
    if not result.guarantee.startswith("strict"):
        raise BadArgument(f"k draws price a censored (strict) release; {result.name!r} has guarantee "
                          f"{result.guarantee!r}")
    m = result.synthetic.shape[0] if m is None else _checks.integer(m, "m", low=1)
    chosen = spaced_draws(result.fit.n_draws, check_draws(k, m))[draw_of_dataset(m, k)]
    params = {name: v[chosen] for name, v in result.fit.draws.items()}
    synthetic = result.fit.model.predict(params, result.fit.X, result.fit.y.size, np.random.default_rng(seed))
    return dataclasses.replace(result, synthetic=synthetic, k_draws=k)

