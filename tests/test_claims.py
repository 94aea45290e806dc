"""ppmlib.book.claims: the claims table, its check and the closing finish call."""
import pytest

import ppmlib


def test_claims_table_and_check():
    claims = ppmlib.book.claims.Claims()
    claims.add("a holds", "x", "y", True)
    claims.add("b is only reported", "x", "y", False, checked=False)
    assert list(claims.table()["reproduced?"]) == ["yes", "NO (reported, not asserted)"]
    claims.check()  # the failing row is not asserted
    claims.add("c fails", "x", "y", False)
    with pytest.raises(AssertionError, match="claims not reproduced: c fails"):
        claims.check()


def test_claims_finish_asserts_only_when_asked():
    c = ppmlib.book.claims.Claims()
    c.add("holds", "p", "o", True)
    c.add("fails", "p", "o", False)
    assert list(c.finish(False)["reproduced?"]) == ["yes", "NO"]
    with pytest.raises(AssertionError, match="claims not reproduced: fails"):
        c.finish(True)


def test_the_claims_table_shows_every_sentence_in_full():
    sentence = "LW's local bounds lie far below the Unweighted ones at every size of database we tried"
    c = ppmlib.book.claims.Claims()
    c.add(sentence, "App. D", "LW 95th pct 2.10 < Unweighted 5th pct 3.40 over two hundred databases", True)
    table = c.finish(False)
    assert sentence in table._repr_html_() and sentence in repr(table)   # pandas alone cuts at 50 characters
    assert type(table[["claim"]]).__name__ == "DataFrame"                # a slice is an ordinary frame
