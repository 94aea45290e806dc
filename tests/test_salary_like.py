"""The shipped salary stand-in is what the generator makes and has the paper's four summaries."""
import numpy as np
import pytest

from ppmlib.datasets import salary_like


def test_regenerates_the_shipped_file_byte_for_byte(tmp_path):
    fresh = salary_like.write(tmp_path / "salary_like.csv")
    assert fresh.read_bytes() == salary_like.DATA_FILE.read_bytes()
    assert not list(tmp_path.glob(".salary_like.*"))  # no temporary file left behind


@pytest.mark.parametrize("source", ["shipped file", "seed 5"])
def test_has_the_summaries_the_2025_paper_publishes(source):
    # the construction hits the summaries for any seed, not only for the shipped file's
    x = salary_like.load() if source == "shipped file" else salary_like.generate(seed=5)["salary"].to_numpy()
    s = salary_like.summaries(x)
    assert x.size == 1000 and x.dtype == np.int64
    assert s["mean"] == 107_609            # exact: the rounding remainder is put back
    assert s["median"] == 95_000
    assert abs(s["sd"] - 69_718) < 1       # to the dollar
    assert (s["min"], s["max"]) == (0, 509_000)
    assert np.mean(x > 200_000) < 0.15     # right-skewed: a long upper tail, not a uniform spread
