"""ppmlib.datasets.simulate: the papers' simulation designs."""
import numpy as np

import ppmlib


def test_simulate_designs_are_seeded_and_have_the_right_moments():
    a = ppmlib.datasets.simulate.poisson(20000, 100, seed=5)
    assert np.array_equal(a, ppmlib.datasets.simulate.poisson(20000, 100, seed=5))
    assert abs(a.mean() - 100) < 0.5 and abs(a.var() - 100) < 5
    b = ppmlib.datasets.simulate.nb_mixture(40000, [100, 100], [5, 20], [0.2, 0.8], seed=5)
    # mixture of equal means: mean 100, variance 100 + 100^2 (0.2/5 + 0.8/20) = 900
    assert abs(b.mean() - 100) < 1.0
    assert abs(b.var() - 900) < 45
