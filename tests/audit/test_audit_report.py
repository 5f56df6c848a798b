"""The audit's files and table: escaped CSV cells, the swapped answer in both terms, caveats shown."""

from __future__ import annotations

import csv
import json

from viddiff.audit.metrics import AuditRecord, score_audit
from viddiff.audit.report import csv_row, format_audit_table, write_audit


def record(key: str, description: str, gt, original, swapped, same) -> AuditRecord:
    return AuditRecord(
        sample_key="s0", split="easy", action="fitness_1", action_name="squat", key=key, description=description,
        gt=gt, original=original, swapped=swapped, same=same,
    )


def test_csv_escapes_formulas_and_states_the_swapped_answer_in_original_terms(tmp_path):
    records = [
        record("0", "=HYPERLINK(\"http://x\")", "a", "a", "b", "c"),
        record("1", "the stance is wider", "b", "c", "a", None),
    ]
    metrics = score_audit(records, "closed")
    write_audit(tmp_path, metrics, {"metrics": "stub", "dataset": {"source": "d", "revision": None}, "method": "m",
                                     "counts": {"samples": 1, "statements": 2}, "seed": 0, "timestamp": "t",
                                     "viddiff_version": "v", "runs": {}, "notes": ["Forced choice: because."]})
    rows = list(csv.DictReader((tmp_path / "differences.csv").open()))
    assert rows[0]["description"] == "'=HYPERLINK(\"http://x\")"
    assert (rows[0]["swapped"], rows[0]["swapped_flipped_back"], rows[0]["flipped"]) == ("b", "a", "True")
    assert (rows[0]["correct_original"], rows[0]["correct_swapped"]) == ("True", "True")
    # undecided in the original order: no flip to speak of; "a" swapped is right for a "b" truth flipped
    assert (rows[1]["flipped"], rows[1]["correct_original"], rows[1]["correct_swapped"]) == ("", "False", "True")
    assert json.loads((tmp_path / "metrics.json").read_text())["metrics"] == "stub"
    report = (tmp_path / "report.md").read_text()
    assert "> Forced choice: because." in report and "## Per difference, worst first" in report
    assert "| fitness_1 |" in report


def test_unlabelled_statements_have_no_correctness():
    row = csv_row(record("0", "x", None, "b", "a", "c"))
    assert row["correct_original"] is None and row["correct_swapped"] is None and row["flipped"] is True


def test_console_table_shows_n_and_leaves_undefined_numbers_blank():
    metrics = score_audit([record(str(i), f"d{i}", None, "a", "a", "c") for i in range(3)], "open")
    text = format_audit_table(metrics, ["Open mode: no ground truth."])
    assert "Answer-consistency audit (open)" in text and "Open mode: no ground truth." in text
    all_row = next(line for line in text.splitlines() if line.startswith("all"))
    assert "0.0 (3)" in all_row and "100.0 (3)" in all_row  # flip 0 of 3; a-share 3 of 3
    assert all_row.split()[-1] == "-"  # no pair accuracy without ground truth
