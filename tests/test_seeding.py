"""ppmlib.seeding: one seed split into k."""
import pytest


def test_seeds_are_reproducible_prefix_stable_and_valid_for_stan():
    from ppmlib import seeds
    a = seeds(2020, 4)
    assert a == seeds(2020, 4)
    assert a[:2] == seeds(2020, 2)
    assert len(set(a)) == 4 and all(0 <= s < 2**31 - 1 for s in a)
    assert seeds(2020, 1) != seeds(2021, 1)
    with pytest.raises(ValueError, match="seed must be >= 0"):
        seeds(-1, 2)
    with pytest.raises(TypeError, match="k must be an integer"):
        seeds(1, 2.0)
