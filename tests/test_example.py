"""ppmlib.datasets.example: the shipped fit of stored Stan draws is the fit SETTINGS describe."""
import json

import numpy as np
import pytest

import ppmlib
from ppmlib.datasets import example


def test_the_example_fit_is_the_stated_model_on_the_stated_data():
    fit = ppmlib.example_fit()
    s = example.SETTINGS
    np.testing.assert_array_equal(fit.y, ppmlib.datasets.simulate.poisson(s["n"], s["mu"], seed=s["data_seed"]))
    assert (fit.model.name, fit.chains, fit.n_draws, fit.seed) == ("poisson", s["chains"], s["chains"] * s["draws"],
                                                                   s["seed"])
    assert fit.X is None and (fit.weights == 1).all()
    # the draws come from the conjugate posterior Gamma(1 + sum y, 0.001 + n): mean and sd within Monte Carlo error
    shape, rate = ppmlib.inference.exact.pseudo_posterior(fit.y)
    lam, ess = fit.draws["lambda"], fit.diagnostics["min_ess_bulk"]
    assert abs(lam.mean() - shape / rate) < 4 * np.sqrt(shape) / rate / np.sqrt(ess)
    assert abs(lam.std() - np.sqrt(shape) / rate) < 0.15 * np.sqrt(shape) / rate
    assert fit.sampler["divergent__"].shape == (fit.n_draws,)


def test_each_call_gives_a_fit_of_its_own():
    first, second = ppmlib.example_fit(), ppmlib.example_fit()
    first.draws["lambda"][:] = 0.0
    assert second.draws["lambda"].min() > 50


@pytest.mark.stan
def test_a_refit_reproduces_the_shipped_file(tmp_path):
    shipped = json.loads((example.shipped_file("data", example.FILE_NAME)).read_text())
    refit = json.loads(example.write_example_fit(tmp_path / "fit.json").read_text())
    for group in ("draws", "sampler"):
        assert refit[group].keys() == shipped[group].keys()
        for name in shipped[group]:
            np.testing.assert_array_equal(refit[group][name], shipped[group][name], err_msg=f"{group}[{name!r}]")
    assert {k: v for k, v in refit.items() if k not in ("draws", "sampler", "backend")} == \
        {k: v for k, v in shipped.items() if k not in ("draws", "sampler", "backend")}
