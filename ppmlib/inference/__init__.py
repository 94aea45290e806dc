"""Draws from the (pseudo) posterior, and whether to trust them.

- :mod:`~ppmlib.inference.backends`: the two Stan backends (cmdstanpy and PyStan 3), same draws on both
- :mod:`~ppmlib.inference.posterior`: :func:`~ppmlib.inference.posterior.fit`, :class:`~ppmlib.inference.posterior.Fit`
  and the NUTS settings :class:`~ppmlib.inference.posterior.Sampler`
- :mod:`~ppmlib.inference.diagnostics`: R-hat, ESS and divergences, and the gate a release passes
- :mod:`~ppmlib.inference.exact`: the conjugate Poisson-Gamma pseudo posterior in closed form
- :mod:`~ppmlib.inference.parallel`: independent jobs serially, on local workers or on Dask
"""
from ppmlib._lazy import submodules

__getattr__, __dir__ = submodules(__name__, ("backends", "posterior", "diagnostics", "exact", "parallel"))
