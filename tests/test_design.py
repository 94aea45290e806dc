"""ppmlib.design_matrix on bad input (issue 24, point 6): each refused with a message naming what is wrong."""
import numpy as np
import pandas as pd
import pytest

from ppmlib.datasets.design import design_matrix


def test_a_dict_is_refused_with_a_hint():
    with pytest.raises(TypeError, match=r"df must be a pandas DataFrame .*got dict; pd.DataFrame\(...\) makes one"):
        design_matrix({"Earner": ["Earner", "Non-earner"]}, ["Earner"])


def test_an_empty_table_is_refused():
    with pytest.raises(ValueError, match="df has no rows"):
        design_matrix(pd.DataFrame({"Earner": pd.Series([], dtype=str)}), ["Earner"])


@pytest.mark.parametrize("missing", [None, np.nan, pd.NA])
def test_missing_values_are_refused_not_turned_into_a_level(missing):
    df = pd.DataFrame({"Region": ["North", missing, "South", missing], "Earner": ["a", "b", "a", "b"]})
    with pytest.raises(ValueError, match=r"column 'Region' has 2 missing value\(s\); drop or impute"):
        design_matrix(df, ["Earner", "Region"])
    # an explicit level is fine
    X = design_matrix(df.fillna({"Region": "missing"}), ["Region"])
    assert list(X.columns) == ["(Intercept)", "Region=South", "Region=missing"]  # North, first sorted, is the reference
    np.testing.assert_array_equal(X["Region=missing"], [0.0, 1.0, 0.0, 1.0])
