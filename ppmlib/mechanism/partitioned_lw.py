"""LW on a partitioned Parquet file, from sums: the unweighted fit, LW's scale, the fit released.

The normal regression's fits need only the alpha-weighted sufficient statistics
(:func:`ppmlib.mechanism.partitioned.sufficient_statistics`); Stan runs on the client, from those
sums, never from a record. :func:`lw` runs the command's lineup (Unweighted, then LW) over the
partitions of a file:

1. the unweighted fit from the unweighted sums;
2. LW's risk range under its draws (one pass over the partitions);
3. LW's scale c: as given, or calibrated to a target epsilon by
   :func:`ppmlib.mechanism.calibration.calibrate_scale`, the loop of the in-memory
   :func:`ppmlib.mechanism.calibration.calibrate_lw`, fed by :func:`ppmlib.mechanism.partitioned.calibration_sums` (the
   PSIS sums of each fit's draws over every partition) and refitting only to confirm;
4. each LW fit from the LW-weighted sums, and its Delta (one pass each).

Seeds are the in-memory lineup's (:func:`ppmlib.mechanism.lineup.run` with the same seed): member
j gets the j-th of ``ppmlib.seeds(seed, 2)``, each fit the first of ``ppmlib.seeds(member, 2)``.
With c given, the sums are the in-memory ones bit for bit, so the draws and Delta are the
in-memory command's (same backend); calibrated, the PSIS sums are added in another order than in
memory (last bits), so the c chosen can differ in its last digits.
"""
from __future__ import annotations

__all__ = ["PartitionedFit", "WrittenParts", "fit_sums", "lw"]

import time
from dataclasses import dataclass, field

import numpy as np

from ppmlib import _checks
from ppmlib.inference.posterior import Fit, Sampler, _sampler
from ppmlib.mechanism import partitioned
from ppmlib.mechanism.calibration import KHAT_MAX, calibrate_scale, predictions
from ppmlib.models.families import family
from ppmlib.seeding import seeds


@dataclass(eq=False)
class PartitionedFit:
    """One synthesizer fitted from the sums of a partitioned file (no record in it).

    Attributes
    ----------
    name : str
        "Unweighted" or "LW".
    fit : Fit
        Its draws and diagnostics (``y``, ``X`` and ``weights`` empty: the fit saw only sums).
    c : float or None
        LW's scale (None for the unweighted fit).
    delta : float
        Delta = max_i alpha_i max_s abs(f_s(x_i)) under its draws.
    calibration : dict, optional
        How c was found (as :func:`ppmlib.mechanism.calibration.calibrate_lw`'s ``.calibration``).
    """
    name: str
    fit: Fit
    c: float | None
    delta: float
    calibration: dict | None = None

    @property
    def epsilon(self) -> float:
        """epsilon = 2 Delta per synthetic dataset."""
        return 2 * self.delta

    @property
    def guarantee(self) -> str:
        """"local": epsilon covers this file's removal neighbours (the pseudo posterior mechanism)."""
        return "local"

    @property
    def diagnostics(self) -> dict:
        """The fit's diagnostics (:attr:`ppmlib.Fit.diagnostics`)."""
        return self.fit.diagnostics


@dataclass(frozen=True)
class WrittenParts:
    """A release kind: a synthesis whose m datasets a cluster's workers wrote, one file per row group
    of the input, so that only their description is held here. ``ppmlib.release.release(parts, folder)``
    writes its manifest beside the files (the datasets are never in this process's memory).

    Attributes
    ----------
    released : PartitionedFit
        The synthesizer released (its ``epsilon`` per dataset, ``guarantee`` "local").
    m, n : int
        Datasets, and records in each.
    files : list of dict
        Each file written: its name, its datasets ("1-m"), its records ("first-last") and SHA-256.
    """
    released: PartitionedFit
    m: int
    n: int
    files: list = field(default_factory=list)

    @property
    def name(self) -> str:
        """The released synthesizer's name."""
        return self.released.name

    @property
    def fit(self) -> Fit:
        """The released synthesizer's fit."""
        return self.released.fit

    @property
    def epsilon(self) -> float:
        """epsilon = 2 Delta per synthetic dataset."""
        return self.released.epsilon

    @property
    def guarantee(self) -> str:
        """"local", the released synthesizer's."""
        return self.released.guarantee

    @property
    def shape(self) -> tuple:
        """(m, n): the shape the datasets would have in memory."""
        return (self.m, self.n)


def fit_sums(sums: dict, n: int, *, sampler: Sampler | None = None, seed: int = 0, prior: dict | None = None) -> Fit:
    """The alpha-weighted normal regression fitted from its sufficient statistics alone.

    Parameters
    ----------
    sums : dict
        ``sum_w``, ``XWX`` (K, K), ``XWy`` (K,), ``yWy``.
    n : int
        The number of records.
    sampler : Sampler, optional
        NUTS settings.
    seed : int
        The fit's seed.
    prior : dict, optional
        Overrides of the normal model's prior.

    Returns
    -------
    Fit
        Draws ``beta`` (S, K) and ``sigma`` (S,); the records are not in it (empty ``y``, ``X``).
    """
    fam, sampler = family("normal"), _sampler(sampler)
    out = sampler.sample(fam, fam.sufficient_data(sums, n, fam.check_prior(prior)), seed)
    K = np.shape(sums["XWy"])[0]
    draws = {k: v for k, v in out.params.items() if k in fam.params}
    return Fit(fam, np.zeros(0), np.zeros((0, K)), np.zeros(0), draws, out.sampler, sampler.chains, out.backend, seed)


def _draws(fit: Fit) -> dict:
    return {"beta": fit.draws["beta"], "sigma": fit.draws["sigma"]}


def lw(parts, design, *, epsilon: float | None = None, c: float = 1.0, g: float = 0.0, tau: float = 0.05,
       c_range: tuple = (0.05, 5.0), sampler: Sampler | None = None, seed: int = 0, prior: dict | None = None,
       client=None, n_jobs: int = 1, khat_max: float = KHAT_MAX, predicted_fits: int = 3, grid: int = 24,
       max_iter: int = 12, progress: bool = False) -> dict:
    """The unweighted and the LW synthesizer of a partitioned file, LW at scale ``c`` or calibrated to ``epsilon``.

    Parameters
    ----------
    parts : list of ppmlib.mechanism.partitioned.Part
        The partitions (:func:`ppmlib.mechanism.partitioned.row_groups`).
    design : ppmlib.mechanism.partitioned.Design
        How each row group becomes y and X.
    epsilon : float, optional
        The target epsilon per dataset (epsilon = 2 Delta within 2 tau); None: LW at ``c``.
    c, g : float
        LW's scale (without ``epsilon``) and shift.
    tau, c_range, khat_max, predicted_fits, grid, max_iter, progress : as for :func:`ppmlib.mechanism.calibration.calibrate_lw`.
    sampler, seed, prior : as for :func:`ppmlib.mechanism.lineup.run`.
    client, n_jobs : where the partitions' jobs run (:func:`ppmlib.inference.parallel.map_jobs`).

    Returns
    -------
    dict
        ``"Unweighted"`` and ``"LW"``, each a :class:`PartitionedFit`; ``"seconds"``, each stage's
        wall time (dict); ``"synthesis_seed"``, the seed of LW's synthetic values; ``"n"``.

    Raises
    ------
    BadArgument
        A target out of reach (with the reachable range).
    CalibrationFailed
        The fallback search did not get within tau.
    """
    sampler = _sampler(sampler)
    g = _checks.real(g, "g")
    n = sum(p.stop - p.start for p in parts)
    unweighted_seed, lw_seed = seeds(seed, 2)
    fit_seed, synthesis_seed = seeds(lw_seed, 2)
    seconds, clock = {}, time.perf_counter()
    jobs = {"client": client, "n_jobs": n_jobs}

    def lap(stage: str) -> None:
        nonlocal clock
        now = time.perf_counter()
        seconds[stage] = seconds.get(stage, 0.0) + now - clock
        clock = now

    plain = fit_sums(partitioned.sufficient_statistics(parts, design, **jobs), n, sampler=sampler,
                     seed=seeds(unweighted_seed, 2)[0], prior=prior)
    lap("unweighted fit")
    risk = partitioned.risk_range(parts, design, (), _draws(plain), **jobs)
    lap("risk range")
    unweighted = PartitionedFit("Unweighted", plain, None, risk[1])   # alpha = 1: Delta is the largest f
    weighted = dict(unweighted=_draws(plain), g=g, risk=risk)
    fits: dict = {}

    def make(scale: float) -> PartitionedFit:
        if scale not in fits:
            sums = partitioned.sufficient_statistics(parts, design, c=scale, **weighted, **jobs)
            made = fit_sums(sums, n, sampler=sampler, seed=fit_seed, prior=prior)
            lap("LW fits")
            delta = partitioned.lw_delta(parts, design, (), _draws(made), c=scale, **weighted, **jobs)
            lap("LW Delta")
            fits[scale] = PartitionedFit("LW", made, scale, delta)
        return fits[scale]

    def predict(proposal, c_grid: np.ndarray):
        own = isinstance(proposal, PartitionedFit)
        sums = partitioned.calibration_sums(parts, design, (), _draws(plain), c_grid, risk=risk, g=g,
                                            c0=proposal.c if own else None,
                                            proposal=_draws(proposal.fit) if own else None, **jobs)
        lap("PSIS predictions")
        return predictions(*sums)

    if epsilon is None:
        released = make(_checks.real(c, "c", low=0))
    else:
        eps = _checks.real(epsilon, "epsilon", low=0, low_open=True)
        low = _checks.real(c_range[0], "c_range[0]", low=0, low_open=True)
        high = _checks.real(c_range[1], "c_range[1]", low=low, low_open=True)
        released = calibrate_scale(make, predict, plain, fits, eps, tau=_checks.real(tau, "tau", low=0, low_open=True),
                                   c_range=(low, high), khat_max=khat_max, predicted_fits=predicted_fits, grid=grid,
                                   max_iter=max_iter, progress=progress)
    return {"Unweighted": unweighted, "LW": released, "seconds": seconds, "synthesis_seed": synthesis_seed, "n": n}
