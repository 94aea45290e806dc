"""ppmlib.baselines.peers: the data-independent Table, the perturbed histogram, CART, OpenDP's AIM and MST."""
import numpy as np
import pandas as pd
import pytest

from ppmlib.baselines import peers


@pytest.fixture
def small():
    rng = np.random.default_rng(5)
    g = rng.choice(["a", "b"], size=400, p=[0.6, 0.4])
    y = np.where(g == "a", 2.0, 6.0) + rng.normal(0, 0.5, 400)
    return pd.DataFrame({"g": g, "y": y}), peers.Table(keys={"g": ["a", "b", "c"]}, column="y",
                                                     edges=tuple(np.arange(0.0, 9.01, 1.0)))


def test_table_bins_counts_and_refusals(small):
    data, table = small
    # bins are (e_b, e_b+1], the first holds e_0; outside values go to the end bins
    np.testing.assert_array_equal(table.bins([-5.0, 0.0, 1.0, 1.0001, 8.5, 99.0]), [0, 0, 0, 1, 8, 8])
    counts = table.counts(data)
    assert counts.shape == (3, 9) and counts.sum() == 400
    assert counts[2].sum() == 0                          # level c is public but absent
    assert counts[0].sum() == (data["g"] == "a").sum()
    with pytest.raises(ValueError, match="strictly increasing"):
        peers.Table(keys={}, column="y", edges=(0.0, 2.0, 1.0))
    with pytest.raises(ValueError, match="outside its public levels"):
        table.check(data.assign(g="z"))
    with pytest.raises(ValueError, match=r"lacks columns \['y'\]"):
        table.check(data.drop(columns="y"))


def test_draw_follows_the_table_given_the_keys(small):
    data, table = small
    joint = np.zeros(table.shape)
    joint[0, 2] = 1.0      # every "a" record in (2, 3]
    joint[1, 6] = 3.0      # every "b" record in (6, 7]
    out = table.draw(data, joint, 2, np.random.default_rng(0))
    a = data["g"] == "a"
    assert all(((f.loc[a, "y"] > 2) & (f.loc[a, "y"] <= 3)).all() for f in out)
    assert all(((f.loc[~a, "y"] > 6) & (f.loc[~a, "y"] <= 7)).all() for f in out)
    assert all((f["g"] == data["g"]).all() for f in out)            # keys released as they are
    # a key combination without mass falls back to the bins' marginal: (2, 3] with 1/4, (6, 7] with 3/4
    lone = pd.DataFrame({"g": ["c"] * 4000, "y": 0.0})
    drawn = table.draw(lone, joint, 1, np.random.default_rng(1))[0]["y"]
    assert abs((drawn > 6).mean() - 0.75) < 0.03


def test_histogram_is_pure_laplace_on_the_counts(small):
    data, table = small
    # the noise is Laplace(1/epsilon): at a huge epsilon the draw follows the true conditional counts
    out = peers.histogram(data, table, 1e6, m=1, seed=3)[0]
    true_bins = table.bins(data["y"])
    drawn_bins = table.bins(out["y"])
    for level in ("a", "b"):
        mine = (data["g"] == level).to_numpy()
        expected = np.bincount(true_bins[mine], minlength=9) / mine.sum()
        got = np.bincount(drawn_bins[mine], minlength=9) / mine.sum()
        assert np.abs(got - expected).max() < 0.1
    # by hand: Laplace(1/epsilon) on every cell of the true counts, then the draw, from one seeded stream
    rng = np.random.default_rng(9)
    noisy = table.counts(data) + rng.laplace(0.0, 1 / 0.7, size=table.shape)
    expected = table.draw(data, noisy, 2, rng)
    got = peers.histogram(data, table, 0.7, m=2, seed=9)
    assert all(x.equals(y) for x, y in zip(expected, got))
    # seeded: the same seed gives the same releases
    a = peers.histogram(data, table, 1.0, m=2, seed=4)
    b = peers.histogram(data, table, 1.0, m=2, seed=4)
    assert all(x.equals(y) for x, y in zip(a, b))
    with pytest.raises(ValueError, match="epsilon"):
        peers.histogram(data, table, 0.0)


def test_integer_tables_draw_counts_inside_their_bins():
    table = peers.Table(keys={}, column="count", edges=tuple(np.arange(-0.5, 50, 10)), integer=True)
    data = pd.DataFrame({"count": np.arange(40)})
    joint = np.zeros(table.shape)
    joint[1] = 1.0                                            # the bin (9.5, 19.5]: counts 10..19
    values = table.draw(data, joint, 1, np.random.default_rng(2))[0]["count"].to_numpy()
    assert values.dtype.kind == "i" and values.min() >= 10 and values.max() <= 19


def test_cart_draws_donors_from_the_records_leaf(small):
    data, table = small
    out = peers.cart(data, table, m=2, seed=1)
    for f in out:
        for level in ("a", "b"):
            mine = data["g"] == level
            # the tree splits on the key: every synthetic value is a confidential value of the same key
            assert set(f.loc[mine, "y"]) <= set(data.loc[mine, "y"])


def test_zcdp_rho_meets_the_classical_conversion():
    rho = peers.zcdp_rho(1.0, 1e-6)
    classical = (np.sqrt(np.log(1e6) + 1.0) - np.sqrt(np.log(1e6))) ** 2      # eps = rho + 2 sqrt(rho log(1/delta))
    assert classical <= rho < 2 * classical
    assert peers.zcdp_rho(2.0, 1e-6) > rho                                   # more epsilon, more rho


def test_mst_runs_through_opendp_and_keeps_the_keys(small):
    data, table = small
    out = peers.mst(data, table, 20.0, m=2, seed=0, iters=20)
    assert len(out) == 2 and all((f["g"] == data["g"]).all() for f in out)
    a = data["g"] == "a"
    # at a large epsilon the fitted model keeps the two groups apart
    assert out[0].loc[a, "y"].mean() < 4 < out[0].loc[~a, "y"].mean()


def test_run_refuses_unknown_peers(small):
    data, table = small
    with pytest.raises(ValueError, match="unknown peer"):
        peers.run(["GAN"], data, table, [1.0])
