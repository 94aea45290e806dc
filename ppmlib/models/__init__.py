"""The likelihood families a synthesizer is built on, each with its Stan program in ``stan/``.

:mod:`ppmlib.models.families`: Poisson and negative binomial counts (worked per distinct value),
the normal regression, the finite normal mixture and the binned model of log incomes and wages
(its public bins in :mod:`ppmlib.models.bins`). Each family checks its data,
writes the Stan program's data, evaluates the per-record log-likelihood from draws and predicts new
records from them.
"""
from ppmlib.models.families import (FAMILIES, POISSON_PRIOR, STAN_INT_LIMIT, Binned, Family, Mixture, NegBin, Normal,
                                    Poisson, family, negbin_draw)

__all__ = ["POISSON_PRIOR", "STAN_INT_LIMIT", "FAMILIES", "Family", "Poisson", "NegBin", "Normal", "Mixture", "Binned", "family",
           "negbin_draw", "families"]
