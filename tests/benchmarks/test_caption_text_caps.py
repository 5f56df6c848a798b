"""``data.max_text_chars`` at load for IF-VidCap and VidCapBench, as for the other benchmarks: a 10 MiB field in
a dataset file fails ``viddiff data check`` (exit 2) with one message naming the file, the row and the field,
instead of passing and stopping a run later at the judge."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from viddiff.benchmarks.ifvidcap.data import CHECKLIST_FILE, META_FILE, PROMPT_FILE
from viddiff.benchmarks.ifvidcap.synthetic import write_synthetic_ifvidcap
from viddiff.benchmarks.vidcapbench.synthetic import QA_FILE, write_synthetic_vidcapbench
from viddiff.cli import main

HUGE = "x" * (10 * 1024 * 1024)


@pytest.fixture(scope="module")
def ifvidcap_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("ifvidcap")
    write_synthetic_ifvidcap(out, videos=2, seed=4)
    return out


@pytest.fixture(scope="module")
def vidcapbench_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("vidcapbench")
    write_synthetic_vidcapbench(out, videos=2, seed=1)
    return out


def _check(benchmark: str, dataset: Path, capsys: pytest.CaptureFixture, *sets: str) -> tuple[int, str]:
    capsys.readouterr()
    code = main(["data", "check", "--benchmark", benchmark, "--dataset", str(dataset), *(a for s in sets for a in ("--set", s))])
    out = capsys.readouterr()
    return code, out.out + out.err


def _edit_json(path: Path, edit) -> None:
    data = json.loads(path.read_text(encoding="utf-8"))
    edit(data)
    path.write_text(json.dumps(data), encoding="utf-8")


def _copy(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst)
    return dst


def test_ifvidcap_fields_past_the_cap_fail_data_check_naming_file_row_and_field(
    ifvidcap_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    assert _check("ifvidcap", ifvidcap_dir, capsys)[0] == 0
    first = next(iter(json.loads((ifvidcap_dir / PROMPT_FILE).read_text())))

    prompt = _copy(ifvidcap_dir, tmp_path / "prompt")
    _edit_json(prompt / PROMPT_FILE, lambda d: d[first][1].update(generated_prompt=HUGE))
    code, text = _check("ifvidcap", prompt, capsys)
    assert code == 2 and len(text) < 800
    assert f"{PROMPT_FILE}: video '{first}' prompt 1: field 'generated_prompt'" in text
    assert "10,485,760 characters, more than data.max_text_chars=20,000" in text

    checklist = _copy(ifvidcap_dir, tmp_path / "checklist")
    _edit_json(checklist / CHECKLIST_FILE,
               lambda d: d[first][2]["checklist"]["open_ended_check"][0]["check_items"][0].update(question=HUGE))
    code, text = _check("ifvidcap", checklist, capsys)
    assert code == 2 and len(text) < 800
    assert f"{CHECKLIST_FILE}: video '{first}' checklist 2: field 'open_ended_check[0].check_items[0].question'" in text

    meta = _copy(ifvidcap_dir, tmp_path / "meta")
    _edit_json(meta / META_FILE, lambda d: d[first].update(processed_path=HUGE))
    code, text = _check("ifvidcap", meta, capsys)
    assert code == 2 and f"{META_FILE}: video '{first}': field 'processed_path'" in text and len(text) < 800
    # the cap is a setting: raised past the field, the file loads again
    assert _check("ifvidcap", prompt, capsys, "data.max_text_chars=20000000")[0] == 0


def test_vidcapbench_fields_past_the_cap_fail_data_check_naming_file_row_and_field(
    vidcapbench_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    assert _check("vidcapbench", vidcapbench_dir, capsys)[0] == 0
    out = _copy(vidcapbench_dir, tmp_path / "answer")
    lines = [json.loads(line) for line in (out / QA_FILE).read_text().splitlines()]
    lines[0]["QA_pairs"][3]["answer"] = HUGE
    (out / QA_FILE).write_text("".join(json.dumps(line) + "\n" for line in lines))
    code, text = _check("vidcapbench", out, capsys)
    assert code == 2 and len(text) < 800
    assert f"{QA_FILE}: line 1 QA 3: field 'answer': 10,485,760 characters, more than data.max_text_chars" in text
    lines[0]["QA_pairs"][3]["answer"] = "On the left side."
    lines[1]["video_dir"] = "/videos/" + HUGE
    (out / QA_FILE).write_text("".join(json.dumps(line) + "\n" for line in lines))
    code, text = _check("vidcapbench", out, capsys)
    assert code == 2 and f"{QA_FILE}: line 2: field 'video_dir'" in text and len(text) < 800
