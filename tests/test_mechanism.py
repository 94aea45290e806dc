"""ppmlib.mechanism.synthesis and the settings it is driven by: the Sampler, the registry of weighting schemes,
one pass for truncation and bounds, and the seeds every synthesizer derives from one number."""
import dataclasses

import numpy as np
import pytest

import ppmlib
from ppmlib.mechanism import bounds as lipschitz
from ppmlib.mechanism import synthesis as mechanism
from ppmlib.models.families import family
from ppmlib.inference.posterior import Fit

TINY = ppmlib.Sampler(chains=2, draws=150, warmup=150)


# --- Sampler ---------------------------------------------------------------------------------

def test_sampler_defaults_and_total_draws():
    assert ppmlib.Sampler() == ppmlib.Sampler(chains=4, draws=1000, warmup=1000)
    assert ppmlib.Sampler(chains=3, draws=250).total_draws == 750
    with pytest.raises(dataclasses.FrozenInstanceError):
        ppmlib.Sampler().chains = 2


@pytest.mark.parametrize("kwargs, error, match", [
    (dict(chains=0), ValueError, "chains must be >= 1, got 0"),
    (dict(chains=2.0), TypeError, "chains must be an integer, got float"),
    (dict(draws=-5), ValueError, "draws must be >= 1, got -5"),
    (dict(warmup="100"), TypeError, "warmup must be an integer, got str"),
    (dict(warmup=True), TypeError, "warmup must be an integer, got bool"),
])
def test_sampler_rejects_bad_settings_naming_them(kwargs, error, match):
    with pytest.raises(error, match=match):
        ppmlib.Sampler(**kwargs)


def test_numpy_integers_are_stored_as_plain_ints():
    s = ppmlib.Sampler(chains=np.int64(2), draws=np.int32(10), warmup=10)
    assert type(s.chains) is int and type(s.draws) is int


@pytest.mark.parametrize("call", [
    lambda: ppmlib.fit("poisson", [1, 2, 3], sampler={"chains": 2}),
    lambda: ppmlib.synthesizer("poisson", [1, 2, 3], sampler=(2, 100, 100)),
    lambda: ppmlib.studies.vector_weighted.matched_comparison("poisson", [1, 2, 3], cw_radius=1.0, sampler=4),
])
def test_anything_but_a_sampler_is_a_type_error(call):
    with pytest.raises(TypeError, match="sampler must be a ppmlib.Sampler"):
        call()


@pytest.mark.stan
def test_the_sampler_settings_reach_the_fit():
    fit = ppmlib.fit("poisson", [3, 5, 4, 6], sampler=ppmlib.Sampler(chains=3, draws=40, warmup=20), seed=1)
    assert fit.chains == 3 and fit.n_draws == 120 and fit.draws["lambda"].shape == (120,)


def test_more_datasets_than_draws_is_refused_before_fitting():
    with pytest.raises(ValueError, match="m = 301 synthetic datasets need at least m draws"):
        ppmlib.synthesizer("poisson", [1, 2, 3], m=301, sampler=TINY)


# --- the registry of weighting schemes -------------------------------------------------------

def test_unknown_scheme_lists_every_choice():
    with pytest.raises(ValueError, match="unknown scheme 'LW'") as err:
        ppmlib.synthesizer("poisson", [1, 2, 3], "LW")
    for name in ("'unweighted'", "'lw'", "'cw'", "'sw'", "'custom'"):
        assert name in str(err.value)


@pytest.mark.parametrize("scheme, settings, match", [
    ("lw", {}, "scheme 'lw' needs base="),
    ("cw", {"c": 0.5}, "scheme 'cw' needs radius="),
    ("cw", {"radius": None}, "scheme 'cw' needs radius="),
    ("sw", {}, "scheme 'sw' needs a="),
    ("custom", {}, "scheme 'custom' needs weights="),
    ("sw", {"a": 0.5, "c": 2.0}, r"scheme 'sw' does not take \['c'\]; it takes: a"),
    ("unweighted", {"radius": 3.0}, r"scheme 'unweighted' does not take \['radius'\]; it takes: no settings"),
    ("lw", {"base": None, "radius": 3.0}, r"does not take \['radius'\]; it takes: base, c, g"),
])
def test_missing_or_foreign_settings_are_errors(scheme, settings, match):
    with pytest.raises(ValueError, match=match):
        ppmlib.synthesizer("poisson", [1, 2, 3], scheme, **settings)


def test_registry_holds_labels_settings_and_weights():
    from ppmlib.mechanism.schemes import REGISTRY, by_kind
    made = {s.kind: s.key for s in REGISTRY.values() if s.make is not None}
    assert made == {
        "unweighted": "Unweighted", "lw": "LW", "cw": "CW", "sw": "SW", "custom": "Custom", "cm": "CM", "wcm": "WCM",
        "strict_weighted": "Strict weighted", "ir": "IR_marginal", "pairwise": "IR_pairwise"}
    y = np.array([1, 2, 3, 30])
    cw = by_kind("cw")
    settings = {**cw.resolve({"radius": 2.0}), "q": 1.0}
    # isolation risks by hand: records outside the closed ball of radius 2 around each value
    np.testing.assert_allclose(cw.make(y, settings), [0.75, 0.75, 0.75, 0.25])
    assert cw.recorded(settings) == {"c": 1.0, "g": 0.0, "radius": 2.0, "relative": False}
    np.testing.assert_array_equal(by_kind("sw").make(y, {"a": 0.3, "q": 1.0}), np.full(4, 0.3))


@pytest.mark.stan
def test_synthesis_records_the_scheme_settings_q_and_seed():
    y = ppmlib.datasets.simulate.poisson(80, 20, seed=1)
    base = ppmlib.synthesizer("poisson", y, m=2, sampler=TINY, seed=1)
    lw = ppmlib.synthesizer("poisson", y, "lw", base=base, c=0.7, m=2, sampler=TINY, seed=2)
    assert (base.name, base.settings) == ("Unweighted", {"q": 1.0, "seed": 1})
    assert (lw.name, lw.settings) == ("LW", {"c": 0.7, "g": 0.0, "q": 1.0, "seed": 2})
    np.testing.assert_array_equal(lw.weights, ppmlib.lw_weights(base.fit, c=0.7))


# --- truncation and bounds from one pass -----------------------------------------------------

def _poisson_fit(seed: int, S: int = 400, n: int = 60) -> Fit:
    """A Fit made by hand (no Stan): Poisson rates drawn around the data's mean, some repeated."""
    rng = np.random.default_rng(seed)
    y = rng.poisson(20, n)
    lam = rng.gamma(400, 20 / 400, S)
    lam[::7] = lam[0]  # ties in m_s: the quantile must treat them alike on every route
    weights = rng.uniform(0, 1, n)
    weights[:5] = 0.0
    return Fit(family("poisson"), y, None, weights, {"lambda": lam}, {}, 1, "none", seed)


@pytest.fixture
def small_blocks(monkeypatch):
    """Blocks of a few draws (so the pool of held-back draws crosses many blocks), tiles of a few
    draws and keys, and a count of how many draws' log-likelihoods were evaluated (a draw counts
    once when every key of it was)."""
    evaluated = []
    blocks, tiles = Fit.log_lik_blocks, Fit.log_lik_tiles

    def counted(self, max_elements=200):
        for part, block in blocks(self, max_elements):
            evaluated.append(block.shape[0])
            yield part, block

    def counted_tiles(self, max_elements=200):
        for part, keys, tile in tiles(self, max_elements):
            evaluated.append(tile.size / self._distinct[0].size)
            yield part, keys, tile

    monkeypatch.setattr(Fit, "log_lik_blocks", counted)
    monkeypatch.setattr(Fit, "log_lik_tiles", counted_tiles)
    return evaluated


@pytest.mark.parametrize("q", [1.0, 0.97, 0.9, 0.5, 0.01])
@pytest.mark.parametrize("seed", [1, 2])
def test_one_pass_gives_the_matrix_route_exactly_and_evaluates_each_draw_once(small_blocks, q, seed):
    fit = _poisson_fit(seed)
    keep, bounds = lipschitz.truncated_bounds(fit, fit.weights, q)
    assert sum(small_blocks) == fit.n_draws and len(small_blocks) > 10  # every draw once, many blocks
    A = np.abs(fit.log_lik) * fit.weights  # the S x n route, by hand
    per_draw = A.max(axis=1)
    expected_keep = per_draw <= np.quantile(per_draw, q)
    np.testing.assert_array_equal(keep, expected_keep)
    np.testing.assert_array_equal(bounds, A[expected_keep].max(axis=0))
    # the two public functions agree with it
    np.testing.assert_array_equal(ppmlib.kept_draws(fit, fit.weights, q), keep)
    np.testing.assert_array_equal(ppmlib.record_bounds(fit, fit.weights, q), bounds)


@pytest.mark.stan
def test_synthesizer_evaluates_each_draw_once_and_keeps_its_delta(small_blocks):
    y = ppmlib.datasets.simulate.poisson(150, 40, seed=3)
    cut = ppmlib.synthesizer("poisson", y, "sw", a=0.6, q=0.9, m=3, sampler=TINY, seed=4)
    assert sum(small_blocks) == TINY.total_draws  # before: all draws for the truncation, then the kept again
    refit = ppmlib.fit("poisson", y, weights=cut.weights, sampler=TINY, seed=ppmlib.seeds(4, 2)[0])
    keep = ppmlib.kept_draws(refit.log_lik, cut.weights, 0.9)
    assert cut.fit.n_draws == keep.sum()
    assert cut.delta == ppmlib.lipschitz_bound(refit.log_lik[keep], cut.weights)


# --- seeds -----------------------------------------------------------------------------------

@pytest.mark.stan
def test_synthesizer_splits_its_seed_with_ppmlib_seeds():
    # seed 9: both numbers numpy's SeedSequence gives are above Stan's limit, so any other
    # reduction of them (or none) would give other draws or other synthetic data
    y = ppmlib.datasets.simulate.poisson(60, 20, seed=2)
    syn = ppmlib.synthesizer("poisson", y, m=4, sampler=TINY, seed=9)
    fit_seed, synthesis_seed = ppmlib.seeds(9, 2)
    assert syn.fit.seed == fit_seed
    np.testing.assert_array_equal(syn.synthetic, syn.fit.synthesize(4, synthesis_seed))


@pytest.mark.stan
def test_matched_comparison_seeds_its_four_synthesizers_with_ppmlib_seeds():
    y = ppmlib.datasets.simulate.poisson(100, 30, seed=6)
    # seed 2020: the third number of the split is above Stan's limit (CW's seed before the change)
    res = ppmlib.studies.vector_weighted.matched_comparison("poisson", y, cw_radius=5.0, rtol=0.1, m=2, sampler=TINY, seed=2020,
                                    progress=False)
    assert [r.settings["seed"] for r in res.values()] == ppmlib.seeds(2020, 4)


# --- Delta over a grid of LW settings ---------------------------------------------------------

@pytest.mark.stan
def test_lw_delta_grid_rises_with_c_and_each_cell_is_the_synthesizer():
    y = ppmlib.datasets.simulate.poisson(150, 100, seed=5)
    base = ppmlib.fit("poisson", y, seed=1, sampler=TINY)
    table = ppmlib.lw_delta_grid("poisson", y, base, [0.4, 0.8], [0.0, 0.1], sampler=TINY, seed=2, progress=False)
    assert list(zip(table["c"], table["g"])) == [(0.4, 0.0), (0.4, 0.1), (0.8, 0.0), (0.8, 0.1)]
    assert table["Delta"].iloc[2] > 1.5 * table["Delta"].iloc[0]  # c doubles: Delta nearly doubles
    assert table["Delta"].iloc[1] > table["Delta"].iloc[0]  # a positive shift raises it
    one = ppmlib.synthesizer("poisson", y, "lw", base=base, c=0.8, g=0.0, m=1, sampler=TINY, seed=2)
    assert table["Delta"].iloc[2] == one.delta and table["epsilon"].iloc[2] == 2 * one.delta
    refit = ppmlib.fit("poisson", y, weights=one.weights, sampler=TINY, seed=ppmlib.seeds(2, 2)[0])
    assert table["Delta"].iloc[2] == ppmlib.lipschitz_bound(refit.log_lik, ppmlib.lw_weights(base.log_lik, c=0.8))


# --- moved from test_lipschitz_weights.py and test_utility_claims.py: match_delta, scheme errors,
# the matched comparison, truncation --------------------------------------------------------------

def _fake_synthesis(delta):
    from types import SimpleNamespace
    return SimpleNamespace(delta=delta, calibration={})


def test_match_delta_finds_the_root_of_a_monotone_map():
    from ppmlib.mechanism.synthesis import match_delta
    calls = []

    def make(x):
        calls.append(x)
        return _fake_synthesis(3.0 * x**2 + 0.5)  # Delta rises with x; target 2 at x = 1/sqrt(2)

    out = match_delta(make, 2.0, 0.1, 0.0, 1.0, rtol=1e-4, progress=False, max_iter=30)
    assert abs(out.delta - 2.0) <= 2e-4
    assert abs(out.calibration["value"] - np.sqrt(0.5)) < 1e-3
    assert len(calls) < 15  # Illinois keeps regula falsi from stalling


def test_match_delta_kinked_map_with_negative_root():
    from ppmlib.mechanism.synthesis import match_delta
    out = match_delta(lambda g: _fake_synthesis(max(0.1, 4 * (g + 0.5))), 1.0, 0.1, -1.0, 1.0,
                      rtol=1e-3, progress=False, max_iter=40)
    assert abs(out.calibration["value"] + 0.25) < 1e-3


def test_match_delta_reports_non_convergence():
    from ppmlib.errors import CalibrationFailed
    from ppmlib.mechanism.synthesis import match_delta
    with pytest.raises(CalibrationFailed, match="did not reach 5 .* in 4 refits of a"):
        match_delta(lambda a: _fake_synthesis(2.0 * a), 5.0, 0.5, 0.0, 1.0, parameter="a",
                    max_iter=4, progress=False)


def test_scheme_errors_name_what_is_missing():
    y = np.arange(10)
    with pytest.raises(ValueError, match="needs base="):
        ppmlib.synthesizer("poisson", y, "lw")
    with pytest.raises(ValueError, match="needs radius="):
        ppmlib.synthesizer("poisson", y, "cw")
    with pytest.raises(ValueError, match="needs a=: a is the scalar weight"):
        ppmlib.synthesizer("poisson", y, "sw")
    with pytest.raises(ValueError, match="unknown scheme 'xw'"):
        ppmlib.synthesizer("poisson", y, "xw")


@pytest.mark.stan
def test_matched_comparison_matches_deltas_and_is_reproducible():
    y = ppmlib.datasets.simulate.poisson(300, 50, seed=3)
    kwargs = dict(cw_radius=7.0, seed=5, sampler=ppmlib.Sampler(draws=400, warmup=400), m=10, progress=False)
    res = ppmlib.studies.vector_weighted.matched_comparison("poisson", y, **kwargs)
    target = res["LW"].delta
    for name in ("CW", "SW"):
        assert abs(res[name].delta / target - 1) <= 0.03
        assert res[name].calibration["target"] == target
    assert res["Unweighted"].delta > 1.5 * target
    assert 0 < res["SW"].calibration["value"] < 1
    np.testing.assert_allclose(res["SW"].weights, res["SW"].calibration["value"])
    again = ppmlib.studies.vector_weighted.matched_comparison("poisson", y, **kwargs)
    assert all(again[k].delta == res[k].delta for k in res)
    assert np.array_equal(again["CW"].synthetic, res["CW"].synthetic)


@pytest.mark.stan
def test_truncation_drops_draws_from_bound_and_synthesis():
    y = ppmlib.datasets.simulate.poisson(200, 30, seed=2)
    full = ppmlib.synthesizer("poisson", y, "unweighted", seed=1, sampler=ppmlib.Sampler(draws=250, warmup=250), m=5)
    cut = ppmlib.synthesizer("poisson", y, "unweighted", seed=1, sampler=ppmlib.Sampler(draws=250, warmup=250), m=5, q=0.9)
    assert cut.fit.n_draws == pytest.approx(0.9 * full.fit.n_draws, abs=2)
    assert cut.delta < full.delta
    # the bound of the kept draws, recomputed by hand
    per_draw = np.abs(full.fit.log_lik).max(axis=1)
    assert cut.delta == pytest.approx(per_draw[per_draw <= np.quantile(per_draw, 0.9)].max())


def test_match_delta_refuses_an_empty_bracket():
    """Issue 24, point 6: low > high was reported as a bad start ("start must lie in [2, 1]")."""
    from ppmlib.mechanism.synthesis import match_delta
    with pytest.raises(ValueError, match=r"low must be below high .*got low = 2, high = 1$"):
        match_delta(lambda x: None, 1.0, 1.5, low=2.0, high=1.0)


# --- SW's start from earlier SW fits (sw_start) ------------------------------------------------

def test_sw_start_solves_a_power_law_through_known_points():
    """On Delta(a) = 8 a^0.7 the log-log interpolation is exact: the start is the a with Delta(a) = target."""
    curve = lambda a: 8.0 * a ** 0.7
    known = [(0.2, curve(0.2)), (0.5, curve(0.5))]
    for target in (2.0, 3.0, 5.0):          # below, between and above the known points
        assert ppmlib.mechanism.synthesis.sw_start(target, curve(1.0), known) == pytest.approx((target / 8.0) ** (1 / 0.7))
    # without known points: the proportional guess target / Delta(1)
    assert ppmlib.mechanism.synthesis.sw_start(2.0, 8.0) == 0.25
    # two points that disagree on the direction (refit noise): proportional from the nearest
    assert ppmlib.mechanism.synthesis.sw_start(3.0, 8.0, [(0.5, 3.2), (0.45, 3.3)]) == pytest.approx(0.5 * 3.0 / 3.2)


def test_match_sw_with_an_earlier_curve_needs_one_refit():
    from ppmlib.inference.exact import ConjugateSampler
    y = ppmlib.datasets.simulate.poisson(400, 60, seed=2)
    run = dict(sampler=ConjugateSampler(), m=2)
    u = ppmlib.synthesizer("poisson", y, seed=1, **run)
    first = ppmlib.mechanism.synthesis.match_sw("poisson", y, 0.4 * u.delta, u.delta, seed=5, rtol=0.02, progress=False, **run)
    cold = ppmlib.mechanism.synthesis.match_sw("poisson", y, 0.3 * u.delta, u.delta, seed=5, rtol=0.02, progress=False, **run)
    warm = ppmlib.mechanism.synthesis.match_sw("poisson", y, 0.3 * u.delta, u.delta, seed=5, rtol=0.02, progress=False,
                                     known=first.calibration["history"], **run)
    assert cold.calibration["iterations"] > 1 and warm.calibration["iterations"] == 1
    assert abs(warm.delta / (0.3 * u.delta) - 1) <= 0.02
