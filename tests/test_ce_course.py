"""The course's CE sample: the file the slides use, byte for byte, with the slides' n and units."""
import hashlib
from pathlib import Path

import numpy as np

from ppmlib.datasets import ce_course

DATA = Path(__file__).resolve().parents[1] / "data"


def test_the_file_is_the_courses_and_its_card_says_so():
    digest = hashlib.sha256((DATA / "ce_course.csv").read_bytes()).hexdigest()
    card = (DATA / "README.md").read_text()
    assert digest in card, "the data card's SHA-256 is not the shipped file's"
    assert "# Data card: `ce_course.csv`" in card


def test_it_holds_the_slides_994_units_and_their_units_8_and_10():
    frame = ce_course.load()
    assert len(frame) == 994 == ce_course.N_UNITS and frame.notna().all().all()
    y, x = ce_course.log_scale(frame)
    # the slides: CU 8 has log income 11.6 and log expenditure 9.8; CU 10 has 11.6 and 9.5
    assert (y[7], x[7], y[9], x[9]) == (11.6, 9.8, 11.6, 9.5)
    assert sorted(frame["Race"].unique()) == [1, 2, 3, 4, 5, 6] and sorted(frame["UrbanRural"].unique()) == [1, 2]
    raw, _ = ce_course.log_scale(frame, decimals=None)
    np.testing.assert_allclose(raw, np.log(frame["Income"].to_numpy(float)))
