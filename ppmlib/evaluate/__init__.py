"""What a release is worth and what it risks.

- :mod:`~ppmlib.evaluate.utility`: pMSE, interval overlap and the other utility measures
- :mod:`~ppmlib.evaluate.estimands`: the analyst's estimands on confidential and synthetic data
- :mod:`~ppmlib.evaluate.disclosure`: attribute-disclosure risk and identification risk
- :mod:`~ppmlib.evaluate.audit`: membership attacks and the lower bound on epsilon they prove
- :mod:`~ppmlib.evaluate.survey`: weighted cell tables with design-based standard errors, combined over m datasets
- :mod:`~ppmlib.evaluate.coverage`: do the analyst's combined intervals cover the confidential estimate?
"""
from ppmlib._lazy import submodules

__getattr__, __dir__ = submodules(__name__, ("utility", "estimands", "disclosure", "audit", "survey", "coverage"))
