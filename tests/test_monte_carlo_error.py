"""The attribute-risk estimator's Monte Carlo standard error, measured over disjoint sets of draws."""
import numpy as np
import pytest


@pytest.mark.stan
def test_the_standard_error_falls_as_one_over_root_H_and_is_the_sd_over_disjoint_sets():
    import ppmlib
    from ppmlib.errors import BadArgument
    from ppmlib.evaluate.disclosure import attribute_risk
    from ppmlib.studies.attribute_risk import monte_carlo_error

    rng = np.random.default_rng(3)
    x = rng.normal(size=60)
    X = np.column_stack([np.ones_like(x), x])
    y = np.round(1 + x + rng.normal(size=60), 1)
    syn = ppmlib.synthesizer("normal", y, "unweighted", X=X, m=1, seed=4,
                             sampler=ppmlib.Sampler(chains=4, draws=400, warmup=300))
    z = np.round(syn.synthetic, 1)
    small, large = (np.sqrt(np.mean(monte_carlo_error(syn.fit, y, z, h) ** 2)) for h in (10, 160))
    # 160 sets of 10 draws against 10 sets of 160: the 1/sqrt(H) rate gives a ratio of 4
    assert 2.5 < small / large < 6.5
    # the second of two sets of 100 draws is the first shifted by one draw, so the sets share none
    first = np.linspace(0, syn.fit.n_draws - 2, 100).round().astype(int)
    risks = [attribute_risk(y, z, *(lambda f: (f.model.mean(f.draws, f.X), f.draws["sigma"]))(
        syn.fit.subset(np.isin(np.arange(syn.fit.n_draws), first + k))), None).prob_true for k in (0, 1)]
    np.testing.assert_allclose(monte_carlo_error(syn.fit, y, z, 100, batches=2), np.std(risks, axis=0, ddof=1))
    with pytest.raises(BadArgument, match="4 disjoint sets of H = 500 draws need 2000 draws; the fit has 1600"):
        monte_carlo_error(syn.fit, y, z, 500, batches=4)
