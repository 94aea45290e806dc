"""Experiment: why censored normal fits mix badly at a small epsilon (CM, the "best" centring).

One CmdStan fit of CM on the CE-like design (log income on Earner and Education, n = 994) or a
seeded 2,000-row sample of CPS 1988, at a per-draw epsilon, with one of three starts or supports:
``random`` (Stan's inits in (-2, 2), as ppmlib fits start), ``fit`` (each chain starts at a draw of
the uncensored fit) and, with ``SIGMA_LOWER=s`` in the environment, sigma's support cut to
[s, inf) (a public prior choice; s = sigma_ref = 0.5 stops any record from fitting better than its
centre). The program is stan/normal.stan with two data fields added (``sigma_lower`` and
``censor_shape``: 0 the hard clip, 1 b tanh(u / b), 2 (2b / pi) atan(pi u / (2b))), written to a
temporary folder. Prints one JSON line: seconds, max R-hat, min bulk ESS, divergences, mean tree
depth and leapfrog steps per draw, the share censored, the posterior of beta and sigma.

Run: ``PYTHONPATH=. .venv/bin/python benchmarks/strict_mixing_experiment.py ce 0.1 random 0 4 200 200``
(data, epsilon, start, shape, chains, warmup, draws). The measured lines are in
``benchmarks/results/strict_mixing.json``.
"""
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from ppmlib.datasets import ce_like
from ppmlib.models.censoring import censored_share, censoring
from ppmlib.models.families import family
from ppmlib.studies import against_alternatives as alt

ROOT = Path(__file__).resolve().parent.parent


def variant_program(folder) -> str:
    src = (ROOT / "stan" / "normal.stan").read_text()
    clip = "      target += sum(0.5 * (abs(u + censor_bound) - abs(u - censor_bound)));"
    assert clip in src
    src = src.replace(clip, """      if (censor_shape == 0) target += sum(0.5 * (abs(u + censor_bound) - abs(u - censor_bound)));
      else if (censor_shape == 1) target += censor_bound * sum(tanh(u / censor_bound));
      else target += censor_bound * 2 / pi() * sum(atan(u * pi() / (2 * censor_bound)));""")
    src = src.replace("  vector[censor ? n : 0] censor_shift;\n",
                      "  vector[censor ? n : 0] censor_shift;\n  int censor_shape;\n  real<lower=0> sigma_lower;\n")
    src = src.replace("  real<lower=0> sigma;\n", "  real<lower=sigma_lower> sigma;\n")
    path = Path(folder) / "normal_variant.stan"
    path.write_text(src)
    return str(path)


def main(argv):
    import arviz as az
    import cmdstanpy
    which, eps, start, shape = argv[0], float(argv[1]), argv[2], int(argv[3])
    chains, warmup, draws = (int(v) for v in argv[4:7])
    design = (alt.ce_design(ce_like.load(lower_tail=False), ["Earner", "Education"]) if which == "ce"
              else alt.wage_design("cps1988", ["region", "parttime"], n=2000, seed=2022))
    fam, n = family("normal"), design.y.size
    w, prior = np.ones(n), fam.check_prior(None)
    model = cmdstanpy.CmdStanModel(stan_file=variant_program(tempfile.mkdtemp(prefix="strict-mixing-")))
    plain = {**fam.stan_data(design.y, design.X, w, prior, False, None, sufficient=False),
             "censor_shape": 0, "sigma_lower": 0.0}
    base = model.sample(data=plain, chains=4, iter_warmup=300, iter_sampling=250, seed=1, show_progress=False)
    B, S = base.stan_variable("beta"), base.stan_variable("sigma")
    cens = censoring(fam, design.y, design.X, w, eps, reference_scale=0.5)
    data = {**fam.stan_data(design.y, design.X, w, prior, False, cens), "censor_shape": shape,
            "sigma_lower": float(os.environ.get("SIGMA_LOWER", "0"))}
    inits = None
    if start == "fit":
        idx = np.random.default_rng(0).choice(len(S), chains, replace=False)
        inits = [{"beta": B[i].tolist(), "sigma": float(S[i])} for i in idx]
    began = time.perf_counter()
    fit = model.sample(data=data, chains=chains, iter_warmup=warmup, iter_sampling=draws, seed=7, inits=inits,
                       show_progress=False, parallel_chains=2)
    seconds = time.perf_counter() - began
    summary = az.summary(az.from_cmdstanpy(fit), var_names=["beta", "sigma"])
    stats = fit.method_variables()
    beta, sigma = fit.stan_variable("beta"), fit.stan_variable("sigma")
    z = (design.y[None] - beta @ design.X.T) / sigma[:, None]
    log_lik = -0.5 * z ** 2 - np.log(sigma[:, None]) - 0.5 * np.log(2 * np.pi)
    print(json.dumps({"data": which, "n": n, "epsilon": eps, "start": start, "shape": shape,
                      "sigma_lower": data["sigma_lower"], "seconds": round(seconds, 1),
                      "max R-hat": float(summary["r_hat"].max()), "min bulk ESS": float(summary["ess_bulk"].min()),
                      "divergences": int(stats["divergent__"].sum()), "mean tree depth": float(stats["treedepth__"].mean()),
                      "leapfrog per draw": float(stats["n_leapfrog__"].mean()),
                      "share censored": censored_share(log_lik, w, cens),
                      "beta mean": beta.mean(0).round(3).tolist(), "sigma mean": float(sigma.mean()),
                      "uncensored beta mean": B.mean(0).round(3).tolist(), "uncensored sigma mean": float(S.mean()),
                      "load": os.getloadavg()[0]}))


if __name__ == "__main__":
    main(sys.argv[1:])
