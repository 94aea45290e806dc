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
from . import claims, diagnostics
from .claims import Claims
from .disclosure import AttributeRisk, attribute_risk
from .mechanism import CalibrationError, Synthesis, match_delta, matched_comparison, summary_table, synthesizer
from .lipschitz import epsilon, kept_draws, lipschitz_bound, near_max_share, record_bounds
from .posterior import Fit, fit
from .seeding import seeds
from .models import POISSON_PRIOR  # issue 8: the one default Poisson prior
from .backends import BackendUnavailableError, backend
from . import parallel  # issue 9: map_jobs (serial, local workers or a Dask cluster)
from .weights import cw_weights, isolation_risks, lw_risks, lw_weights, reweight, risk_to_weight, scalar_weights

# re-weighting (Algorithm 1), calibration to a chosen epsilon, release, the salary stand-in (issue 15)
from . import reweighting
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
    "POISSON_PRIOR",
]
__all__ += ["reweighting", "salary_like", "reweight_to_tolerance", "calibrate_lw_epsilon", "epsilon_curve",
            "reweighting_comparison", "release"]
__version__ = "0.1.0"

# Submodules that import pandas or matplotlib when loaded are loaded on first use (PEP 562), so that
# `import ppmlib` stays light: `ppmlib.plots.violins`, `from ppmlib import plots` and
# `import ppmlib.plots` all work as before. A module that imports pandas or matplotlib at its top
# belongs in this set, not in an import above (tests/test_packaging.py checks `import ppmlib`).
_ON_FIRST_USE = {"audit", "ce_like", "montecarlo", "plots", "salary_like", "utility"}


def __getattr__(name: str):
    if name in _ON_FIRST_USE:
        from importlib import import_module
        return import_module(f"{__name__}.{name}")  # the import also sets the attribute
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | _ON_FIRST_USE)

# one object for the NUTS settings; LW's Delta over a (c, g) grid, built on synthesizer (issue 8)
from .posterior import Sampler
from .mechanism import lw_delta_grid
__all__ += ["Sampler", "lw_delta_grid"]
