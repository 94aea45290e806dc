"""ppmlib.mechanism.lineup: one description of a study's synthesizers and one runner for every study."""
import numpy as np
import pytest

import ppmlib
from ppmlib.mechanism import lineup as lu

TINY = ppmlib.Sampler(chains=2, draws=150, warmup=150)


# --- descriptions and their checks (no Stan) ------------------------------------------------

def test_standard_names_are_the_books_one_name_each_with_aliases():
    assert list(lu.STANDARD) == ["Unweighted", "LW", "LW_final", "CW", "CW_final", "SW", "CM", "WCM", "Strict weighted",
                                 "IR_marginal", "IR_pairwise"]
    assert lu.member("LW", alias=lu.ALIASES["LW"]).label == "LW (DPweighted)"
    assert lu.member("SW").match == "LW" and lu.member("SW", epsilon=4.0).epsilon == 4.0
    assert lu.member("SW", epsilon=4.0).match is None      # a target epsilon replaces the member to match
    with pytest.raises(ValueError, match="epsilon=4.0"):
        lu.Member("SW", "sw", base="Unweighted", match=4.0)
    assert lu.member("LW", c=0.7, g=-0.1).settings == {"c": 0.7, "g": -0.1}


@pytest.mark.parametrize("members, message", [
    (("LW",), "built on 'Unweighted', which is not an earlier member"),
    (("Unweighted", "SW"), "matched to 'LW', which is not an earlier member"),
    (("Unweighted", "Unweighted"), "two members are called 'Unweighted'"),
    (("Unweighted", lu.Member("X", "magic")), "unknown kind 'magic'"),
    (("Unweighted", lu.member("LW", radius=3)), "kind 'lw' does not take \\['radius'\\]"),
    (("Unweighted", lu.Member("U2", "unweighted", match="Unweighted")), "cannot be matched"),
    (("Unweighted", lu.Member("F", "final")), "give base="),
    (("Unweighted", 3), "a lineup holds Member objects"),
])
def test_bad_lineups_are_refused_before_anything_is_fitted(members, message):
    y = ppmlib.datasets.simulate.poisson(50, 30, seed=1)
    with pytest.raises((ValueError, TypeError), match=message):
        lu.run(members, "poisson", y, sampler=TINY, progress=False)


def test_unknown_standard_name_lists_the_choices():
    with pytest.raises(ValueError, match="unknown synthesizer 'DPweighted'; the standard ones are Unweighted, LW"):
        lu.member("DPweighted")


def test_given_members_are_seen_as_earlier_ones_but_not_run_or_returned():
    # each step reports its base's value and its own seed, so the output shows what the step saw
    echo = {"unweighted": lu.Kind(lambda m, ctx: ("ran", ctx.seed)),
            "lw": lu.Kind(lambda m, ctx: (ctx.done[m.base], ctx.seed), needs_base=True)}
    out = lu.execute(["LW"], echo, "poisson", [1, 2], {}, seed=[8], progress=False, given={"Unweighted": "u"})
    assert dict(out) == {"LW": ("u", 8)} and list(out.seconds) == ["LW"]
    with pytest.raises(ValueError, match="built on 'Unweighted', which is not an earlier member"):
        lu.execute(["LW"], echo, "poisson", [1, 2], {}, progress=False)
    with pytest.raises(ValueError, match="'Unweighted' is one of the given"):
        lu.execute(["Unweighted"], echo, "poisson", [1, 2], {}, progress=False, given={"Unweighted": "u"})


# --- the runner against the studies' own loops ----------------------------------------------

def assert_same_results(new, old):
    assert list(new) == list(old)
    for name in old:
        assert new[name].delta == old[name].delta, name
        assert np.array_equal(new[name].weights, old[name].weights), name
        assert np.array_equal(new[name].synthetic, old[name].synthetic), name


@pytest.mark.stan
def test_matched_comparison_through_the_runner_is_the_2020_loop_to_the_last_bit():
    """Unweighted, LW, CW matched by g and SW matched by a, seeded by position: the loop
    matched_comparison ran before it was a lineup, written out here as the reference."""
    y = ppmlib.datasets.simulate.poisson(150, 50, seed=3)
    s = ppmlib.seeds(11, 4)
    run = dict(m=4, sampler=TINY)
    u = ppmlib.synthesizer("poisson", y, "unweighted", seed=s[0], **run)
    lw = ppmlib.synthesizer("poisson", y, "lw", base=u, seed=s[1], **run)
    cw = ppmlib.match_delta(lambda g: ppmlib.synthesizer("poisson", y, "cw", radius=7.0, g=g, seed=s[2], **run),
                            lw.delta, 0.1, -1.0, 1.0, parameter="g", rtol=0.05, progress=False)
    sw = ppmlib.mechanism.synthesis.match_sw("poisson", y, lw.delta, u.delta, seed=s[3], rtol=0.05, progress=False, **run)
    new = ppmlib.studies.vector_weighted.matched_comparison("poisson", y, cw_radius=7.0, rtol=0.05, progress=False, seed=11, **run)
    assert_same_results(new, {"Unweighted": u, "LW": lw, "CW": cw, "SW": sw})
    assert new.summary().loc["SW", "made as"] == "sw; on Unweighted; Delta matched to LW; rtol=0.05, max_iter=12"


@pytest.mark.stan
def test_reweighting_comparison_through_the_runner_keeps_every_seed():
    """The 2025 study's five synthesizers as reweighting_comparison ran them before it was a lineup
    (CW at its policy radius, unmatched: the matched default is tested in test_reweighting)."""
    y = ppmlib.datasets.simulate.nb_mixture(120, (100, 100), (5, 20), (0.2, 0.8), seed=6)
    s = ppmlib.seeds(8, 5)
    run = dict(m=3, sampler=TINY)
    u = ppmlib.synthesizer("negbin", y, "unweighted", seed=s[0], **run)
    lw = ppmlib.synthesizer("negbin", y, "lw", base=u, c=0.9, seed=s[1], **run)
    cw = ppmlib.synthesizer("negbin", y, "cw", radius=20.0, seed=s[2], **run)
    again = dict(tau=0.3, progress=False, **run)
    old = {"Unweighted": u, "LW": lw, "LW_final": ppmlib.reweight_to_tolerance("negbin", y, lw, seed=s[3], **again),
           "CW": cw, "CW_final": ppmlib.reweight_to_tolerance("negbin", y, cw, seed=s[4], **again)}
    new = ppmlib.studies.reweighting.reweighting_comparison("negbin", y, cw_radius=20.0, lw_c=0.9, tau=0.3, seed=8,
                                       cw_match=False, progress=False, **run)
    assert_same_results(new, old)


@pytest.mark.stan
def test_lw_final_reweights_lw_at_equal_delta_and_epsilon_targets_are_met():
    y = ppmlib.datasets.simulate.nb_mixture(200, (100, 100), (5, 20), (0.2, 0.8), seed=4)
    res = lu.run(["Unweighted", "LW", lu.member("LW_final", tau=0.1), lu.member("SW", epsilon=6.0, rtol=0.03)],
                 "negbin", y, m=3, sampler=TINY, seed=5, progress=False)
    assert abs(res["LW_final"].delta - res["LW"].delta) < 0.1
    assert res["LW_final"].weights.mean() > res["LW"].weights.mean()   # re-weighting spends the budget
    assert abs(res["SW"].epsilon / 6.0 - 1) <= 0.03
    assert res["LW_final"].name == "LW_final" and res.labels["LW_final"] == "LW_final"


@pytest.mark.stan
def test_lw_matched_to_an_epsilon_on_a_regression_with_X_and_a_prior():
    """LW at a target epsilon for the normal and mixture regressions (X and prior reach every refit)."""
    rng = np.random.default_rng(6)
    X = np.column_stack([np.ones(120), rng.normal(size=120)])
    y = X @ [1.0, 0.5] + rng.standard_t(4, 120) * 0.5
    res = lu.run(["Unweighted", lu.member("LW", epsilon=5.0, tau=0.1)], "normal", y, X=X,
                 prior={"prior_beta_sd": 5.0}, m=3, sampler=TINY, seed=7, progress=False)
    lw = res["LW"]
    assert abs(lw.epsilon - 5.0) <= 2 * 0.1 and lw.calibration["target_epsilon"] == 5.0
    assert lw.fit.X.shape == (120, 2) and lw.name == "LW"


def test_run_records_each_members_wall_time():
    """run()'s wall times, here with LW calibrated to a target epsilon on the normal regression."""
    rng = np.random.default_rng(8)
    X = np.column_stack([np.ones(120), rng.integers(0, 2, 120)])
    y = X @ [1.0, 0.5] + rng.normal(0, 0.3, 120)
    res = lu.run(["Unweighted", lu.member("LW", epsilon=3.0, tau=0.1)], "normal", y, X=X, m=2, sampler=TINY, seed=2,
                 progress=False)
    assert abs(res["LW"].epsilon - 3.0) <= 0.2
    assert res["LW"].fit.X is not None and res["LW"].fit.X.shape == (120, 2)
    assert set(res.seconds) == {"Unweighted", "LW"} and all(t > 0 for t in res.seconds.values())


@pytest.mark.stan
def test_reweighting_comparison_matches_cw_to_lw_by_default():
    """The default CW is matched to LW's Delta (one epsilon for the four weighted synthesizers)."""
    y = ppmlib.datasets.simulate.nb_mixture(120, (100, 100), (5, 20), (0.2, 0.8), seed=6)
    res = ppmlib.studies.reweighting.reweighting_comparison("negbin", y, cw_radius=20.0, lw_c=0.9, tau=0.3, seed=8, cw_rtol=0.05,
                                        m=3, sampler=TINY, progress=False)
    assert res["CW"].settings["g"] > 0.0                                   # the match moved CW's floor
    assert abs(res["CW"].delta / res["LW"].delta - 1.0) <= 0.05
