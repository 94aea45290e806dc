"""Claims tables: each row a claim of the papers, the published value, ours, and whether it holds.

A chapter adds rows as it computes, shows :meth:`Claims.table`, and calls :meth:`Claims.finish`
(asserting unless its ``check_claims`` parameter is off) so that a rerun with new parameters fails
loudly when a claim no longer holds.

A claim is asserted only if it has power: it is given as a predicate on the quantity it tests,
with ``null``, the quantity as it would be without the effect the claim is about (equal
weights, no difference, the paper's effect removed). The predicate must hold on ``value`` and
fail on ``null``; a claim that also holds on ``null`` "survives its own negation" and is
reported, never asserted.

A claim given with its effect also gets a *margin*: the share of the straight way from its value
to its null that the value can travel and the claim still holds (:func:`ppmlib.book.claims.margin_of`). 0 is a value
on its threshold, 0.25 a threshold a quarter of the way from the value to the null. Each claim
states the margin it should keep (``margin=``, default :data:`STATED_MARGIN`); the seed ledgers
record both on every seed, and a test over the ledgers asks every asserted claim to keep its
stated margin on at least eight seeds, four of them drawn at random.
"""
from __future__ import annotations

__all__ = ["Claims", "STATED_MARGIN", "margin_of"]

import functools
import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:  # pandas is imported when a table is made, not with ppmlib
    import pandas as pd

NO_POWER = "reported, not asserted: it holds without the effect too"

#: The margin a claim states unless it says otherwise: its value a tenth of the way from its null
#: inside the threshold.
STATED_MARGIN = 0.1

_GRID = 200        # steps from the value to the null when looking for the first one that fails
_BISECTIONS = 30   # then halvings of the step where it first fails


def _numbers(x) -> list[float] | None:
    """A claim's quantity as a flat list of floats, or None when it is not a number or numbers
    (a bool, a string, an empty sequence, NaN or infinity)."""
    items = list(x) if isinstance(x, (tuple, list)) else [x]
    if not items or any(isinstance(v, (bool, str, bytes)) for v in items) or \
            any(type(v).__name__ == "bool_" for v in items):
        return None
    try:
        numbers = [float(v) for v in items]
    except (TypeError, ValueError):
        return None
    return numbers if all(math.isfinite(v) for v in numbers) else None


def margin_of(holds: Callable[[Any], bool], value: Any, null: Any, scale: str = "linear") -> float | None:
    """How far inside its threshold a claim's value sits: the share of the straight way from
    ``value`` to ``null`` over which ``holds`` stays true.

    The claim is tested on ``value + t (null - value)`` (element by element for a tuple or list),
    first on a grid of t from 0 to 1, then by bisection of the first step where it fails, so a
    predicate with several thresholds gets the nearest. For ``lambda r: r < 0.5`` with value 0.3
    and null 1 the margin is (0.5 - 0.3) / (1 - 0.3) = 0.286. On the ``"log"`` scale the way runs
    through ``value * (null / value) ** t``: for a quantity that spans orders of magnitude, such as
    a numerical gap of 1e-11 against a limit of 1e-6 and a null of 40.

    Parameters
    ----------
    holds : callable
        The claim's predicate.
    value, null : number or sequence of numbers
        The quantity and the quantity without the effect, of the same length.
    scale : {"linear", "log"}
        The scale of the way from value to null (``"log"``: positive numbers only).

    Returns
    -------
    float or None
        In [0, 1]; None when the claim does not hold on its value, holds on its null, or its
        quantities are not numbers of the same length (or, on the log scale, not positive): a
        margin is then undefined.

    Raises
    ------
    ValueError
        A scale other than "linear" or "log".

    Examples
    --------
    >>> round(margin_of(lambda r: r < 0.5, 0.3, 1.0), 3)
    0.286
    >>> round(margin_of(lambda v: -0.005 < v[0] and v[1] < 0.005, (-0.002, 0.003), (0.013, 0.018)), 3)
    0.133
    >>> margin_of(lambda r: r < 0.5, 0.7, 1.0) is None   # it does not hold
    True
    >>> round(margin_of(lambda gap: gap < 1e-6, 1e-11, 10.0, scale="log"), 3)   # 5 of 12 orders of magnitude
    0.417
    """
    if scale not in ("linear", "log"):
        raise ValueError(f"scale must be 'linear' or 'log', got {scale!r}")
    start, end = _numbers(value), _numbers(null)
    if start is None or end is None or len(start) != len(end):
        return None
    if scale == "log":
        if min(start + end) <= 0:
            return None
        start, end = [math.log(v) for v in start], [math.log(v) for v in end]
    scalar = not isinstance(value, (tuple, list))

    def holds_at(t: float) -> bool:
        point = [(1 - t) * a + t * b for a, b in zip(start, end)]   # exactly the value at t = 0 and the null at t = 1
        if scale == "log":
            point = [math.exp(v) for v in point]
        try:
            return bool(holds(point[0] if scalar else type(value)(point)))
        except Exception:   # a predicate that cannot take the point: as far as it is concerned, it fails
            return False

    if not holds_at(0.0) or holds_at(1.0):
        return None
    inside = 0.0
    for k in range(1, _GRID + 1):
        if not holds_at(k / _GRID):
            outside = k / _GRID
            break
        inside = k / _GRID
    for _ in range(_BISECTIONS):
        middle = (inside + outside) / 2
        inside, outside = (middle, outside) if holds_at(middle) else (inside, middle)
    return inside


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
            value: Any = None, null: Any = None, margin: float = STATED_MARGIN, margin_scale: str = "linear") -> bool:
        """Record one claim. ``checked=False`` marks a row reported honestly but not asserted.

        Give an asserted claim with its effect: ``holds`` a predicate, ``value`` the quantity it
        tests and ``null`` that quantity without the effect. The claim holds if
        ``holds(value)``; it has power if ``holds(null)`` is false. A claim without power is
        recorded as reported, not asserted, whatever ``checked`` says. A plain bool ``holds``
        declares no effect (use it for reported rows). The row records the claim's
        :func:`ppmlib.book.claims.margin_of` (None where it is undefined) and the ``margin`` it states.

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
        margin : float
            The margin the claim states (a share of the way from its value to its null, between
            0 and 1): the ledgers' test asks an asserted claim to keep it on every seed.
        margin_scale : {"linear", "log"}
            The scale of :func:`ppmlib.book.claims.margin_of`'s way from value to null (``"log"`` for a quantity that
            spans orders of magnitude, such as a numerical error against its limit).

        Returns
        -------
        bool
            Whether the claim holds.

        Raises
        ------
        TypeError
            A predicate without ``value`` or ``null``, or ``value``/``null`` with a plain bool.
        ValueError
            A stated margin outside [0, 1).
        """
        if not 0 <= margin < 1:
            raise ValueError(f"claim {claim!r}: margin must be a share of the way to the null in [0, 1), got {margin!r}")
        power, kept = None, None
        if callable(holds):
            if value is None or null is None:
                raise TypeError(f"claim {claim!r}: a predicate needs value= and null= (the quantity without the effect)")
            power = not bool(holds(null))
            kept = margin_of(holds, value, null, margin_scale) if power else None
            holds = holds(value)
            checked = checked and power
        elif value is not None or null is not None:
            raise TypeError(f"claim {claim!r}: value= and null= need holds to be a predicate, got {type(holds).__name__}")
        self.rows.append({"claim": claim, "paper": paper, "ours": ours, "holds": bool(holds), "checked": checked,
                          "null": null, "power": power, "margin": kept, "stated margin": margin})
        return bool(holds)

    def table(self) -> pd.DataFrame:
        """The claims as a DataFrame: claim, paper, ours, without the effect (the null quantity and
        whether the claim then fails), margin (the claim's :func:`ppmlib.book.claims.margin_of` and the margin it
        states; empty where undefined), reproduced? ("yes", "NO", or a note that the row was
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

        def margin_text(row):
            if row.get("margin") is None:
                return ""
            return f"{row['margin']:.2f} (states {row['stated margin']:g})"

        def verdict(row):
            note = "" if row["checked"] else f" ({NO_POWER})" if row.get("power") is False else \
                " (reported, not asserted)"
            return ("yes" if row["holds"] else "NO") + note

        df = pd.DataFrame({"claim": [r["claim"] for r in self.rows], "paper": [r["paper"] for r in self.rows],
                           "ours": [r["ours"] for r in self.rows],
                           "without the effect": [null_text(r) for r in self.rows],
                           "margin": [margin_text(r) for r in self.rows],
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
