"""ppmlib: the pseudo posterior mechanism for differentially private synthetic microdata.

The thin library behind the ppm-book chapters (the book's API page maps every module). Public names:

* :func:`fit` / :class:`Fit` / :class:`Sampler`: an alpha-weighted synthesizer fitted with Stan
  (cmdstanpy or PyStan 3), and the NUTS settings every sampling function takes
* :func:`record_bounds`, :func:`lipschitz_bound`, :func:`epsilon`: Lipschitz bounds from draws
* :func:`lw_weights`, :func:`cw_weights`, :func:`scalar_weights`, :func:`reweight`: record weights
* :func:`synthesizer` / :class:`Synthesis`: one weighting scheme end to end (weights, fit, bounds,
  Delta, epsilon, synthetic data); :func:`match_delta`: refit until Delta matches a target
* :func:`reweight_to_tolerance`, :func:`calibrate_lw_epsilon`: re-weighting at equal Delta, LW at a
  chosen epsilon; :func:`release`: the atomic release of synthetic data with its budget
* :func:`attribute_risk`: attribute-disclosure risk by importance sampling; :mod:`ppmlib.ce_like`:
  the CE-like sample; :func:`design_matrix` and :mod:`ppmlib.ce_income`: the CE income application
* :mod:`ppmlib.lineup`: one description of a study's synthesizers (:func:`ppmlib.lineup.member`,
  :data:`ppmlib.lineup.STANDARD`) and one runner (:func:`ppmlib.lineup.run`) for every study
* :mod:`ppmlib.simulate`: the papers' simulation designs; :mod:`ppmlib.exact`: the conjugate
  Poisson-Gamma pseudo posterior in closed form
* :mod:`ppmlib.peers`: the synthesizers an agency would pick instead (a perturbed histogram,
  OpenDP's AIM and MST, CART); :mod:`ppmlib.alternatives`: the mechanism beside them at equal epsilon
* :mod:`ppmlib.audit`: an empirical privacy audit (membership attacks, a confidence lower bound on epsilon)
* :mod:`ppmlib.montecarlo`, :mod:`ppmlib.parallel`: asymptotic DP by Monte Carlo, serially or on Dask

``import ppmlib`` loads neither pandas, matplotlib nor a Stan backend: the submodules that need
them are loaded on first use.
"""
from . import claims, diagnostics, exact, lineup, parallel, reweighting, simulate
from .backends import BackendUnavailableError, backend
from .claims import Claims
from .design import design_matrix
from .disclosure import AttributeRisk, attribute_risk
from .lipschitz import epsilon, kept_draws, lipschitz_bound, near_max_share, record_bounds
from .mechanism import (CalibrationError, Synthesis, lw_delta_grid, match_delta, matched_comparison, summary_table,
                        synthesizer)
from .models import POISSON_PRIOR
from .posterior import Fit, Sampler, fit
from .release import release
from .reweighting import calibrate_lw_epsilon, epsilon_curve, reweight_to_tolerance, reweighting_comparison
from .seeding import seeds
from .weights import cw_weights, isolation_risks, lw_risks, lw_weights, reweight, risk_to_weight, scalar_weights

__all__ = [
    # fitting and the NUTS settings
    "Fit", "fit", "Sampler", "POISSON_PRIOR", "backend", "BackendUnavailableError",
    # bounds and weights
    "record_bounds", "lipschitz_bound", "epsilon", "kept_draws", "near_max_share",
    "lw_weights", "lw_risks", "cw_weights", "isolation_risks", "scalar_weights", "reweight", "risk_to_weight",
    # the mechanism end to end
    "synthesizer", "Synthesis", "match_delta", "matched_comparison", "summary_table", "CalibrationError",
    "lw_delta_grid",
    # re-weighting, calibration, release
    "reweighting", "reweight_to_tolerance", "calibrate_lw_epsilon", "epsilon_curve", "reweighting_comparison",
    "release",
    # disclosure risk, data, designs, claims, seeds
    "attribute_risk", "AttributeRisk", "design_matrix", "seeds", "Claims",
    # submodules
    "claims", "diagnostics", "exact", "lineup", "simulate", "parallel", "plots", "utility", "ce_like", "salary_like",
    "audit", "montecarlo", "ce_income", "peers", "alternatives",
]
__version__ = "0.1.0"

# Submodules that import pandas or matplotlib when loaded are loaded on first use (PEP 562), so that
# `import ppmlib` stays light: `ppmlib.plots.violins`, `from ppmlib import plots` and
# `import ppmlib.plots` all work as before. A module that imports pandas or matplotlib at its top
# belongs in this set, not in an import above (tests/test_packaging.py checks `import ppmlib`).
_ON_FIRST_USE = {"alternatives", "audit", "ce_income", "ce_like", "montecarlo", "peers", "plots", "salary_like",
                 "utility"}


def __getattr__(name: str):
    if name in _ON_FIRST_USE:
        from importlib import import_module
        return import_module(f"{__name__}.{name}")  # the import also sets the attribute
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | _ON_FIRST_USE)
