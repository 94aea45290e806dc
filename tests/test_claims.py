"""ppmlib.book.claims: the claims table, its check and the closing finish call."""
import pytest

import ppmlib


def test_claims_table_and_check():
    claims = ppmlib.Claims()
    claims.add("a holds", "x", "y", True)
    claims.add("b is only reported", "x", "y", False, checked=False)
    assert list(claims.table()["reproduced?"]) == ["yes", "NO (reported, not asserted)"]
    claims.check()  # the failing row is not asserted
    claims.add("c fails", "x", "y", False)
    with pytest.raises(AssertionError, match="claims not reproduced: c fails"):
        claims.check()


def test_claims_finish_asserts_only_when_asked():
    c = ppmlib.Claims()
    c.add("holds", "p", "o", True)
    c.add("fails", "p", "o", False)
    assert list(c.finish(False)["reproduced?"]) == ["yes", "NO"]
    with pytest.raises(AssertionError, match="claims not reproduced: fails"):
        c.finish(True)
