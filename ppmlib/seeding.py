"""One way to split a seed: every chapter and loop that needs several independent streams uses it."""
from __future__ import annotations

__all__ = ["seeds"]

import numpy as np

from ppmlib import _checks

STAN_SEED_LIMIT = 2**31 - 1  # both backends accept seeds below this


def seeds(seed, k: int) -> list[int]:
    """``k`` independent integer seeds derived from one ``seed`` (numpy's SeedSequence).

    The values lie in [0, 2**31 - 1), so each is valid for Stan (either backend) and for
    ``numpy.random.default_rng``. The same (seed, k) always gives the same list, and the first
    j of seeds(seed, k) do not depend on k.

    Parameters
    ----------
    seed : int
        The one seed (>= 0).
    k : int
        How many seeds.

    Returns
    -------
    list of int

    Examples
    --------
    >>> fit_seed, synthesis_seed = seeds(2020, 2)
    >>> fit_seed, synthesis_seed
    (15435262, 457594585)
    >>> seeds(2020, 3)[:2] == [fit_seed, synthesis_seed]
    True
    """
    seed = _checks.seed(seed)
    if seed is None:
        raise TypeError("seed must be a non-negative integer, got None")
    k = _checks.integer(k, "k", low=1)
    return [int(s) % STAN_SEED_LIMIT for s in np.random.SeedSequence(seed).generate_state(k)]
