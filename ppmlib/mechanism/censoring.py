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
back to the prior. The chapter measures both (book/strict_privacy.md).

s_i by family (``Family.best_log_lik``): Poisson, the saturated
log-likelihood at lambda = y_i; negative binomial, the same Poisson value (its supremum over phi
at mu = y_i for a count); normal and mixture, log Normal(y_i | y_i, sigma_ref) with a public
reference scale (a density is unbounded as its scale falls, so no finite best value exists).

Weights: CM has alpha = 1; WCM takes LW's weights, which come from a fit to all of x, so WCM is
strict *for the weights as given*, as the local mechanism is; :func:`box_weights` makes weights
from the record's own value and a public parameter box, which keep the guarantee with no caveat.
"""
from __future__ import annotations

__all__ = ["CENTRINGS", "Censoring", "censoring", "censored_terms", "censored_share", "box_weights"]

import numpy as np

from ppmlib import _checks
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
