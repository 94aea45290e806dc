"""k draws for m datasets (ALGORITHMS section 18): dataset j uses draw ceil(j k / m), the ledger prices k."""
import dataclasses

import numpy as np
import pytest

import ppmlib
from ppmlib.errors import BadArgument
from ppmlib.mechanism.censoring import draw_of_dataset, with_k_draws
from ppmlib.mechanism.ledger import bounded_range_rho, ledger


def test_dataset_j_uses_draw_ceil_jk_over_m():
    assert draw_of_dataset(5, 2).tolist() == [0, 0, 1, 1, 1]
    assert draw_of_dataset(6, 3).tolist() == [0, 0, 1, 1, 2, 2]
    assert draw_of_dataset(4, 4).tolist() == [0, 1, 2, 3]
    assert draw_of_dataset(7, 1).tolist() == [0] * 7


@pytest.mark.parametrize("k", [0, -1, 6])
def test_k_outside_1_m_is_refused_naming_k(k):
    with pytest.raises(BadArgument, match=r"k \(draws\)"):
        draw_of_dataset(5, k)
    with pytest.raises(BadArgument, match=r"k \(draws\)"):
        ledger(1.0, 5, draws=k)


def test_the_ledger_prices_k_draws():
    book = ledger(1.5, 10, delta=1e-6, draws=3)
    assert book.rho == pytest.approx(3 * bounded_range_rho(1.5))
    assert book.basic_total == pytest.approx(4.5)
    assert book.total[0] < ledger(1.5, 10, delta=1e-6).total[0]
    assert any("k = 3 posterior draws" in line for line in book.statement())
    assert ledger(1.5, 10, delta=1e-6, draws=10).rho == ledger(1.5, 10, delta=1e-6).rho


def _strict_with_distinct_draws():
    """A strict-labelled Poisson release whose draws are lambda = 10, 20, ..., so each dataset shows its draw."""
    y = ppmlib.datasets.simulate.poisson(200, 50, seed=1)
    exact = ppmlib.inference.exact.ConjugateSampler(chains=1, draws=8, warmup=1)
    result = ppmlib.synthesizer("poisson", y, sampler=exact, m=4, seed=2)
    fit = dataclasses.replace(result.fit, draws={"lambda": 10.0 * np.arange(1, 9)})
    return dataclasses.replace(result, fit=fit, guarantee="strict")


def test_datasets_that_share_a_draw_share_its_parameter():
    result = with_k_draws(_strict_with_distinct_draws(), 2, seed=3, m=5)
    assert result.synthetic.shape == (5, 200) and result.k_draws == 2
    means = result.synthetic.mean(axis=1)
    # spaced_draws(8, 2) takes lambda 10 and 80; datasets 1-2 the first, 3-5 the second
    assert np.allclose(means, [10, 10, 80, 80, 80], rtol=0.1)
    assert not np.array_equal(result.synthetic[0], result.synthetic[1])


def test_k_draws_are_refused_for_a_release_that_is_not_strict():
    result = dataclasses.replace(_strict_with_distinct_draws(), guarantee="local")
    with pytest.raises(BadArgument, match="strict"):
        with_k_draws(result, 2, seed=3)
