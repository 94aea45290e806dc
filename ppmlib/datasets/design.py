"""Design matrices from categorical predictors: an intercept and one-hot columns with a reference level.

The CE paper synthesizes income from ten categorical predictors (its Table 1). A regression on
them needs, for each predictor, one 0/1 column per level except a *reference* level, which the
intercept absorbs (a column for every level would make the columns sum to the intercept, and the
coefficients would not be identified). The columns keep readable names ("Education=Master").
"""
from __future__ import annotations

__all__ = ["design_matrix", "independent_columns", "interaction_design", "is_categorical"]

from typing import TYPE_CHECKING

import numpy as np
from ppmlib.errors import BadArgument

if TYPE_CHECKING:
    import pandas as pd


def is_categorical(series: "pd.Series") -> bool:
    """Whether a predictor is treated as categorical (one-hot levels) rather than as a number:
    text, categories and booleans are; other numbers are not. The one rule for the synthesizers'
    designs, the release report's cells and the utility measures.

    Parameters
    ----------
    series : pandas.Series
        One predictor's column.

    Returns
    -------
    bool

    Examples
    --------
    >>> import pandas as pd
    >>> [is_categorical(pd.Series(v)) for v in (["a", "b"], [True, False], [1.5, 2.0])]
    [True, True, False]
    """
    import pandas as pd
    return not pd.api.types.is_numeric_dtype(series) or pd.api.types.is_bool_dtype(series)


def design_matrix(df: "pd.DataFrame", columns, *, reference: dict | None = None, levels: dict | None = None,
                  intercept: bool = True) -> "pd.DataFrame":
    """One-hot design matrix of the categorical ``columns`` of ``df``, shape (n, P), as a DataFrame.

    Parameters
    ----------
    df : pandas.DataFrame
        One row per record.
    columns : sequence of str
        The predictors, in the order their blocks of columns appear.
    reference : dict, optional
        ``{column: level}``: the level left out (absorbed by the intercept). Default: the first
        level of each column (in ``levels`` order, else sorted).
    levels : dict, optional
        ``{column: [level, ...]}``: every level a column may take, in order. Default: the levels
        found in ``df`` (so a level no record has gets no column). Give them to build the same
        columns for another data set (e.g. new records to synthesize for).
    intercept : bool
        Start with a column of ones named "(Intercept)".

    Returns
    -------
    pandas.DataFrame
        (n, P) of 0.0/1.0 with columns "(Intercept)", then "column=level" for every non-reference
        level; ``.to_numpy()`` is the X the normal and mixture synthesizers take.

    Raises
    ------
    TypeError
        ``df`` is not a DataFrame.
    ValueError
        ``df`` has no rows; a column not in ``df``, or with missing values; a reference level, or a
        value in ``df``, that is not among the column's levels.

    Examples
    --------
    >>> import pandas as pd
    >>> design_matrix(pd.DataFrame({"Earner": ["Earner", "Non-earner"]}), ["Earner"]).columns.tolist()
    ['(Intercept)', 'Earner=Non-earner']
    """
    import pandas as pd

    if not isinstance(df, pd.DataFrame):
        raise TypeError(f"df must be a pandas DataFrame (one row per record), got {type(df).__name__}; "
                        "pd.DataFrame(...) makes one from a dict of columns")
    if len(df) == 0:
        raise BadArgument("df has no rows: a design matrix needs at least one record")
    if isinstance(columns, str):
        raise TypeError(f"columns must be a list of column names, got the string {columns!r}")
    columns = list(columns)
    reference, levels = dict(reference or {}), dict(levels or {})
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise BadArgument(f"columns {missing} are not in the data; it has {list(df.columns)}")
    for name, given in (("reference", reference), ("levels", levels)):
        extra = sorted(set(given) - set(columns))
        if extra:
            raise BadArgument(f"{name} names {extra}, which are not among columns {columns}")
    blocks = {"(Intercept)": np.ones(len(df))} if intercept else {}
    for col in columns:
        missing_values = int(df[col].isna().sum())
        if missing_values:  # as text, NaN would become a level of its own, "nan", without a word
            raise BadArgument(f"column {col!r} has {missing_values} missing value(s); drop or impute those records "
                             "first, or make missingness an explicit level (e.g. fillna('missing'))")
        values = df[col].to_numpy()
        col_levels = list(levels[col]) if col in levels else sorted(pd.unique(values), key=str)
        unknown = sorted({str(v) for v in pd.unique(values)} - {str(v) for v in col_levels})
        if unknown:
            raise BadArgument(f"column {col!r} has values {unknown} that are not among its levels {col_levels}")
        ref = reference.get(col, col_levels[0])
        if str(ref) not in {str(v) for v in col_levels}:
            raise BadArgument(f"reference level {ref!r} of column {col!r} is not one of its levels {col_levels}")
        text = values.astype(str)
        for level in col_levels:
            if str(level) != str(ref):
                blocks[f"{col}={level}"] = (text == str(level)).astype(float)
    return pd.DataFrame(blocks, index=df.index)


def independent_columns(X: "pd.DataFrame", *, tol: float = 1e-9) -> "pd.DataFrame":
    """The columns of ``X`` that are not linear combinations of the columns before them.

    Nested predictors make one-hot blocks collinear: in the CE sample a unit is rural exactly when
    its urban type is rural, so "Urban=Urban" is one minus "UrbanType=Rural" (with the intercept),
    and a regression on both has a direction that only its prior identifies. A QR design
    (``stan/mixture.stan``) needs full column rank, so the later of two such columns is left out;
    the model's fitted values, its likelihood and the synthetic data are the same, because the
    left-out column adds nothing to the span of the others.

    Parameters
    ----------
    X : pandas.DataFrame, shape (n, P)
        A design matrix, e.g. from :func:`ppmlib.design_matrix`.
    tol : float
        A column is dependent when its residual after projecting on the kept columns has a norm
        below ``tol`` times its own norm (or it is all zeros).

    Returns
    -------
    pandas.DataFrame
        The kept columns, in their order; ``.attrs["dropped"]`` lists the names of the others.

    Examples
    --------
    >>> import pandas as pd
    >>> X = pd.DataFrame({"(Intercept)": [1.0, 1, 1], "a": [0.0, 1, 1], "b": [1.0, 0, 0]})
    >>> kept = independent_columns(X)
    >>> list(kept.columns), kept.attrs["dropped"]
    (['(Intercept)', 'a'], ['b'])
    """
    values = np.asarray(X, dtype=float)
    basis = np.empty((values.shape[0], 0))   # an orthonormal basis of the kept columns
    kept, dropped = [], []
    for j, name in enumerate(X.columns):
        column = values[:, j]
        residual = column - basis @ (basis.T @ column)
        residual -= basis @ (basis.T @ residual)   # twice: Gram-Schmidt keeps its orthogonality
        norm = np.linalg.norm(column)
        if norm == 0 or np.linalg.norm(residual) <= tol * norm:
            dropped.append(name)
            continue
        basis = np.column_stack([basis, residual / np.linalg.norm(residual)])
        kept.append(name)
    out = X[kept].copy()
    out.attrs["dropped"] = dropped
    return out


def interaction_design(df: "pd.DataFrame", columns, *, levels: dict | None = None) -> "pd.DataFrame":
    """The main-effect design of ``columns`` with every pairwise interaction of their levels, shape (n, P).

    The columns of :func:`design_matrix`, then for every pair of predictors the products of their
    non-reference columns ("a=x:b=y"); products no record has (all zero) and columns spanned by the
    ones before them are dropped (:func:`independent_columns`), so the design has full rank on
    ``df``. With two predictors this is the full cell-means design (one mean per combination seen).

    Parameters
    ----------
    df : pandas.DataFrame
        One row per record.
    columns : sequence of str
        The categorical predictors.
    levels : dict, optional
        As for :func:`design_matrix`.

    Returns
    -------
    pandas.DataFrame
        (n, P) of 0.0/1.0: "(Intercept)", the main effects, then the interactions kept.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"a": ["x", "y", "y", "x"], "b": ["u", "u", "v", "v"]})
    >>> interaction_design(df, ["a", "b"]).columns.tolist()
    ['(Intercept)', 'a=y', 'b=v', 'a=y:b=v']
    """
    import pandas as pd

    main = design_matrix(df, columns, levels=levels)
    blocks = {name: main[name] for name in main.columns}
    names = list(columns)
    for i, first in enumerate(names):
        for second in names[i + 1:]:
            for left in (c for c in main.columns if c.startswith(f"{first}=")):
                for right in (c for c in main.columns if c.startswith(f"{second}=")):
                    product = main[left] * main[right]
                    if product.any():
                        blocks[f"{left}:{right}"] = product
    return independent_columns(pd.DataFrame(blocks, index=df.index))
