"""The report's per-cell fit: ppmlib.release.report.cell_frames and ppmlib.plots.cell_distributions."""
from types import SimpleNamespace

import matplotlib
import numpy as np
import pandas as pd

matplotlib.use("Agg")

from ppmlib import plots  # noqa: E402
from ppmlib.evaluate.utility import cell_fit  # noqa: E402
from ppmlib.release import report  # noqa: E402


class _Results(dict):
    released = "LW"


def _case():
    rng = np.random.default_rng(0)
    n = 60
    table = pd.DataFrame({"g": np.repeat(["a", "b", "c"], [30, 20, 10]), "x": rng.normal(size=n),
                          "wage": np.exp(rng.normal(size=n))})
    prepared = SimpleNamespace(table=table, predictors=("g", "x"), column="wage", original_units=np.exp)
    synthetic = {"LW": rng.normal(size=(2, n)), "Unweighted": rng.normal(size=(2, n))}
    results = _Results({k: SimpleNamespace(synthetic=v) for k, v in synthetic.items()})
    return prepared, results, synthetic


def test_cell_frames_are_the_released_datasets_in_units_on_the_categorical_keys():
    prepared, results, synthetic = _case()
    data, frames, keys, column = report.cell_frames(results, prepared)
    assert keys == ["g"] and column == "wage" and list(data.columns) == ["g", "wage"]
    assert len(frames) == 2
    np.testing.assert_allclose(frames[1]["wage"], np.exp(synthetic["LW"][1]))
    np.testing.assert_array_equal(frames[0]["g"], prepared.table["g"])
    other = report.cell_frames(results, prepared, "Unweighted")[1]
    np.testing.assert_allclose(other[0]["wage"], np.exp(synthetic["Unweighted"][0]))
    numeric_only = SimpleNamespace(**{**vars(prepared), "predictors": ("x",)})
    assert report.cell_frames(results, numeric_only) is None


def test_cell_distributions_draws_the_largest_cells_with_their_ks():
    prepared, results, _ = _case()
    cells = report.cell_frames(results, prepared)
    fig = plots.cell_distributions(*cells, largest=2)
    titles = [ax.get_title() for ax in fig.axes]
    table = cell_fit(*cells, largest=2)
    assert len(titles) == 2
    for title, row in zip(titles, table.itertuples()):
        assert title == f"{row.cell}\n{row.records} records, KS {row.KS:.2f}"
    assert titles[0].startswith("g=a\n30 records")
    # the data's step function ends at 1 after the cell's 30 values
    data_line = fig.axes[0].lines[0]
    assert data_line.get_ydata()[-1] == 1.0 and len(data_line.get_xdata()) == 30
