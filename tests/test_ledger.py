"""The privacy ledger: OpenDP's own zCDP -> (epsilon, delta) conversion reproduced, and the solver inverts it."""
import math

import pytest

from ppmlib.mechanism import ledger as L

opendp = pytest.importorskip("opendp.prelude")


def _opendp_epsilon(rho: float, delta: float) -> float:
    """epsilon at delta of a rho-zCDP mechanism, by OpenDP: a Gaussian mechanism with that rho, cast."""
    dp = opendp
    dp.enable_features("contrib")
    space = dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float)
    gaussian = dp.m.make_gaussian(*space, scale=1.0 / math.sqrt(2.0 * rho))
    assert gaussian.map(1.0) == pytest.approx(rho, rel=1e-12)
    return dp.c.make_zCDP_to_approxDP(gaussian).map(1.0).epsilon(delta), gaussian.map(1.0)


@pytest.mark.parametrize("rho", [1e-3, 1 / 32, 0.125, 1.0, 2.5, 12.5, 50.0, 500.0])
@pytest.mark.parametrize("delta", [1e-9, 1e-6, 1e-3])
def test_conversion_equals_opendps_own(rho, delta):
    theirs, exact_rho = _opendp_epsilon(rho, delta)
    assert L.cdp_epsilon(exact_rho, delta) == pytest.approx(theirs, abs=1e-9)


def test_conversion_is_tighter_than_the_simple_bound_and_the_bound_holds():
    for rho in (0.01, 1.0, 40.0):
        eps = L.cdp_epsilon(rho, 1e-6)
        assert eps < L.simple_cdp_epsilon(rho, 1e-6)
        assert L.cdp_delta(rho, eps) <= 1e-6 < L.cdp_delta(rho, eps * (1 - 1e-6))


def test_ledger_numbers_of_a_release():
    book = L.ledger(2.0, 20, delta=1e-6)
    assert book.rho == pytest.approx(20 * 4 / 8)
    assert book.basic_total == 40.0
    assert book.zcdp_total == pytest.approx(L.cdp_epsilon(10.0, 1e-6))
    assert book.total == (book.zcdp_total, 1e-6) and book.zcdp_total < 40.0
    # one dataset: basic composition (pure epsilon) is the better statement
    one = L.ledger(2.0, 1, delta=1e-6)
    assert one.total == (2.0, 0.0)


def test_statements_name_their_scope_word_for_word():
    strict, local = L.ledger(1.0, 5, guarantee="strict"), L.ledger(1.0, 5, guarantee="local")
    assert all(L.SCOPES["strict"] in line for line in (strict.statement()[0], strict.statement()[-1]))
    assert all(L.SCOPES["local"] in line for line in (local.statement()[0], local.statement()[-1]))
    assert strict.to_dict()["covers"] == L.SCOPES["strict"] and strict.to_dict()["statement"] == strict.statement()


@pytest.mark.parametrize("total, m", [(1.0, 1), (1.0, 20), (10.0, 20), (20.0, 5), (0.5, 100)])
def test_solver_gives_the_largest_epsilon_within_the_total(total, m):
    eps = L.solve_per_dataset_epsilon(total, 1e-6, m)
    assert L.ledger(eps, m, delta=1e-6).total[0] == pytest.approx(total, rel=1e-9)
    assert L.ledger(eps * 1.001, m, delta=1e-6).total[0] > total


@pytest.mark.parametrize("bad", [dict(epsilon=0.0, m=1), dict(epsilon=1.0, m=0), dict(epsilon=1.0, m=2, delta=1.0),
                                 dict(epsilon=1.0, m=2, guarantee="global")])
def test_bad_ledger_arguments_are_refused(bad):
    with pytest.raises(ValueError):
        L.ledger(**bad)
