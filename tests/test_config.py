from pathlib import Path

import pytest

from viddiff.config import Config, ConfigError, load_config

REPO = Path(__file__).resolve().parents[1]


def test_paper_config_loads_with_paper_settings():
    cfg = load_config(REPO / "configs" / "paper.yaml")
    assert cfg.localizer.clip.model == "ViT-bigG-14"
    assert cfg.localizer.clip.pretrained == "laion2b_s39b_b160k"
    assert cfg.localizer.frame_sep_s == 0.35 and cfg.localizer.n_frames_multi == 3
    assert (cfg.localizer.stay_prob, cfg.localizer.advance_prob) == (0.5, 0.5)
    assert cfg.data.fps_for("diving") == 6 and cfg.data.fps_for("music") == 2
    assert cfg.eval.judge.model == "gpt-4o-2024-08-06" and cfg.eval.flip.model == "gpt-4o-mini"


def test_every_config_in_configs_dir_is_valid():
    files = sorted((REPO / "configs").glob("*.yaml"))
    assert files
    for f in files:
        load_config(f)


def test_unknown_key_is_named(tmp_path):
    f = tmp_path / "c.yaml"
    f.write_text("localizer:\n  methd: viterbi\n")
    with pytest.raises(ConfigError, match=r"unknown key 'localizer.methd'"):
        load_config(f)


def test_wrong_type_is_named(tmp_path):
    f = tmp_path / "c.yaml"
    f.write_text("localizer:\n  frame_sep_s: soon\n")
    with pytest.raises(ConfigError, match=r"'localizer.frame_sep_s'"):
        load_config(f)


def test_set_overrides_nested_values_with_types():
    cfg = load_config(None, ["localizer.method=uniform", "localizer.clip.pretrained=null", "endpoints.max_concurrency=4"])
    assert cfg.localizer.method == "uniform"
    assert cfg.localizer.clip.pretrained is None
    assert cfg.endpoints.max_concurrency == 4


def test_set_creates_optional_sections():
    cfg = Config().with_overrides(["differencer.endpoint.base_url=http://127.0.0.1:9/v1"])
    assert cfg.differencer.endpoint.base_url == "http://127.0.0.1:9/v1"


@pytest.mark.parametrize(
    "override, message",
    [
        ("localizer.method=best", "localizer.method"),
        ("nosuch.key=1", "unknown key 'nosuch'"),
        ("localizer", "key=value"),
        ("localizer.method.x=1", "localizer.method"),
    ],
)
def test_bad_overrides(override, message):
    with pytest.raises(ConfigError, match=message):
        load_config(None, [override])


def test_missing_and_malformed_files(tmp_path):
    with pytest.raises(ConfigError, match="not found"):
        load_config(tmp_path / "nope.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("a: [1,\n")
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_config(bad)
    listy = tmp_path / "list.yaml"
    listy.write_text("- 1\n")
    with pytest.raises(ConfigError, match="mapping"):
        load_config(listy)


def test_yaml_round_trip_holds_no_secrets(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-planted-secret-123")
    cfg = load_config(None, ["endpoints.default.api_key_env=OPENAI_API_KEY"])
    text = cfg.to_yaml()
    assert "sk-planted-secret-123" not in text
    assert Config.model_validate(__import__("yaml").safe_load(text)) == cfg


def test_set_into_a_scalar_is_refused(tmp_path):
    f = tmp_path / "c.yaml"
    f.write_text("localizer:\n  method: viterbi\n")
    with pytest.raises(ConfigError, match="is a value, not a section"):
        load_config(f, ["localizer.method.x=1"])
