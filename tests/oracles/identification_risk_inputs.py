"""Write the fixed inputs of the identification-risk oracle (run once; the files are committed).

The confidential data are the course's CE sample (data/ce_course.csv, 994 units) with one derived
categorical column, IncomeGroup (income in eight fixed brackets). Three "synthetic" releases keep
the un-synthesized UrbanRural and Expenditure, perturb Income multiplicatively and round it to whole
dollars (so some synthetic incomes land exactly on a radius boundary, where definitions differ),
redraw Race for a fifth of the rows, and recompute IncomeGroup from the perturbed income. They are
test inputs, not a synthesizer's output: the oracle compares two implementations of one measure.

    python tests/oracles/identification_risk_inputs.py     # rewrites tests/oracles/identification_risk/
"""
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
OUT = HERE / "identification_risk"
SEED = 20210301
M = 3
BRACKETS = [0, 10_000, 20_000, 35_000, 50_000, 75_000, 100_000, 150_000, np.inf]


def income_group(income: np.ndarray) -> np.ndarray:
    """Bracket number 1..8 of each income (left-closed brackets)."""
    return np.searchsorted(BRACKETS, income, side="right")


def main() -> None:
    data = pd.read_csv(HERE.parents[1] / "data" / "ce_course.csv")
    data["IncomeGroup"] = income_group(data["Income"].to_numpy())
    OUT.mkdir(exist_ok=True)
    data.to_csv(OUT / "confidential.csv", index=False)
    rng = np.random.default_rng(SEED)
    for l in range(1, M + 1):
        syn = data.copy()
        syn["Income"] = np.round(data["Income"] * np.exp(rng.normal(0.0, 0.15, len(data)))).astype(int)
        # a handful of rows land exactly on the relative radius boundary y (1 +- 0.1)
        edge = rng.choice(len(data), size=10, replace=False)
        syn.loc[edge, "Income"] = data.loc[edge, "Income"] + np.round(0.1 * data.loc[edge, "Income"]) * rng.choice([-1, 1], 10)
        redraw = rng.random(len(data)) < 0.2
        syn.loc[redraw, "Race"] = rng.integers(1, 7, redraw.sum())
        syn["IncomeGroup"] = income_group(syn["Income"].to_numpy())
        syn.to_csv(OUT / f"synthetic_{l}.csv", index=False)


if __name__ == "__main__":
    main()
