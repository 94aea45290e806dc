"""A seeded, synthetic stand-in for the 2025 paper's salary sample (Survey of Doctorate Recipients).

The paper (section 3) uses 1,000 salaries from the 2017 SDR public-use file, which cannot be
fetched here. ``data/salary_like.csv`` is made by :func:`ppmlib.datasets.salary_like.generate` instead: 1,000 whole-dollar
salaries with the four summaries the paper publishes, matched exactly (mean $107,609, median
$95,000, standard deviation $69,718, range [$0, $509,000]). It is NOT real data: no value is
anyone's salary, and only those summaries, not the shape in between, come from the paper.

How: draw a right-skewed sample (log-normal), sort it, then bend the part below the median and
the part above it with one power each, x = median * s^a below and median + (max - median) t^b
above (s and t the sample rescaled to [0, 1] on each side), choosing a and b so that the mean and
the standard deviation come out right; round to dollars and move the rounding remainder onto
the largest salaries below the maximum so the mean is exact.

``python -m ppmlib.datasets.salary_like`` rewrites ``data/salary_like.csv`` (byte for byte the shipped file).
"""
from __future__ import annotations

__all__ = ["generate", "write", "load", "summaries"]

import os
import sys
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import optimize

from ppmlib import _checks
from ppmlib._files import write_text_atomically
from ppmlib._shipped import shipped_file

# data/salary_like.csv of the checkout, or the installed package's copy (see ppmlib._shipped)
DATA_FILE = shipped_file("data", "salary_like.csv", must_exist=False)
REGENERATE = "regenerate it with: python -m ppmlib.datasets.salary_like"
DEFAULT_SEED = 2017  # the SDR wave the paper's sample comes from
# the summaries the 2025 paper publishes for its SDR sample (section 3)
N, MEAN, MEDIAN, SD, LOW, HIGH = 1000, 107_609, 95_000, 69_718, 0, 509_000


def _bend(z: np.ndarray, a: float, b: float) -> np.ndarray:
    """Sorted z (even length) -> values with min LOW, median MEDIAN (the two middle values), max HIGH."""
    half = z.size // 2
    lower, upper = z[:half], z[half:]
    s = (lower - lower[0]) / (lower[-1] - lower[0])
    t = (upper - upper[0]) / (upper[-1] - upper[0])
    return np.concatenate([LOW + (MEDIAN - LOW) * s**a, MEDIAN + (HIGH - MEDIAN) * t**b])


def generate(seed: int = DEFAULT_SEED) -> pd.DataFrame:
    """The salary-like sample: one column ``salary`` (whole dollars), 1,000 rows, in random order."""
    rng = np.random.default_rng(_checks.seed(seed))
    z = np.sort(rng.lognormal(mean=np.log(MEDIAN), sigma=0.6, size=N))

    def miss(log_ab):
        x = _bend(z, *np.exp(log_ab))
        return [x.mean() / MEAN - 1, x.std(ddof=1) / SD - 1]

    solution = optimize.root(miss, x0=[0.0, 0.0], tol=1e-12)
    if not solution.success:
        raise RuntimeError(f"could not match the salary summaries: {solution.message}")
    x = np.round(_bend(z, *np.exp(solution.x))).astype(np.int64)
    # rounding moved the total by a few dollars: put it back, one dollar each, on the records just
    # below the maximum (the minimum, median and maximum stay exactly where they are)
    remainder = int(MEAN * N - x.sum())
    step = 1 if remainder > 0 else -1
    x[N - 1 - np.arange(1, abs(remainder) + 1)] += step
    return pd.DataFrame({"salary": rng.permutation(x)})


def write(path: str | os.PathLike = DATA_FILE, seed: int = DEFAULT_SEED) -> Path:
    """Write :func:`ppmlib.datasets.salary_like.generate`'s sample as CSV, atomically (a temp file in the folder, then rename)."""
    return write_text_atomically(path, generate(seed).to_csv(index=False, lineterminator="\n"))


def load(path: str | os.PathLike | None = None) -> np.ndarray:
    """The shipped salaries as an int64 array of whole dollars, shape (1000,) (found next to the package).

    See Also
    --------
    summaries : the four numbers the paper publishes, to check the stand-in against.
    generate : how the file was made.

    Examples
    --------
    >>> salaries = load()
    >>> salaries.shape, {k: round(v) for k, v in summaries(salaries).items()}
    ((1000,), {'mean': 107609, 'median': 95000, 'sd': 69718, 'min': 0, 'max': 509000})
    """
    path = shipped_file("data", "salary_like.csv", hint=REGENERATE) if path is None else Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path} not found; {REGENERATE}")
    return pd.read_csv(path)["salary"].to_numpy(np.int64)


def summaries(salaries) -> dict:
    """The four summaries the paper publishes: mean, median, sd (n - 1 divisor, as R's sd), range."""
    x = _checks.finite_array(salaries, "salaries", ndim=1)
    return {"mean": float(x.mean()), "median": float(np.median(x)), "sd": float(x.std(ddof=1)),
            "min": float(x.min()), "max": float(x.max())}


if __name__ == "__main__":
    print(f"wrote {write(*(sys.argv[1:2] or [DATA_FILE]))}")
