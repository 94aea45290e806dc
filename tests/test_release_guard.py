"""The release bytes across a refactor: the command's main path (strict by default, local LW,
LW_final, CW to Parquet), its survey path and a Synthesis released from Python give, with the same
seeds, the files and manifests recorded in tests/oracles/release_guard.json (written by
tests/oracles/release_guard.py from the code before the change)."""
import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent / "oracles"))
import release_guard  # noqa: E402


@pytest.fixture(scope="module")
def found(tmp_path_factory):
    return release_guard.all_cases(tmp_path_factory.mktemp("guard"))


@pytest.mark.parametrize("case", [*release_guard.CASES, "library"])
def test_the_release_is_the_recorded_one(found, case):
    expected = json.loads(release_guard.FIXTURE.read_text())[case]
    assert found[case] == expected
