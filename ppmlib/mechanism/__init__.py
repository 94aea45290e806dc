"""The pseudo posterior mechanism: record weights, Lipschitz bounds, and synthesizers built from them.

- :mod:`~ppmlib.mechanism.weights`: LW, CW and scalar (SW) record weights, re-weighting
- :mod:`~ppmlib.mechanism.bounds`: per-record bounds, the Lipschitz bound Delta and epsilon = 2 Delta
- :mod:`~ppmlib.mechanism.synthesis`: one scheme end to end (:func:`~ppmlib.mechanism.synthesis.synthesizer`)
  and the loops that match Delta
- :mod:`~ppmlib.mechanism.reweighting`: re-weighting to a tolerance, LW calibrated to an epsilon
- :mod:`~ppmlib.mechanism.calibration`: LW calibrated to an epsilon from draws already made (PSIS), refits only to confirm
- :mod:`~ppmlib.mechanism.lineup`: a study's synthesizers described once and run by one runner
- :mod:`~ppmlib.mechanism.joint`: several variables synthesized in sequence under one record-level bound
- :mod:`~ppmlib.mechanism.pairwise`: the marginal and pairwise identification-risk weights (risk-efficient paper)
- :mod:`~ppmlib.mechanism.guarantee`: what an epsilon promises, checked against the exact posterior
- :mod:`~ppmlib.mechanism.survey`: a survey's outcome and sampling weight synthesized together under one bound
- :mod:`~ppmlib.mechanism.censoring`: the strict mechanism (every record's term censored)
- :mod:`~ppmlib.mechanism.ledger`: what a whole release costs (zCDP, (epsilon, delta), basic composition)
"""
from ppmlib._lazy import submodules

__getattr__, __dir__ = submodules(__name__, ("weights", "bounds", "synthesis", "reweighting", "calibration", "lineup",
                                             "joint", "guarantee", "survey", "censoring", "ledger", "pairwise"))
