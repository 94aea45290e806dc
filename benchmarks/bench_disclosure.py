"""Benchmark: attribute-disclosure risk for all 994 records x 11 guesses x H = 50 draws,
vectorised (ppmlib.attribute_risk) against a literal Python transcription of the slides'
per-record loop, which recomputes the product over all synthetic records inside the loop over
records, guesses and draws. Run: ``.venv/bin/python benchmarks/bench_disclosure.py``.
"""
import sys
import time
from pathlib import Path

import numpy as np

from _results import record
from ppmlib.datasets import ce_like
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # the oracles live with the tests
from oracles.literal import literal_attribute_risk  # the slides' per-record loop, line by line  # noqa: E402
from ppmlib.evaluate.disclosure import DEFAULT_OFFSETS, attribute_risk


def main(H=50):
    y, x = ce_like.log_scale(ce_like.load())
    rng = np.random.default_rng(0)
    beta = rng.normal([2.2, 0.94], [0.2, 0.02], size=(H, 2))
    sigma = rng.normal(0.67, 0.015, H)
    mu = beta[:, :1] + beta[:, 1:] * x
    z = np.round(mu[0] + rng.normal(scale=sigma[0], size=y.size), 1)
    times = []
    for _ in range(5):
        start = time.perf_counter()
        fast = attribute_risk(y, z, mu, sigma)
        times.append(time.perf_counter() - start)
    start = time.perf_counter()
    slow = literal_attribute_risk(y, z, mu, sigma, DEFAULT_OFFSETS)
    slow_time = time.perf_counter() - start
    np.testing.assert_allclose(fast.probs, slow, rtol=1e-8)
    print(f"attribute risk, n = {y.size} records x {DEFAULT_OFFSETS.size} guesses x H = {H} draws")
    print(f"  slides' per-record loop (Python transcription): {slow_time:8.2f} s")
    print(f"  ppmlib.attribute_risk (vectorised):             {min(times) * 1e3:8.1f} ms")
    print(f"  speed-up: {slow_time / min(times):,.0f}x (target >= 300x)")
    record("disclosure", title="Attribute risk: ppmlib.attribute_risk against the slides' per-record loop",
           rows=[{"records": y.size, "guesses": DEFAULT_OFFSETS.size, "H": H, "slides' loop (s)": round(slow_time, 2),
                  "ppmlib.attribute_risk (ms)": round(min(times) * 1e3, 1), "speed-up": round(slow_time / min(times)),
                  "target": ">= 300x"}])


if __name__ == "__main__":
    main()
