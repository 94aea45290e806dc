"""ppmlib: the pseudo posterior mechanism for differentially private synthetic microdata.

The thin library behind the ppm-book chapters. Public names:

* :func:`fit` / :class:`Fit`: an alpha-weighted synthesizer fitted with Stan (cmdstanpy or PyStan 3)
* :func:`record_bounds`, :func:`lipschitz_bound`, :func:`epsilon`: Lipschitz bounds from draws
* :func:`lw_weights`, :func:`cw_weights`, :func:`scalar_weights`, :func:`reweight`: record weights
* :func:`synthesizer` / :class:`Synthesis`: one weighting scheme end to end (weights, fit, bounds,
  Delta, epsilon, synthetic data); :func:`match_delta`: refit until Delta matches a target
* :func:`attribute_risk`: attribute-disclosure risk by importance sampling; :mod:`ppmlib.ce_like`:
  the CE-like sample
* :mod:`ppmlib.simulate`: the papers' simulation designs; :mod:`ppmlib.exact`: the conjugate
  Poisson-Gamma pseudo posterior in closed form
* :mod:`ppmlib.audit`: an empirical privacy audit (membership attacks, a confidence lower bound on epsilon)
"""
from . import simulate
from . import exact
from . import ce_like, claims, diagnostics, plots, utility
from . import audit
from .claims import Claims
from .disclosure import AttributeRisk, attribute_risk
from .mechanism import CalibrationError, Synthesis, match_delta, matched_comparison, summary_table, synthesizer
from .lipschitz import epsilon, kept_draws, lipschitz_bound, near_max_share, record_bounds
from .posterior import Fit, fit
from .seeding import seeds
from .backends import BackendUnavailableError, backend
from . import montecarlo  # issue 9: asymptotic DP by Monte Carlo
from . import parallel  # issue 9: map_jobs (serial, local workers or a Dask cluster)
from .weights import cw_weights, isolation_risks, lw_risks, lw_weights, reweight, risk_to_weight, scalar_weights

# re-weighting (Algorithm 1), calibration to a chosen epsilon, release, the salary stand-in (issue 15)
from . import reweighting, salary_like
from .reweighting import calibrate_lw_epsilon, epsilon_curve, reweight_to_tolerance, reweighting_comparison
from .release import release

__all__ = [
    "Fit", "fit", "simulate", "record_bounds", "lipschitz_bound", "epsilon", "kept_draws",
    "lw_weights", "lw_risks", "cw_weights", "isolation_risks", "scalar_weights", "reweight", "risk_to_weight",
    "backend", "BackendUnavailableError",
    "synthesizer", "Synthesis", "match_delta", "matched_comparison", "summary_table", "CalibrationError",
    "near_max_share", "Claims", "claims", "diagnostics", "plots", "utility",
    "attribute_risk", "AttributeRisk", "ce_like", "exact", "seeds",
    "audit",
    "montecarlo",
    "parallel",
]
__all__ += ["reweighting", "salary_like", "reweight_to_tolerance", "calibrate_lw_epsilon", "epsilon_curve",
            "reweighting_comparison", "release"]

# the CE income chapter (issue 10): design matrices, the four synthesizers, truncation, the (c, g) map
from . import ce_income
from .design import design_matrix
__all__ += ["ce_income", "design_matrix"]
__version__ = "0.1.0"
