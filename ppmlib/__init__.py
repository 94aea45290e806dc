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
  the CE-like sample; :func:`design_matrix`: the CE income application's predictors
* :mod:`ppmlib.joint`: several variables synthesized sequentially, with one Lipschitz bound and one
  epsilon for the whole record (:mod:`ppmlib.studies.multivariate`: the book's chapter on it)
* :mod:`ppmlib.lineup`: one description of a study's synthesizers (:func:`ppmlib.lineup.member`,
  :data:`ppmlib.lineup.STANDARD`) and one runner (:func:`ppmlib.lineup.run`) for every study
* :mod:`ppmlib.simulate`: the papers' simulation designs; :mod:`ppmlib.exact`: the conjugate
  Poisson-Gamma pseudo posterior in closed form (and :class:`ppmlib.exact.ConjugateSampler`, its
  exact draws in place of Stan's); :func:`example_fit`: a small shipped fit of stored Stan draws
* :meth:`Fit.to_arviz`: any fit as an ArviZ ``InferenceData`` (ArviZ is optional)
* :mod:`ppmlib.peers`: the synthesizers an agency would pick instead (a perturbed histogram,
  OpenDP's AIM and MST, CART), one interface
* :mod:`ppmlib.audit`: membership attacks and the confidence lower bound on epsilon they prove
* :mod:`ppmlib.parallel`: independent jobs, serially, on local workers or on Dask
* :mod:`ppmlib.studies`: one module per chapter (its lineup, tables, claims and figures), e.g.
  :func:`matched_comparison` and :func:`reweighting_comparison`; :mod:`ppmlib.book`: the book's tooling
  (rerun, execution cache, HTML checks) and :class:`Claims`
* :mod:`ppmlib.synthesize`: your own file in one command or call (``ppmlib.synthesize.synthesize``), with
  its report's tables in :mod:`ppmlib.report` and the analyst's estimands in :mod:`ppmlib.estimands`

``import ppmlib`` loads neither pandas, matplotlib nor a Stan backend: the submodules that need
them are loaded on first use.
"""
from . import diagnostics, example, exact, joint, lineup, parallel, reweighting, simulate
from .backends import BackendUnavailableError, backend
from .book.claims import Claims
from .design import design_matrix
from .disclosure import AttributeRisk, attribute_risk
from .example import example_fit
from .lipschitz import epsilon, kept_draws, lipschitz_bound, near_max_share, record_bounds
from .mechanism import CalibrationError, Synthesis, lw_delta_grid, match_delta, summary_table, synthesizer
from .models import POISSON_PRIOR
from .posterior import Fit, Sampler, fit
from .release import release
from .reweighting import calibrate_lw_epsilon, epsilon_curve, reweight_to_tolerance
from .seeding import seeds
from .weights import cw_weights, isolation_risks, lw_risks, lw_weights, reweight, risk_to_weight, scalar_weights

__all__ = [
    # fitting and the NUTS settings
    "Fit", "fit", "Sampler", "POISSON_PRIOR", "backend", "BackendUnavailableError", "example_fit",
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
    "diagnostics", "example", "exact", "joint", "lineup", "simulate", "parallel", "plots", "utility", "ce_like", "salary_like",
    "audit", "studies", "book", "synthesize", "report", "estimands", "peers",
]
__version__ = "0.1.0"

# Submodules that import pandas or matplotlib when loaded are loaded on first use (PEP 562), so that
# `import ppmlib` stays light: `ppmlib.plots.violins`, `from ppmlib import plots` and
# `import ppmlib.plots` all work as before. A module that imports pandas or matplotlib at its top
# belongs in this set, not in an import above (tests/test_packaging.py checks `import ppmlib`).
_ON_FIRST_USE = {"audit", "ce_like", "plots", "salary_like", "utility", "studies", "book", "synthesize", "report",
                 "estimands", "peers"}
# the two study functions the chapters and README call from the top (their modules load matplotlib)
_STUDY_FUNCTIONS = {"matched_comparison": "studies.vector_weighted", "reweighting_comparison": "studies.reweighting"}
# old module names the asymptotic-DP and CE income chapters import until they move to ppmlib.studies
_MOVED = {"montecarlo": "studies.asymptotic_dp", "ce_income": "studies.ce_income"}


def __getattr__(name: str):
    from importlib import import_module
    if name in _ON_FIRST_USE:
        return import_module(f"{__name__}.{name}")  # the import also sets the attribute
    if name in _STUDY_FUNCTIONS:
        return getattr(import_module(f"{__name__}.{_STUDY_FUNCTIONS[name]}"), name)
    if name in _MOVED:
        return import_module(f"{__name__}.{_MOVED[name]}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | _ON_FIRST_USE | set(_STUDY_FUNCTIONS))
