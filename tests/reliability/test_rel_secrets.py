"""The API key is used, but never written: not to config.yaml, logs (even --debug), the cache, or any output."""

from __future__ import annotations

import logging

import pytest

from viddiff.cli import main
from viddiff.testing.fake_openai import FaultPlan

PLANTED = "sk-planted-XYZ123"
FRAGMENT = "XYZ123"  # a masked echo ("sk-pl...XYZ123") would still leak the tail


def _leaks(data: bytes) -> bool:
    return PLANTED.encode() in data or FRAGMENT.encode() in data


def test_key_never_reaches_disk_or_logs(synth_dir, media, tmp_path, fake_server, monkeypatch, caplog, capsys):
    caplog.set_level(logging.DEBUG)
    out = tmp_path / "run"
    with fake_server() as (server, sets):
        monkeypatch.setenv("OPENAI_API_KEY", PLANTED)
        argv = ["--debug", "run", "--dataset", str(synth_dir), "--mode", "open", "--output", str(out), "--save-visuals"]
        assert main([*argv, *sets]) == 0
        assert main(["--debug", "compare", str(media["ok"]), str(media["ok_b"]), "--action", "squat",
                     "--n-differences", "2", "--json", *sets]) == 0
    with fake_server(faults=FaultPlan(rate=1.0, kinds=("401",)), cache="refused") as (refused, bad_sets):
        # A rejected key: the --debug traceback and the error line name the variable, never the value.
        assert main(["--debug", "compare", str(media["ok"]), str(media["ok_b"]), "--action", "squat",
                     "--difference", "the squat is deeper", *bad_sets]) == 2
    assert refused.requests[0].api_key == PLANTED
    # The key was really sent (as the bearer token), so its absence below means something.
    assert server.requests and {r.api_key for r in server.requests} == {PLANTED}
    assert any(r.levelno == logging.DEBUG and r.name.startswith("openai") for r in caplog.records)

    captured = capsys.readouterr()
    assert "Traceback" in captured.err and "OPENAI_API_KEY" in captured.err
    logs = "\n".join([caplog.text, captured.out, captured.err, *(str(r.args) for r in caplog.records)])
    assert not _leaks(logs.encode())
    written = [p for p in out.rglob("*") if p.is_file()]
    assert {"config.yaml", "samples.jsonl", "predictions.json", "metrics.json"} <= {p.name for p in written}
    assert "OPENAI_API_KEY" in (out / "config.yaml").read_text()  # referenced by name only
    caches = sorted(tmp_path.glob("*.sqlite*"))
    assert caches and caches[0].stat().st_size > 0
    leaked = [str(p) for p in [*written, *caches] if _leaks(p.read_bytes())]
    assert not leaked


@pytest.mark.parametrize("where", ["--set", "config file"])
def test_key_pasted_as_env_var_name_is_refused_without_echo(where, synth_dir, tmp_path, fake_server, capsys):
    """A user who pastes the key where the *name* of its variable belongs gets an error that does not repeat it."""
    out = tmp_path / "run"
    with fake_server() as (server, sets):
        if where == "--set":
            extra = ["--set", f"endpoints.default.api_key_env={PLANTED}"]
        else:
            config = tmp_path / "mine.yaml"
            config.write_text(f"endpoints:\n  default:\n    api_key_env: {PLANTED}\n")
            extra = ["--config", str(config)]
        code = main(["run", "--dataset", str(synth_dir), "--mode", "closed", "--output", str(out), *sets, *extra])
    err = capsys.readouterr().err
    assert code == 2 and "api_key_env" in err and "name of the environment variable" in err
    assert not _leaks(err.encode())
    assert not out.exists() and not server.requests
