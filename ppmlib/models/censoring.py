"""The censoring of a likelihood term (the strict mechanism's window), at the level of the families.

:class:`Censoring` holds a fit's window [-epsilon/2, epsilon/2] and each record's weighted centre;
:func:`censoring` builds it from a family's best log-likelihood (the centring is explained in
:mod:`ppmlib.mechanism.censoring`, which adds the strict weights and states the guarantee); the
families, the fits and the Stan programs add :func:`censored_terms` to the log posterior.
"""
from __future__ import annotations

__all__ = ["CENTRINGS", "Censoring", "censoring", "censored_terms", "censored_share"]

from dataclasses import dataclass

import numpy as np

from ppmlib import _checks
from ppmlib.errors import BadArgument

#: The centrings :func:`censoring` knows: "best" (the window's top at the record's best log-likelihood), "zero",
#: and "pilot" (the window centred on the record's log-likelihood at a released estimate, ``at``).
CENTRINGS = ("best", "zero", "pilot")


@dataclass(frozen=True, eq=False)
class Censoring:
    """The censoring of one fit: the window and each record's weighted centre.

    Attributes
    ----------
    epsilon : float
        The per-draw epsilon; every term is clipped into [-epsilon/2, epsilon/2].
    shifts : ndarray, shape (n,)
        alpha_i r_i, subtracted from alpha_i f_theta(x_i) before clipping.
    centring : str
        How the centres were chosen (one of :data:`CENTRINGS`).
    """
    epsilon: float
    shifts: np.ndarray
    centring: str

    @property
    def bound(self) -> float:
        """epsilon / 2: the half-width of the window."""
        return self.epsilon / 2.0


def censoring(model, y, X, weights, epsilon: float, *, centring: str = "best", reference_scale: float = 1.0,
              at: dict | None = None) -> Censoring:
    """The censoring of the alpha-weighted model at ``epsilon``: window and centres.

    Parameters
    ----------
    model : Family
        The family (``ppmlib.models.families.family(name)``).
    y, X : arrays
        As the family's checks return them (shape (n,) and (n, K) or None).
    weights : ndarray, shape (n,)
        alpha in [0, 1].
    epsilon : float
        Per-draw epsilon, > 0.
    centring : str
        One of :data:`CENTRINGS` (:mod:`ppmlib.mechanism.censoring`).
    reference_scale : float
        The public sigma_ref of the normal and mixture families' best log-likelihood, > 0.
    at : dict, optional
        "pilot" only (and required there): the family's parameters at the released estimate,
        one draw (draw axis first); shift_i = alpha_i log p(y_i | at), so u_i = 0 at ``at``.

    Returns
    -------
    Censoring

    Raises
    ------
    ValueError
        epsilon <= 0 or not finite, an unknown centring, a reference scale <= 0, "pilot" without
        ``at`` (or ``at`` with another centring).
    """
    epsilon = _checks.real(epsilon, "epsilon", low=0, low_open=True)
    if centring not in CENTRINGS:
        raise BadArgument(f"centring must be one of {CENTRINGS}, got {centring!r}")
    if (centring == "pilot") != (at is not None):
        raise BadArgument("centring='pilot' centres the window on a released estimate: give it as at= "
                          "(and give at= with centring='pilot' only)")
    weights = _checks.weights(weights, np.shape(y)[0])
    if centring == "pilot":
        return Censoring(epsilon, weights * np.asarray(model.log_lik(at, y, X))[0], centring)
    if centring == "zero":
        return Censoring(epsilon, np.zeros(weights.size), centring)
    best = model.best_log_lik(y, X, reference_scale=reference_scale)
    return Censoring(epsilon, weights * best - epsilon / 2.0, centring)


def censored_terms(log_lik, weights, cens: Censoring) -> np.ndarray:
    """u_i(theta_s) = clip(alpha_i f_s(x_i) - shift_i, -epsilon/2, epsilon/2), shape (S, n).

    Parameters
    ----------
    log_lik : array_like, shape (S, n)
        The unweighted per-record log-likelihood of S draws.
    weights : array_like, shape (n,)
        alpha.
    cens : Censoring
        The window and shifts.

    Returns
    -------
    ndarray, shape (S, n)
    """
    raw = np.asarray(weights) * np.asarray(log_lik) - cens.shifts
    return np.clip(raw, -cens.bound, cens.bound)


def censored_share(log_lik, weights, cens: Censoring) -> float:
    """The share of records whose term is censored, averaged over the draws.

    Parameters
    ----------
    log_lik : array_like, shape (S, n)
        The unweighted per-record log-likelihood of S draws (of the censored fit).
    weights : array_like, shape (n,)
        alpha.
    cens : Censoring
        The window and shifts.

    Returns
    -------
    float
        mean over s and i of 1{abs(alpha_i f_s(x_i) - shift_i) > epsilon/2}, in [0, 1].
    """
    raw = np.asarray(weights) * np.asarray(log_lik) - cens.shifts
    return float((np.abs(raw) > cens.bound).mean())
