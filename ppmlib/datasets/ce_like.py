"""A seeded, synthetic stand-in for the Consumer Expenditure (CE) sample used by the papers.

The real CE public-use file cannot be fetched here, so ``data/ce_like.csv`` is made by
:func:`generate`: 994 consumer units (as in the course slides) with the categorical variables of
the CE paper's Table 1, the slides' UrbanRural and Race, a quarterly expenditure and a family
income that is positive, right-skewed and correlated with expenditure, with a small share of
tiny incomes ($1 to $1,000) like the CE's lower tail. It is NOT real data: it imitates the
structure the book's methods care about, not any real household.

``python -m ppmlib.datasets.ce_like`` rewrites ``data/ce_like.csv`` (byte for byte the shipped file).
"""
from __future__ import annotations

__all__ = ["generate", "write", "load", "log_scale"]

import os
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from ppmlib import _checks
from ppmlib._files import write_text_atomically
from ppmlib._shipped import shipped_file
from ppmlib.errors import BadArgument

# data/ce_like.csv of the checkout, or the installed package's copy (see ppmlib._shipped)
DATA_FILE = shipped_file("data", "ce_like.csv", must_exist=False)
REGENERATE = "regenerate it with: python -m ppmlib.datasets.ce_like"
DEFAULT_SEED = 20170101  # 2017 Q1, the quarter of the CE paper's sample
# The CE's lower tail: a few units report a family income near zero (the CE paper's Table 1 gives
# the range as about -$7K to $1,800K), and these records, many standard deviations below the rest
# on the log scale, are the ones that set an unweighted synthesizer's Lipschitz bound. Without
# them the stand-in's smallest income was $2,379. So TINY_SHARE of the units get an income drawn
# log-uniformly between $1 and $TINY_MAX instead; incomes are floored at $1 so that log income
# exists for every unit (log $1 = 0): a bottom-coding of zero and negative incomes.
TINY_SHARE = 0.01
TINY_MAX = 1000.0

# category: probability (shares loosely follow the CE interview survey)
GENDER = {"Male": 0.47, "Female": 0.53}
AGE = {"Under 25": 0.06, "25-34": 0.17, "35-54": 0.35, "55-64": 0.19, "65 and over": 0.23}
EDUCATION = {"Less than high school": 0.08, "High school": 0.24, "Some college": 0.19, "Associate": 0.11,
             "Bachelor": 0.22, "Master": 0.11, "Professional": 0.02, "Doctorate": 0.03}
REGION = {"Northeast": 0.17, "Midwest": 0.22, "South": 0.38, "West": 0.23}
MARITAL = {"Married": 0.50, "Widowed": 0.10, "Divorced": 0.15, "Separated": 0.03, "Never married": 0.22}
RACE = {"White": 0.80, "Black": 0.12, "Native American": 0.01, "Asian": 0.05, "Pacific Islander": 0.005,
        "Multi-race": 0.015}
FAMILY_SIZE = {size: p for size, p in zip(range(1, 12), (0.29, 0.33, 0.15, 0.13, 0.06, 0.025, 0.01,
                                                          0.003, 0.001, 0.0005, 0.0005))}
# log-income shift by education: rises with schooling (a mild dependence, not a fitted model)
EDUCATION_EFFECT = dict(zip(EDUCATION, (-0.35, -0.15, -0.05, 0.0, 0.2, 0.3, 0.45, 0.4)))


def _draw(rng: np.random.Generator, shares: dict, n: int) -> np.ndarray:
    p = np.array(list(shares.values()), dtype=float)
    return np.array(list(shares))[rng.choice(len(shares), size=n, p=p / p.sum())]


def generate(n: int = 994, seed: int = DEFAULT_SEED, tiny_share: float = TINY_SHARE) -> pd.DataFrame:
    """The CE-like sample: one row per consumer unit (see data/README.md for every column).

    Parameters
    ----------
    n : int
        Number of consumer units (at least 10).
    seed : int
        Seed of the one generator every column is drawn from.
    tiny_share : float
        The lower tail's expected share of units (0: no tail, the sample the book shipped before it).

    Returns
    -------
    pandas.DataFrame
        ``n`` rows and 14 columns. About ``TINY_SHARE`` of the incomes lie between $1 and
        ``TINY_MAX`` dollars (the lower tail); their draws come after every other draw, so the
        other columns and the other units' incomes do not depend on the tail's settings.
    """
    n = _checks.integer(n, "n", low=10)
    tiny_share = _checks.real(tiny_share, "tiny_share", low=0, high=1)
    rng = np.random.default_rng(_checks.seed(seed))
    df = pd.DataFrame({
        "Gender": _draw(rng, GENDER, n),
        "Age": _draw(rng, AGE, n),
        "Education": _draw(rng, EDUCATION, n),
        "Region": _draw(rng, REGION, n),
    })
    urban = rng.uniform(size=n) < 0.90
    df["Urban"] = np.where(urban, "Urban", "Rural")
    df["MaritalStatus"] = _draw(rng, MARITAL, n)
    # urban type and CBSA status follow the urban/rural split (rural units are outside the cities)
    df["UrbanType"] = np.where(urban, np.where(rng.uniform(size=n) < 0.55, "Central city", "Other urban"), "Rural")
    df["CBSA"] = np.where(urban, np.where(rng.uniform(size=n) < 0.93, "Metropolitan", "Micropolitan"),
                          np.where(rng.uniform(size=n) < 0.35, "Micropolitan", "Outside CBSA"))
    df["FamilySize"] = _draw(rng, FAMILY_SIZE, n).astype(int)
    retired = (df["Age"] == "65 and over").to_numpy()
    df["Earner"] = np.where(rng.uniform(size=n) < np.where(retired, 0.35, 0.85), "Earner", "Non-earner")
    df["UrbanRural"] = np.where(urban, 1, 2)   # the slides' coding of the urban status: 1 urban, 2 rural
    df["Race"] = _draw(rng, RACE, n)

    # quarterly expenditure: log-normal, larger for bigger and more educated households
    log_exp = (9.2 + 0.18 * np.log(df["FamilySize"]) + 0.5 * df["Education"].map(EDUCATION_EFFECT)
               + rng.normal(0.0, 0.55, n))
    # annual income: linear in log expenditure on the log scale, with earner and education effects
    # and Student-t noise, so that income is right-skewed with a few very high and very low values
    earner = (df["Earner"] == "Earner").to_numpy()
    log_income = (2.3 + 0.92 * log_exp + 0.5 * df["Education"].map(EDUCATION_EFFECT)
                  + np.where(earner, 0.25, -0.35) + 0.45 * rng.standard_t(5, n))
    # the lower tail, drawn last so that every other value stays what it was without it
    tiny = rng.uniform(size=n) < tiny_share
    log_income = np.where(tiny, rng.uniform(0.0, np.log(TINY_MAX), n), log_income)
    df["Expenditure"] = np.round(np.exp(log_exp)).astype(int)
    df["Income"] = np.maximum(np.round(np.exp(log_income)), 1).astype(int)  # dollars, at least $1
    return df


def write(path: str | os.PathLike = DATA_FILE, n: int = 994, seed: int = DEFAULT_SEED) -> Path:
    """Write :func:`generate`'s sample as CSV, atomically (a temp file in the folder, then rename)."""
    return write_text_atomically(path, generate(n, seed).to_csv(index=False, lineterminator="\n"))


def load(path: str | os.PathLike | None = None, *, lower_tail: bool = True) -> pd.DataFrame:
    """The shipped CE-like sample (found next to the package, whatever the working directory).

    Returns a DataFrame with one row per consumer unit (994) and the columns described in
    ``data/README.md``.

    Parameters
    ----------
    path : path-like, optional
        Another CSV with the same columns; default the shipped ``data/ce_like.csv``.
    lower_tail : bool
        False: the same units with the incomes they had before the lower tail was drawn (the
        tail's units get back their draw from the bulk; every other value is the file's). For
        chapters whose claims are about the bulk of the distribution; shipped file only.

    Returns
    -------
    pandas.DataFrame

    See Also
    --------
    log_scale : the two variables of the attribute-risk chapter.
    generate : how the file was made.

    Examples
    --------
    >>> load().shape
    (994, 14)
    >>> int(load()["Income"].min()), int(load(lower_tail=False)["Income"].min())
    (1, 2379)
    """
    shipped = path is None
    path = shipped_file("data", "ce_like.csv", hint=REGENERATE) if shipped else Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path} not found; {REGENERATE}")
    df = pd.read_csv(path)
    if lower_tail:
        return df
    if not shipped:
        raise BadArgument("lower_tail=False rebuilds the shipped sample's incomes without the tail; "
                         f"it does not apply to another file ({path})")
    # the tail is drawn after everything else, so the generator without it gives the bulk's incomes
    bulk = generate(len(df), tiny_share=0.0)
    if df.drop(columns="Income").to_csv(index=False) != bulk.drop(columns="Income").to_csv(index=False):
        raise BadArgument(f"{path} is not the generator's sample; {REGENERATE}")
    return df.assign(Income=bulk["Income"].to_numpy())


def log_scale(df: pd.DataFrame, decimals: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """(log income, log expenditure), each shape (n,), rounded to ``decimals`` as in the course slides.

    Examples
    --------
    >>> y, x = log_scale(load())
    >>> y[:3], x[:3]
    (array([12.1, 11.6, 11.4]), array([9.7, 9.9, 9.5]))
    """
    decimals = _checks.integer(decimals, "decimals", low=0)
    return (np.round(np.log(df["Income"].to_numpy(float)), decimals),
            np.round(np.log(df["Expenditure"].to_numpy(float)), decimals))


if __name__ == "__main__":
    print(f"wrote {write(*(sys.argv[1:2] or [DATA_FILE]))}")
