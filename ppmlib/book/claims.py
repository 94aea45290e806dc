"""Claims tables: each row a claim of the papers, the published value, ours, and whether it holds.

A chapter adds rows as it computes, shows :meth:`Claims.table`, and calls :meth:`Claims.finish`
(asserting unless its ``check_claims`` parameter is off) so that a rerun with new parameters fails
loudly when a claim no longer holds.

A claim is asserted only if it has power: it is given as a predicate on the quantity it tests,
with ``null``, the quantity as it would be without the effect the claim is about (equal
weights, no difference, the paper's effect removed). The predicate must hold on ``value`` and
fail on ``null``; a claim that also holds on ``null`` "survives its own negation" and is
reported, never asserted.
"""
from __future__ import annotations

__all__ = ["Claims"]

import functools
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:  # pandas is imported when a table is made, not with ppmlib
    import pandas as pd

NO_POWER = "reported, not asserted: it holds without the effect too"


def _shown(x: Any) -> str:
    """A null quantity for the table: numbers to 3 significant digits, tuples element by element."""
    if isinstance(x, (tuple, list)):
        return "(" + ", ".join(_shown(v) for v in x) + ")"
    try:
        return f"{float(x):.3g}"
    except (TypeError, ValueError):
        return str(x)


@dataclass
class Claims:
    """A growing table of claims: rows of dicts with claim, paper, ours, holds, checked and, for a
    claim given with its effect, null (the quantity without the effect) and power.

    Attributes
    ----------
    rows : list of dict
        The claims so far.

    Examples
    --------
    >>> claims = Claims()
    >>> claims.add("LW's Delta is below the unweighted one", "2020 paper, section 3.1", "3.2 vs 11.0",
    ...            lambda ratio: ratio < 0.6, value=3.2 / 11.0, null=1.0)
    True
    >>> claims.finish(check_claims=True)["reproduced?"].tolist()
    ['yes']
    >>> claims.add("Delta below 20", "(ours)", "3.2", lambda d: d < 20, value=3.2, null=11.0)  # 11 passes too
    True
    >>> claims.rows[-1]["checked"], claims.rows[-1]["power"]
    (False, False)
    >>> claims.add("Delta below 1", "(ours)", "3.2", lambda d: d < 1, value=3.2, null=11.0)
    False
    >>> claims.finish(check_claims=True)
    Traceback (most recent call last):
    AssertionError: claims not reproduced: Delta below 1
    """
    rows: list = field(default_factory=list)

    def add(self, claim: str, paper: str, ours: str, holds: bool | Callable[[Any], bool], checked: bool = True, *,
            value: Any = None, null: Any = None) -> bool:
        """Record one claim. ``checked=False`` marks a row reported honestly but not asserted.

        Give an asserted claim with its effect: ``holds`` a predicate, ``value`` the quantity it
        tests and ``null`` that quantity without the effect. The claim holds if
        ``holds(value)``; it has power if ``holds(null)`` is false. A claim without power is
        recorded as reported, not asserted, whatever ``checked`` says. A plain bool ``holds``
        declares no effect (use it for reported rows).

        Parameters
        ----------
        claim : str
            What is claimed.
        paper : str
            The paper's (or the expected) value.
        ours : str
            Our value, as the table shows it.
        holds : bool or callable
            Whether it reproduces, or the predicate that decides it from ``value``.
        checked : bool
            Assert it in :meth:`ppmlib.book.claims.Claims.finish` (if it has power).
        value : object, optional
            The quantity ``holds`` tests (required with a predicate).
        null : object, optional
            The quantity without the effect, or perturbed by the effect's size (required with a
            predicate).

        Returns
        -------
        bool
            Whether the claim holds.

        Raises
        ------
        TypeError
            A predicate without ``value`` or ``null``, or ``value``/``null`` with a plain bool.
        """
        power = None
        if callable(holds):
            if value is None or null is None:
                raise TypeError(f"claim {claim!r}: a predicate needs value= and null= (the quantity without the effect)")
            power = not bool(holds(null))
            holds = holds(value)
            checked = checked and power
        elif value is not None or null is not None:
            raise TypeError(f"claim {claim!r}: value= and null= need holds to be a predicate, got {type(holds).__name__}")
        self.rows.append({"claim": claim, "paper": paper, "ours": ours, "holds": bool(holds), "checked": checked,
                          "null": null, "power": power})
        return bool(holds)

    def table(self) -> pd.DataFrame:
        """The claims as a DataFrame: claim, paper, ours, without the effect (the null quantity and
        whether the claim then fails), reproduced? ("yes", "NO", or a note that the row was
        reported and not asserted, and why).

        Returns
        -------
        pandas.DataFrame
        """
        import pandas as pd

        def null_text(row):
            if row.get("power") is None:
                return ""
            return f"{_shown(row['null'])}: " + ("fails" if row["power"] else "holds too")

        def verdict(row):
            note = "" if row["checked"] else f" ({NO_POWER})" if row.get("power") is False else \
                " (reported, not asserted)"
            return ("yes" if row["holds"] else "NO") + note

        df = pd.DataFrame({"claim": [r["claim"] for r in self.rows], "paper": [r["paper"] for r in self.rows],
                           "ours": [r["ours"] for r in self.rows],
                           "without the effect": [null_text(r) for r in self.rows],
                           "reproduced?": [verdict(r) for r in self.rows]})
        return _full_width_table()(df)

    def check(self) -> None:
        """Raise AssertionError naming every checked claim that does not hold."""
        failed = [r["claim"] for r in self.rows if r["checked"] and not r["holds"]]
        if failed:
            raise AssertionError("claims not reproduced: " + "; ".join(failed))

    def finish(self, check_claims: bool) -> pd.DataFrame:
        """The table, after asserting the checked claims when ``check_claims`` is true.

        The one call a chapter's closing claims cell makes: a rerun whose claims fail stops here
        with the list of claims that did not hold. Every run, smoke runs included, has already
        tested each claim given with its effect for power (:meth:`ppmlib.book.claims.Claims.add`) and shows
        the verdict in the table.

        Parameters
        ----------
        check_claims : bool
            Assert the checked claims.

        Returns
        -------
        pandas.DataFrame
            :meth:`ppmlib.book.claims.Claims.table`.

        Raises
        ------
        AssertionError
            A checked claim does not hold (the message lists them).
        """
        if check_claims:
            self.check()
        return self.table()


@functools.cache
def _full_width_table() -> type:
    """A DataFrame type that shows its cells in full: pandas cuts every cell at 50 characters
    (``display.max_colwidth``), which would cut a claim's sentence in the book's tables."""
    import pandas as pd

    class ClaimsTable(pd.DataFrame):
        @property
        def _constructor(self):
            return pd.DataFrame  # a slice or a computation on the table is an ordinary frame

        def _repr_html_(self):
            with pd.option_context("display.max_colwidth", None):
                return super()._repr_html_()

        def __repr__(self):
            with pd.option_context("display.max_colwidth", None):
                return super().__repr__()

    return ClaimsTable
