"""Where CM's window is centred (ppmlib.studies.censoring_centre): the paper's ranking holds for r_i = 0
only, the window at the data keeps nearly the unweighted posterior's information at a large total,
and the claims say so per centre."""
import numpy as np
import pytest

from ppmlib.datasets import simulate
from ppmlib.mechanism.ledger import rho_for_total
from ppmlib.models.families import POISSON_PRIOR
from ppmlib.studies import censoring_centre as cc

PRIOR_MEAN = POISSON_PRIOR["prior_shape"] / POISSON_PRIOR["prior_rate"]


@pytest.fixture(scope="module")
def runs():
    return cc.centre_ledger([1, 2], [2.0, 5.0, 40.0], data=lambda s: simulate.poisson(300, 100, seed=s), bound=200.0,
                            draws=1000)


def _cell(runs, centre, scheme, total):
    rows = runs[(runs["centre"] == centre) & (runs["scheme"] == scheme) & (runs["total epsilon"] == total)]
    assert len(rows) == 2
    return rows


def test_the_literal_window_leaves_the_prior_and_a_window_at_the_data_leaves_the_data(runs):
    zero = _cell(runs, "zero", "CM", 2.0)
    assert (zero["share censored"] > 0.99).all()
    assert np.allclose(zero["location mean"], PRIOR_MEAN, rtol=0.1)          # the prior's mean, 1000
    at_data = _cell(runs, cc.ORACLE, "CM", 40.0)
    assert (at_data["share censored"] < 0.01).all()
    assert np.allclose(at_data["information about the data"], 1.0, atol=0.15)  # the unweighted posterior again


def test_the_pilot_pays_for_itself_out_of_the_draws(runs):
    """At the same total (E, delta) the pilot takes 0.2 of rho and the m = 5 draws the rest: m eps^2 / 8 = 0.8 rho."""
    rho = rho_for_total(5.0, 1e-6)
    eps = _cell(runs, "pilot", "CM", 5.0)["per-draw epsilon"].to_numpy()
    assert 5 * eps ** 2 / 8 == pytest.approx([0.8 * rho] * 2, rel=1e-9)
    assert (eps < _cell(runs, "best", "CM", 5.0)["per-draw epsilon"].to_numpy()).all()


def test_the_claims_name_their_centre_and_assert_only_what_held(runs):
    claims = cc.centre_claims(runs, PRIOR_MEAN, pilot_band=(5.0, 5.0))
    rows = {row["claim"]: row for row in claims.rows}
    literal = rows["centre zero: PPM keeps the most information (PPM / better censored scheme)"]
    assert literal["holds"] and literal["checked"]
    pulled = rows["centre zero: CM at total epsilon 2 is pulled toward the prior"]
    assert pulled["holds"] and pulled["checked"]
    assert not rows["centre best: PPM keeps the most information (PPM / better censored scheme)"]["holds"]
    assert rows["centre best: CM keeps more information than PPM at totals from 5 up (CM best / PPM)"]["checked"]
    assert not rows["centre best: CM keeps more information than PPM at totals below 5 (CM best / PPM)"]["checked"]
    oracle = [row for claim, row in rows.items() if claim.startswith(f"centre {cc.ORACLE}")]
    assert oracle and not any(row["checked"] for row in oracle)              # not private: reported only
    assert not any(row["checked"] for claim, row in rows.items() if "totals below" in claim or "above" in claim)
