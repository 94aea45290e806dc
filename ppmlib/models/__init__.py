"""The likelihood families a synthesizer is built on, each with its Stan program in ``stan/``.

:mod:`ppmlib.models.families`: Poisson and negative binomial counts (worked per distinct value),
the normal regression and the finite normal mixture of log incomes. Each family checks its data,
writes the Stan program's data, evaluates the per-record log-likelihood from draws and predicts new
records from them.
"""
from ppmlib.models.families import (FAMILIES, POISSON_PRIOR, STAN_INT_LIMIT, Family, Mixture, NegBin, Normal,
                                    Poisson, family, negbin_draw)

__all__ = ["POISSON_PRIOR", "STAN_INT_LIMIT", "FAMILIES", "Family", "Poisson", "NegBin", "Normal", "Mixture", "family",
           "negbin_draw", "families"]
