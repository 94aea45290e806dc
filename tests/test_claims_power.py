"""Claims with power: an asserted claim states the quantity it tests and that quantity without the
effect, and a claim that holds on both "survives its own negation" and is only reported.

The last test scans the chapters this rule has been applied to (their code cells and their study
modules): every asserted claim there declares its effect. Add a chapter to CHAPTERS once its
claims do.
"""
import ast
import re
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

import ppmlib
from ppmlib.book.claims import NO_POWER
from ppmlib.mechanism.guarantee import LooCheck, by_record_margins
from ppmlib.studies.reweighting import _weight_loss_claim
from ppmlib.mechanism.weights import reweight

ROOT = Path(__file__).resolve().parents[1]
# chapter -> the study modules whose claims it shows
CHAPTERS = {"vector_weighted.md": ["vector_weighted.py"], "reweighting.md": ["reweighting.py"],
            "salary.md": ["reweighting.py"], "dp_definitions.md": ["dp_definitions.py"],
            "privacy_audit.md": ["privacy_audit.py"], "asymptotic_dp.md": ["asymptotic_dp.py"],
            "attribute_risk.md": ["attribute_risk.py"], "ce_income.md": ["ce_income.py"],
            "real_wages.md": [], "multivariate.md": ["multivariate.py"],
            "against_alternatives.md": ["against_alternatives.py"]}


def test_a_claim_with_power_is_asserted():
    claims = ppmlib.book.claims.Claims()
    assert claims.add("SW is wider", "p", "1.5", lambda v: v > 1.2, value=1.5, null=1.0)
    row = claims.rows[0]
    assert row["checked"] and row["power"] and row["null"] == 1.0
    assert claims.table().loc[0, "without the effect"] == "1: fails"
    claims.add("SW is much wider", "p", "1.1", lambda v: v > 1.2, value=1.1, null=1.0)
    with pytest.raises(AssertionError, match="claims not reproduced: SW is much wider"):
        claims.finish(check_claims=True)


def test_a_claim_that_survives_its_negation_is_only_reported():
    # the matched SW weight's band 0.30-0.45 also holds for 0.43, a seed's value without any effect
    claims = ppmlib.book.claims.Claims()
    assert not claims.add("a in band", "0.375", "0.29", lambda a: 0.30 <= a <= 0.45, value=0.29, null=0.43)
    row = claims.rows[0]
    assert (row["checked"], row["power"], row["holds"]) == (False, False, False)
    table = claims.finish(check_claims=True)  # not asserted: no AssertionError although it does not hold
    assert table.loc[0, "reproduced?"] == f"NO ({NO_POWER})"
    assert table.loc[0, "without the effect"] == "0.43: holds too"


def test_tuples_and_reported_rows():
    claims = ppmlib.book.claims.Claims()
    claims.add("flattens", "p", "o", lambda v: v[1] < v[0], value=(0.5, 0.1), null=(0.5, 0.5))
    claims.add("reported", "p", "o", True, checked=False)
    table = claims.table()
    assert list(table["without the effect"]) == ["(0.5, 0.5): fails", ""]
    assert list(table["reproduced?"]) == ["yes", "yes (reported, not asserted)"]


@pytest.mark.parametrize("kwargs, message", [
    (dict(holds=lambda v: v > 0, value=1.0), "needs value= and null="),
    (dict(holds=lambda v: v > 0, null=0.0), "needs value= and null="),
    (dict(holds=True, null=0.0), "need holds to be a predicate, got bool"),
])
def test_bad_claims_are_refused(kwargs, message):
    with pytest.raises(TypeError, match=message):
        ppmlib.book.claims.Claims().add("c", "p", "o", **kwargs)


def _synthesis(weights, bounds):
    weights, bounds = np.asarray(weights, float), np.asarray(bounds, float)
    return SimpleNamespace(weights=weights, bounds=bounds, delta=float(bounds.max()))


def test_weight_loss_claim_names_the_records_the_formula_makes_lose():
    # F_i = Delta_i / alpha_i = 4, 5.571, 6, 8; Delta = 4 (the last record); k = 0.95 -> k Delta = 3.8:
    # alpha^w = 3.8 / F = 0.95, 0.682, 0.633, 0.475: records 1 and 3 (Delta_i 3.9 and 4 > 3.8) lose
    before = _synthesis([0.8, 0.7, 0.5, 0.5], [3.2, 3.9, 3.0, 4.0])
    after = SimpleNamespace(weights=reweight(before.weights, before.bounds, 0.95))
    np.testing.assert_allclose(after.weights, [0.95, 3.8 * 0.7 / 3.9, 3.8 / 6, 0.475])
    claims = ppmlib.book.claims.Claims()
    assert _weight_loss_claim(claims, "LW", before, after, 0.95) is None
    row = claims.rows[0]
    # reported: it has power only where some record loses, too rarely for the ledgers' rule
    assert (row["holds"], row["checked"], row["power"], row["null"]) == (True, False, True, 2)
    assert "2 lose (50.0%), 0 not predicted" in row["ours"] and "the record at the maximum loses" in row["ours"]
    # a consequence of the formula: a count of 0 has no room to move towards its null, and states so
    assert (row["margin"], row["stated margin"]) == (0.0, 0)
    # k = 2 = F_max / Delta: every record gains: the claim says no more than the paper's, so it is reported
    after = SimpleNamespace(weights=reweight(before.weights, before.bounds, 2.0))
    _weight_loss_claim(claims, "LW", before, after, 2.0)
    assert (claims.rows[1]["holds"], claims.rows[1]["checked"], claims.rows[1]["power"]) == (True, False, False)


def test_by_record_margins_by_hand():
    check = LooCheck(name="x", weights=np.array([1.0, 0.5, 0.0]), delta=2.0,
                     record_bounds=np.array([2.0, 0.5, 0.0]), grid=np.zeros(1),
                     ratio=np.array([3.0, 0.8, 0.0]), central=(0.0, 1.0), ratio_central=np.zeros(3))
    own, smallest = by_record_margins(check)
    assert own == pytest.approx(max(3.0 / 4.0, 0.8 / 1.0))  # 0.8: the second record's ratio over its own 2 Delta_i
    assert smallest == pytest.approx(3.0 / 1.0)              # the largest ratio over the smallest 2 Delta_j


def _code_cells(chapter: Path) -> str:
    """The chapter's code cells as one Python source (cell options and magics left out)."""
    cells = re.findall(r"```\{code-cell\}[^\n]*\n(.*?)```", chapter.read_text(), flags=re.S)
    out = []
    for cell in cells:
        lines = cell.splitlines()
        if lines and lines[0].strip() == "---":  # a YAML block of cell options
            lines = lines[lines.index("---", 1) + 1:]
        out += [line for line in lines if not line.startswith((":", "%", "!"))]
    return "\n".join(out)


def _asserted_without_effect(source: str) -> list[int]:
    """Lines of ``x.add(claim, paper, ours, holds, ...)`` calls that may assert without a null."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "add"
                and len(node.args) >= 4):
            continue
        keywords = {k.arg: k.value for k in node.keywords}
        reported = isinstance(keywords.get("checked"), ast.Constant) and keywords["checked"].value is False
        if not reported and "null" not in keywords:
            lines.append(node.lineno)
    return lines


@pytest.mark.parametrize("chapter", sorted(CHAPTERS))
def test_every_asserted_claim_declares_its_effect(chapter):
    sources = {f"book/{chapter}": _code_cells(ROOT / "book" / chapter)}
    sources.update({f"ppmlib/studies/{m}": (ROOT / "ppmlib" / "studies" / m).read_text() for m in CHAPTERS[chapter]})
    found = {name: _asserted_without_effect(src) for name, src in sources.items()}
    assert "claims.finish" in sources[f"book/{chapter}"]
    assert not any(found.values()), f"claims asserted without null= (their effect): {found}"
