"""The privacy ledger: what a whole release costs, priced as the (epsilon, delta) peers price theirs.

One synthetic dataset comes from one posterior draw. When every record's term in the (pseudo)
log posterior spans at most epsilon (the censored mechanism: each term in [-epsilon/2, epsilon/2];
the local mechanism: each term in [-Delta, Delta] with 2 Delta = epsilon, for this database only),
the draw is epsilon-DP and epsilon-bounded-range (Durfee and Rogers 2019), hence
epsilon^2/8-zCDP (Cesar and Rogers 2021). m draws compose to rho = m epsilon^2 / 8, which converts
to (epsilon_total, delta)-DP with the conversion OpenDP uses for AIM and MST (Canonne, Kamath and
Steinke 2020: the smallest epsilon whose delta(epsilon) is at most delta). Basic composition,
(m epsilon, 0)-DP, holds as well; the release is covered by whichever is smaller.

OpenDP is not imported here: the conversion is implemented below and the tests compare it with
OpenDP's own ``make_zCDP_to_approxDP`` to 1e-9.
"""
from __future__ import annotations

__all__ = ["SCOPES", "NOT_COVERED", "Ledger", "NoisyReleaseLedger", "bounded_range_rho", "cdp_delta", "cdp_epsilon", "simple_cdp_epsilon", "ledger",
           "of_release", "solve_per_dataset_epsilon", "rho_for_total", "check_draws"]

import math
from dataclasses import dataclass

from ppmlib import _checks
from ppmlib.errors import BadArgument

#: The guarantee word -> whom the per-dataset epsilon covers, as every statement words it.
SCOPES = {
    "strict": "every database (removal and addition of one record)",
    "strict, weights as given": "every database (removal and addition of one record), with the record weights "
                                "held as given: they were computed from this database, which the guarantee does not cover",
    "local": "this database only (removal of one of its records; weights and bound computed from it)",
}


def bounded_range_rho(epsilon: float) -> float:
    """rho of one epsilon-bounded-range draw: epsilon^2 / 8 (Cesar and Rogers 2021).

    Parameters
    ----------
    epsilon : float
        The span of the privacy loss over outputs, >= 0.

    Returns
    -------
    float
        The zCDP parameter rho.
    """
    epsilon = _checks.real(epsilon, "epsilon", low=0)
    return epsilon * epsilon / 8.0


def cdp_delta(rho: float, epsilon: float) -> float:
    """delta(epsilon) of a rho-zCDP mechanism (Canonne, Kamath and Steinke 2020, Proposition 7).

    delta = min over a > 1 of exp((a - 1)(a rho - epsilon) + a log(1 - 1/a)) / (a - 1), capped at
    1. The exponent is convex in a on the bracket searched, so the minimiser is where its
    derivative (2a - 1) rho - epsilon + log(1 - 1/a) changes sign; it is found by bisection over
    [1.01, (epsilon + 1) / (2 rho) + 2] down to adjacent floats (the bracket OpenDP searches).

    Parameters
    ----------
    rho : float
        zCDP parameter, >= 0.
    epsilon : float
        >= 0.

    Returns
    -------
    float
        delta in [0, 1].
    """
    rho = _checks.real(rho, "rho", low=0)
    epsilon = _checks.real(epsilon, "epsilon", low=0)
    if rho == 0 or math.isinf(epsilon):
        return 0.0
    if math.isinf(rho):
        return 1.0
    low, high = 1.01, (epsilon + 1.0) / (2.0 * rho) + 2.0
    while True:
        mid = low + (high - low) / 2.0
        if mid in (low, high):
            break
        if (2.0 * mid - 1.0) * rho - epsilon + math.log1p(-1.0 / mid) < 0:
            low = mid
        else:
            high = mid
    a = high
    exponent = (a - 1.0) * (a * rho - epsilon) + a * math.log1p(-1.0 / a)
    if exponent > 700.0:        # exp() would overflow; a - 1 < 1e300 here, so delta is capped at 1 anyway
        return 1.0
    return min(1.0, math.exp(exponent) / (a - 1.0))


def cdp_epsilon(rho: float, delta: float) -> float:
    """The smallest epsilon with :func:`cdp_delta` (rho, epsilon) <= delta: rho-zCDP as (epsilon, delta)-DP.

    Bisection on epsilon down to adjacent floats, from the bracket [0, 2] doubled until it holds.

    Parameters
    ----------
    rho : float
        zCDP parameter, >= 0.
    delta : float
        In (0, 1].

    Returns
    -------
    float
        epsilon_total.
    """
    rho = _checks.real(rho, "rho", low=0)
    delta = _checks.real(delta, "delta", low=0, high=1, low_open=True)
    if delta == 1.0 or rho == 0:
        return 0.0
    low, high = 0.0, 2.0
    while cdp_delta(rho, high) > delta:
        low, high = high, 2.0 * high
    while True:
        mid = low + (high - low) / 2.0
        if mid in (low, high):
            return high
        if cdp_delta(rho, mid) > delta:
            low = mid
        else:
            high = mid


def simple_cdp_epsilon(rho: float, delta: float) -> float:
    """The simpler, looser conversion rho + 2 sqrt(rho log(1/delta)) (Bun and Steinke 2016).

    Parameters
    ----------
    rho : float
        >= 0.
    delta : float
        In (0, 1).

    Returns
    -------
    float
    """
    rho = _checks.real(rho, "rho", low=0)
    delta = _checks.real(delta, "delta", low=0, high=1, low_open=True, high_open=True)
    return rho + 2.0 * math.sqrt(rho * math.log(1.0 / delta))


#: The guarantee word -> what its numbers leave out.
NOT_COVERED = {
    "strict": "the release's size n; MCMC draws only approximate the exact censored posterior (their chains "
              "start at the unweighted fit's posterior mean)",
    "strict, weights as given": "how the weights were computed from the data; the release's size n; MCMC draws "
                                "only approximate the exact censored posterior (their chains start at the "
                                "unweighted fit's posterior mean)",
    "local": "any other database; adding a record; the weights, the bound Delta and any tuning computed from the "
             "data; the release's size n",
}


@dataclass(frozen=True)
class Ledger:
    """What a release of m synthetic datasets costs, and whom each number covers.

    Attributes
    ----------
    guarantee : str
        "strict" (every database), "strict, weights as given" or "local" (this database only): a
        key of :data:`SCOPES`.
    epsilon : float
        Per dataset (one draw): epsilon-DP and epsilon-bounded-range.
    m : int
        Datasets released.
    delta : float
        The delta at which rho is converted.
    draws : int, optional
        k, the posterior draws the m datasets come from (1 <= k <= m; dataset j uses draw
        ceil(j k / m)): the extra datasets are post-processing, so the release costs k draws.
        None: one draw per dataset (k = m).
    pilot_rho : float
        rho_0 of a censored release's pilot (:mod:`ppmlib.mechanism.pilot`: Gaussian noise, zCDP
        only), added to the draws' rho; 0: no pilot. With a pilot there is no pure total.
    pilot : str, optional
        The pilot in one line (:meth:`ppmlib.mechanism.pilot.Pilot.describe`), for the statement.
    """
    guarantee: str
    epsilon: float
    m: int
    delta: float
    draws: int | None = None
    pilot_rho: float = 0.0
    pilot: str | None = None

    @property
    def k(self) -> int:
        """The draws priced: ``draws``, or m."""
        return self.m if self.draws is None else self.draws

    @property
    def scope(self) -> str:
        """Whom every number of this ledger covers."""
        return SCOPES[self.guarantee]

    @property
    def basic_total(self) -> float:
        """k epsilon: the release is (k epsilon, 0)-DP by basic composition (k = m unless fewer draws);
        infinite with a pilot (its Gaussian noise has no pure epsilon)."""
        return math.inf if self.pilot_rho > 0 else self.k * self.epsilon

    @property
    def rho(self) -> float:
        """rho_0 + k epsilon^2 / 8: the release's zCDP parameter (k = m unless fewer draws; rho_0 the pilot's)."""
        return self.pilot_rho + self.k * bounded_range_rho(self.epsilon)

    @property
    def zcdp_total(self) -> float:
        """epsilon_total at ``delta`` from rho (OpenDP's conversion)."""
        return cdp_epsilon(self.rho, self.delta)

    @property
    def total(self) -> tuple[float, float]:
        """The release's (epsilon, delta): the smaller of the two totals (both hold)."""
        return (self.basic_total, 0.0) if self.basic_total <= self.zcdp_total else (self.zcdp_total, self.delta)

    def statement(self) -> list[str]:
        """The ledger in words, one line per number; the command prints, releases and reports these lines.

        Returns
        -------
        list of str
        """
        eps, dlt = self.total
        fewer = [] if self.draws is None else [
            f"the m = {self.m} datasets come from k = {self.k} posterior draws (dataset j from draw ceil(j k / m)); "
            f"the extra datasets are post-processing, so k draws are priced"]
        draws = 'm' if self.draws is None else 'k'
        return [
            f"guarantee: {self.guarantee}; every number below holds for {self.scope}",
            *fewer,
            f"not covered: {self._not_covered}",
            *self._pilot_lines(),
            f"per dataset: epsilon = {self.epsilon:.4g} (epsilon-DP and epsilon-bounded-range, so "
            f"rho = epsilon^2/8 = {bounded_range_rho(self.epsilon):.4g})",
            *self._local_lines(),
            *([] if self.pilot_rho > 0 else [f"basic composition of {self._priced}: ({self.basic_total:.4g}, 0)-DP"]),
            f"zCDP composition: rho = {'rho_0 + ' if self.pilot_rho > 0 else ''}{draws} epsilon^2/8 = {self.rho:.4g}, "
            f"i.e. ({self.zcdp_total:.4g}, {self.delta:.3g})-DP",
            f"the release as a whole: ({eps:.4g}, {dlt:.3g})-DP for {self.scope}",
        ]

    @property
    def _priced(self) -> str:
        return f"m = {self.m} datasets" if self.draws is None else f"k = {self.k} draws"

    @property
    def _not_covered(self) -> str:
        text = NOT_COVERED[self.guarantee]
        if self.pilot_rho > 0:
            text = text.replace("the unweighted fit's posterior mean", "the pilot's estimate")
        return text

    def _pilot_lines(self) -> list[str]:
        """The pilot's cost and share, and what it does not cover (none without a pilot)."""
        if self.pilot_rho <= 0:
            return []
        return [f"{self.pilot or 'pilot'}: rho_0 = {self.pilot_rho:.4g} of the release's rho = {self.rho:.4g} "
                f"(share {self.pilot_rho / self.rho:.3g}), for every database; it does not cover the keys' cell "
                f"counts (released as they are) nor the public bounds; its noise is a seeded numpy draw at the "
                f"Gaussian mechanism's scale (not floating-point hardened); each draw is epsilon-DP given the pilot"]

    def _local_lines(self) -> list[str]:
        """The local guarantee's own numbers: epsilon = 2 Delta, and the replace-one cost."""
        if self.guarantee != "local":
            return []
        return [f"per dataset, epsilon = 2 Delta, Delta = {self.epsilon / 2:.4g} being the largest record bound "
                f"of this database; against replace-one neighbours (one record changed) each dataset costs "
                f"4 Delta = {2 * self.epsilon:.4g}"]

    def to_dict(self) -> dict:
        """The ledger's numbers and scope, for the release manifest (JSON-ready).

        Returns
        -------
        dict
        """
        eps, dlt = self.total
        pilot = {"pilot_rho": self.pilot_rho} if self.pilot_rho > 0 else {}     # only a release with a pilot has one
        return {"guarantee": self.guarantee, "covers": self.scope, "epsilon_per_dataset": self.epsilon, "m": self.m,
                "k_draws": self.k, **pilot,
                "basic_composition_epsilon": None if math.isinf(self.basic_total) else self.basic_total,
                "rho_zcdp": self.rho, "delta": self.delta,
                "zcdp_epsilon_total": self.zcdp_total, "release_epsilon": eps, "release_delta": dlt,
                "statement": self.statement()}


def ledger(epsilon: float, m: int, *, delta: float = 1e-6, guarantee: str = "strict", draws: int | None = None,
           pilot_rho: float = 0.0, pilot: str | None = None) -> Ledger:
    """The ledger of m datasets at ``epsilon`` each.

    Parameters
    ----------
    epsilon : float
        Per-dataset epsilon, > 0.
    m : int
        Datasets released, >= 1.
    delta : float
        In (0, 1): the delta of the zCDP conversion.
    guarantee : str
        A key of :data:`SCOPES`.
    draws : int, optional
        k posterior draws for the m datasets, 1 <= k <= m (None: k = m).
    pilot_rho, pilot : float, str
        A censored release's pilot: its rho_0 (>= 0; only under a strict guarantee) and its description.

    Returns
    -------
    Ledger

    Raises
    ------
    ValueError
        A value out of range or an unknown guarantee.

    Examples
    --------
    >>> book = ledger(1.0, 20, delta=1e-6)
    >>> book.basic_total, book.rho
    (20.0, 2.5)
    """
    if guarantee not in SCOPES:
        raise BadArgument(f"guarantee must be one of {sorted(SCOPES)}, got {guarantee!r}")
    epsilon = _checks.real(epsilon, "epsilon", low=0, low_open=True)
    m = _checks.integer(m, "m", low=1)
    delta = _checks.real(delta, "delta", low=0, high=1, low_open=True, high_open=True)
    if not math.isfinite(m * bounded_range_rho(epsilon)):
        raise BadArgument(f"epsilon={epsilon:g} per dataset is too large to state a guarantee for m={m} datasets "
                          "(rho = m epsilon^2 / 8 is not a finite number); give a smaller epsilon")
    if draws is not None:
        draws = check_draws(draws, m)
    pilot_rho = _checks.real(pilot_rho, "pilot_rho", low=0)
    if pilot_rho > 0 and guarantee == "local":
        raise BadArgument("a pilot centres a censored (strict) release's window; the local guarantee has none")
    return Ledger(guarantee, epsilon, m, delta, draws, pilot_rho, pilot)


def check_draws(k: int, m: int) -> int:
    """k, the posterior draws behind m datasets, refused unless 1 <= k <= m (the message names k).

    Parameters
    ----------
    k, m : int

    Returns
    -------
    int
    """
    k = _checks.integer(k, "k (draws)")
    if not 1 <= k <= m:
        raise BadArgument(f"k (draws) must lie in [1, m = {m}]: m datasets come from k <= m posterior draws, got {k}")
    return k


@dataclass(frozen=True)
class NoisyReleaseLedger:
    """What a release of m datasets drawn from one noisy release costs (noisy sufficient statistics,
    :mod:`ppmlib.mechanism.nss`): the noisy release's privacy, whatever m and k are.

    Attributes
    ----------
    rho : float
        The noisy release's zCDP parameter (Laplace noise: epsilon^2 / 2).
    m : int
        Datasets released.
    delta : float
        The delta of the zCDP conversion (0 for pure epsilon-DP).
    released : str
        What was released, in one line (public values only).
    pure_epsilon : float, optional
        Laplace noise: the release is (pure_epsilon, 0)-DP.
    draws : int, optional
        k, the posterior draws behind the m datasets (None: m).
    hardened : bool
        The noise came from OpenDP's sampler (else a seeded numpy draw at OpenDP's scale).
    guarantee : str
        "strict".
    mean_shape : bool
        Every dataset comes from the posterior mean (the bins scheme's ``shape="mean"``): no k.
    bounds_epsilon : float
        The pure epsilon spent on choosing the public bins' range from the data
        (:func:`ppmlib.mechanism.nss.private_bounds`; 0 with public bounds). It composes with the
        noisy release: epsilons add (Laplace), or epsilon^2 / 2 adds to rho (Gaussian).
    bounds_share : float, optional
        The share of the release's budget that is.
    """
    rho: float
    m: int
    delta: float
    released: str
    pure_epsilon: float | None = None
    draws: int | None = None
    hardened: bool = False
    guarantee: str = "strict"
    mean_shape: bool = False
    bounds_epsilon: float = 0.0
    bounds_share: float | None = None

    @property
    def k(self) -> int:
        """The posterior draws behind the m datasets: ``draws``, or m."""
        return self.m if self.draws is None else self.draws

    @property
    def scope(self) -> str:
        """Whom every number covers."""
        return SCOPES["strict"]

    @property
    def total_rho(self) -> float:
        """The whole release's zCDP parameter: the noisy release's rho plus the bounds' epsilon^2 / 2."""
        return self.rho + self.bounds_epsilon ** 2 / 2

    @property
    def total(self) -> tuple[float, float]:
        """The release's (epsilon, delta): pure for Laplace noise (the counts' epsilon plus the
        bounds'), else from the total rho at delta."""
        if self.pure_epsilon is not None:
            return self.pure_epsilon + self.bounds_epsilon, 0.0
        return cdp_epsilon(self.total_rho, self.delta), self.delta

    @property
    def not_covered(self) -> str:
        """What the guarantee leaves out."""
        return ("the keys and the cell counts (released as they are), the release's size n; the noise is "
                + ("OpenDP's sampler (not seeded)" if self.hardened else
                   "a seeded numpy draw at OpenDP's scale, not floating-point hardened"))

    def statement(self) -> list[str]:
        """The ledger in words, one line per number.

        Returns
        -------
        list of str
        """
        eps, dlt = self.total
        whole = (f"({eps:.4g}, 0)-DP (pure epsilon-DP, Laplace noise)" if self.pure_epsilon is not None else
                 f"rho = {self.total_rho:.4g}-zCDP, i.e. ({eps:.4g}, {dlt:.3g})-DP")
        if self.bounds_epsilon:
            whole += (f": the counts' {self.pure_epsilon:.4g} plus the bounds' {self.bounds_epsilon:.4g} (share "
                      f"{self.bounds_share:g})" if self.pure_epsilon is not None else
                      f": the counts' rho {self.rho:.4g} plus the bounds' {self.bounds_epsilon ** 2 / 2:.4g} "
                      f"(share {self.bounds_share:g})")
        return [
            f"guarantee: strict; every number below holds for {self.scope}",
            self.released,
            (f"the m = {self.m} datasets all come from the posterior mean shape given the noisy release (no k): all "
             "post-processing of it, so m does not change the cost" if self.mean_shape else
             f"the m = {self.m} datasets come from k = {self.k} posterior draws given the noisy release: all "
             "post-processing of it, so neither m nor k changes the cost"),
            f"not covered: {self.not_covered}",
            f"the release as a whole: {whole} for {self.scope}",
        ]

    def to_dict(self) -> dict:
        """The ledger's numbers and scope, for the release manifest (JSON-ready; the keys of
        :meth:`Ledger.to_dict`, None where a number has no meaning here).

        Returns
        -------
        dict
        """
        eps, dlt = self.total
        return {"guarantee": self.guarantee, "covers": self.scope, "epsilon_per_dataset": None, "m": self.m,
                "k_draws": "mean shape" if self.mean_shape else self.k,
                "basic_composition_epsilon": None if self.pure_epsilon is None else eps, "rho_zcdp": self.total_rho,
                "delta": self.delta, "zcdp_epsilon_total": None if self.pure_epsilon is not None else eps,
                "release_epsilon": eps, "release_delta": dlt, "bounds_share": self.bounds_share,
                "bounds_epsilon": self.bounds_epsilon, "statement": self.statement()}


def of_release(synthesis, delta: float = 1e-6, *, m: int | None = None) -> "Ledger | NoisyReleaseLedger":
    """The ledger of a released synthesis: the one privacy statement its manifest, the command's
    summary and its report all render.

    A release of noisy sufficient statistics (:class:`ppmlib.mechanism.nss.NSSRelease`: it holds
    ``statistics``, the noisy release, and its ``rho``) gets a :class:`NoisyReleaseLedger`; its own
    delta is used (``delta`` is ignored).

    Parameters
    ----------
    synthesis : Synthesis or NSSRelease
        With ``epsilon`` (per dataset), ``synthetic`` (shape (m, n) or (m, n, J)) and ``guarantee``
        (a key of :data:`SCOPES`; "local" when absent, the pseudo posterior mechanism's).
    delta : float
        In (0, 1): the delta of the zCDP conversion.
    m : int, optional
        Datasets released (default: ``synthetic``'s first axis; given where the synthetic values are
        not held, as for a release written by a cluster's workers).

    Returns
    -------
    Ledger

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> import numpy as np
    >>> of_release(SimpleNamespace(epsilon=2.0, synthetic=np.zeros((5, 3)), guarantee="strict")).basic_total
    10.0
    """
    m = int(synthesis.synthetic.shape[0]) if m is None else m
    statistics = getattr(synthesis, "statistics", None)
    if statistics is not None:
        pure = getattr(statistics, "mechanism", "gaussian") == "laplace"
        bounds = getattr(synthesis, "bounds", None)
        return NoisyReleaseLedger(float(synthesis.rho), m, 0.0 if pure else float(synthesis.delta),
                                  statistics.describe() + ("" if bounds is None else "; " + bounds.describe()),
                                  float(statistics.epsilon) if pure else None,
                                  getattr(synthesis, "k_draws", None), statistics.noise == "opendp",
                                  mean_shape=getattr(synthesis, "shape", "draws") == "mean",
                                  bounds_epsilon=0.0 if bounds is None else float(bounds.epsilon),
                                  bounds_share=None if bounds is None else float(bounds.share))
    pilot = getattr(synthesis, "pilot", None)
    return ledger(float(synthesis.epsilon), m, delta=delta, guarantee=getattr(synthesis, "guarantee", "local"),
                  draws=getattr(synthesis, "k_draws", None), pilot_rho=0.0 if pilot is None else pilot.rho,
                  pilot=None if pilot is None else pilot.describe())


def solve_per_dataset_epsilon(total_epsilon: float, delta: float, m: int) -> float:
    """The largest per-dataset epsilon whose release of m datasets is (total_epsilon, delta)-DP.

    Both totals of :class:`Ledger` increase with epsilon and either one suffices, so the answer is
    the larger of total_epsilon / m (basic composition) and the epsilon whose zCDP total at delta
    equals total_epsilon (bisection on rho, then epsilon = sqrt(8 rho / m)).

    Parameters
    ----------
    total_epsilon : float
        The release's epsilon, > 0.
    delta : float
        In (0, 1).
    m : int
        Datasets, >= 1.

    Returns
    -------
    float

    Examples
    --------
    >>> eps = solve_per_dataset_epsilon(10.0, 1e-6, 20)
    >>> round(ledger(eps, 20, delta=1e-6).total[0], 9)
    10.0
    """
    m = _checks.integer(m, "m", low=1)
    return max(total_epsilon / m, math.sqrt(8.0 * rho_for_total(total_epsilon, delta) / m))


def rho_for_total(total_epsilon: float, delta: float) -> float:
    """The largest rho whose (epsilon, delta) by :func:`cdp_epsilon` is at most total_epsilon.

    Bisection on rho down to adjacent floats, from the bracket [0, 1] doubled until it holds.

    Parameters
    ----------
    total_epsilon : float
        The release's epsilon, > 0.
    delta : float
        In (0, 1).

    Returns
    -------
    float

    Examples
    --------
    >>> round(cdp_epsilon(rho_for_total(5.0, 1e-6), 1e-6), 9)
    5.0
    """
    total_epsilon = _checks.real(total_epsilon, "total_epsilon", low=0, low_open=True)
    delta = _checks.real(delta, "delta", low=0, high=1, low_open=True, high_open=True)
    low, high = 0.0, 1.0
    while cdp_epsilon(high, delta) < total_epsilon:
        low, high = high, 2.0 * high
    while True:
        mid = low + (high - low) / 2.0
        if mid in (low, high):
            return low
        if cdp_epsilon(mid, delta) <= total_epsilon:
            low = mid
        else:
            high = mid
