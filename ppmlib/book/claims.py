"""Claims tables: each row a claim of the papers, the published value, ours, and whether it holds.

A chapter adds rows as it computes, shows :meth:`Claims.table`, and calls :meth:`Claims.check`
(unless its ``check_claims`` parameter is off) so that a rerun with new parameters fails loudly
when a claim no longer holds.
"""
from __future__ import annotations

__all__ = ["Claims"]

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pandas is imported when a table is made, not with ppmlib
    import pandas as pd


@dataclass
class Claims:
    """A growing table of claims: rows of dicts with claim, paper, ours, holds and checked.

    Attributes
    ----------
    rows : list of dict
        The claims so far.

    Examples
    --------
    >>> claims = Claims()
    >>> claims.add("LW's Delta is below the unweighted one", "2020 paper, section 3.1", "3.2 < 11.0", 3.2 < 11.0)
    True
    >>> claims.finish(check_claims=True)["reproduced?"].tolist()
    ['yes']
    >>> claims.add("Delta below 1", "(ours)", "3.2", 3.2 < 1)
    False
    >>> claims.finish(check_claims=True)
    Traceback (most recent call last):
    AssertionError: claims not reproduced: Delta below 1
    """
    rows: list = field(default_factory=list)

    def add(self, claim: str, paper: str, ours: str, holds: bool, checked: bool = True) -> bool:
        """Record one claim. ``checked=False`` marks a row reported honestly but not asserted.

        Parameters
        ----------
        claim : str
            What is claimed.
        paper : str
            The paper's (or the expected) value.
        ours : str
            Our value.
        holds : bool
            Whether it reproduces.
        checked : bool
            Assert it in :meth:`ppmlib.Claims.finish`.

        Returns
        -------
        bool
            ``holds``.
        """
        self.rows.append({"claim": claim, "paper": paper, "ours": ours, "holds": bool(holds), "checked": checked})
        return bool(holds)

    def table(self) -> pd.DataFrame:
        """The claims as a DataFrame: claim, paper, ours, reproduced? ("yes", "NO", or a note that
        the row was reported and not asserted).

        Returns
        -------
        pandas.DataFrame
        """
        import pandas as pd
        df = pd.DataFrame(self.rows, columns=["claim", "paper", "ours", "holds", "checked"])
        df["reproduced?"] = [("yes" if h else "NO") + ("" if c else " (reported, not asserted)")
                             for h, c in zip(df["holds"], df["checked"])]
        return df[["claim", "paper", "ours", "reproduced?"]]

    def check(self) -> None:
        """Raise AssertionError naming every checked claim that does not hold."""
        failed = [r["claim"] for r in self.rows if r["checked"] and not r["holds"]]
        if failed:
            raise AssertionError("claims not reproduced: " + "; ".join(failed))

    def finish(self, check_claims: bool) -> pd.DataFrame:
        """The table, after asserting the checked claims when ``check_claims`` is true.

        The one call a chapter's closing claims cell makes: a rerun whose claims fail stops here
        with the list of claims that did not hold.

        Parameters
        ----------
        check_claims : bool
            Assert the checked claims.

        Returns
        -------
        pandas.DataFrame
            :meth:`ppmlib.Claims.table`.

        Raises
        ------
        AssertionError
            A checked claim does not hold (the message lists them).
        """
        if check_claims:
            self.check()
        return self.table()
