"""ppmlib: the pseudo posterior mechanism for differentially private synthetic microdata.

The library behind ppm-book and the command ``ppm-synthesize``. Its folders follow the mechanism:

- :mod:`ppmlib.models`: the likelihood families (Poisson, negative binomial, normal, mixture)
- :mod:`ppmlib.inference`: Stan fits on either backend, diagnostics, the exact conjugate posterior
- :mod:`ppmlib.mechanism`: record weights, Lipschitz bounds, synthesizers, calibration, lineups
- :mod:`ppmlib.evaluate`: utility, disclosure risk and the privacy audit
- :mod:`ppmlib.baselines`: the synthesizers an agency would pick instead
- :mod:`ppmlib.datasets`: simulation designs, the shipped data, design matrices
- :mod:`ppmlib.release`: the release of synthetic data, its confidential report, and your own file
  in one command; :mod:`ppmlib.errors`: the errors a caller can catch
- :mod:`ppmlib.studies` and :mod:`ppmlib.book`: the book's chapters and tooling (not the public API)

The names below are the public surface: fit a synthesizer, weight its records, bound it, release it.

``import ppmlib`` loads neither pandas, matplotlib nor a Stan backend: the submodules that need
them are loaded on first use.
"""
from . import _moved

_moved.install()  # the old import paths of the flat layout warn and forward to the new ones

from . import errors  # noqa: E402
from .datasets.design import design_matrix  # noqa: E402
from .datasets.example import example_fit  # noqa: E402
from .errors import BackendUnavailable, BadArgument, BudgetExceeded, CalibrationFailed, DataRefused  # noqa: E402
from .evaluate.disclosure import AttributeRisk, attribute_risk  # noqa: E402
from .inference.backends import backend  # noqa: E402
from .inference.posterior import Fit, Sampler, fit  # noqa: E402
from .mechanism.bounds import epsilon, kept_draws, lipschitz_bound, near_max_share, record_bounds  # noqa: E402
from .mechanism.reweighting import calibrate_lw_epsilon, epsilon_curve, reweight_to_tolerance  # noqa: E402
from .mechanism.synthesis import Synthesis, lw_delta_grid, match_delta, summary_table, synthesizer  # noqa: E402
from .mechanism.weights import (cw_weights, isolation_risks, lw_risks, lw_weights, reweight,  # noqa: E402
                                risk_to_weight, scalar_weights)
from .models.families import POISSON_PRIOR  # noqa: E402
from . import release  # noqa: E402  (the package, callable as ppmlib.release.release)
from .seeding import seeds  # noqa: E402

__all__ = [
    # fitting and the NUTS settings
    "Fit", "fit", "Sampler", "POISSON_PRIOR", "backend", "example_fit",
    # bounds and weights
    "record_bounds", "lipschitz_bound", "epsilon", "kept_draws", "near_max_share",
    "lw_weights", "lw_risks", "cw_weights", "isolation_risks", "scalar_weights", "reweight", "risk_to_weight",
    # the mechanism end to end, calibration, release
    "synthesizer", "Synthesis", "match_delta", "summary_table", "lw_delta_grid",
    "reweight_to_tolerance", "calibrate_lw_epsilon", "epsilon_curve", "release",
    # measures, data, seeds
    "attribute_risk", "AttributeRisk", "design_matrix", "seeds",
    # errors
    "errors", "BadArgument", "DataRefused", "BudgetExceeded", "CalibrationFailed", "BackendUnavailable",
    # the concept folders
    "models", "inference", "mechanism", "evaluate", "baselines", "datasets", "plots",
]
__version__ = "0.2.0"

# Subpackages and modules loaded on first use (PEP 562), so that `import ppmlib` stays light:
# `ppmlib.evaluate.utility.pmse`, `from ppmlib import plots` and `import ppmlib.plots` all work.
# A module that imports pandas or matplotlib at its top belongs here, not in an import above
# (tests/test_packaging.py checks `import ppmlib`).
_ON_FIRST_USE = {"models", "inference", "mechanism", "evaluate", "baselines", "datasets", "plots", "studies", "book",
                 "synthesize", "report"}


def __getattr__(name: str):
    from importlib import import_module
    if name in _ON_FIRST_USE:
        return import_module(f"{__name__}.{name}")  # the import also sets the attribute
    return _moved.moved_name(name)  # an old name warns and forwards; anything else: AttributeError


def __dir__() -> list[str]:
    return sorted(set(globals()) | _ON_FIRST_USE)
