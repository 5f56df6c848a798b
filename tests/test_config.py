import re
from pathlib import Path

import pytest

from viddiff.config import Config, ConfigError, load_config

REPO = Path(__file__).resolve().parents[1]


def test_paper_config_holds_the_released_settings():
    cfg = load_config(REPO / "configs" / "paper.yaml")
    assert cfg.localizer.clip.model == "ViT-bigG-14"
    assert cfg.localizer.clip.pretrained == "laion2b_s39b_b160k"
    assert cfg.localizer.frame_sep_s == 0.35 and cfg.localizer.n_frames_multi == 3
    assert (cfg.localizer.stay_prob, cfg.localizer.advance_prob) == (0.5, 0.5)
    assert cfg.data.fps_by_domain == {"fitness": 8, "ballsports": 5, "diving": 6, "music": 1, "surgery": 1}
    assert cfg.baseline.fps_by_domain == {"fitness": 4, "ballsports": 5, "diving": 6, "music": 1, "surgery": 1}
    assert (cfg.proposer.model, cfg.proposer.n_retrieval_keys, cfg.proposer.temperature) == (
        "gpt-4o-mini-2024-07-18", 5, 1.0
    )
    assert not cfg.proposer.reuse_per_action
    assert (cfg.differencer.model, cfg.differencer.options, cfg.differencer.statement) == (
        "gpt-4o-2024-05-13", "ab", "description"
    )
    assert cfg.eval.judge.model == "gpt-4o-2024-08-06" and cfg.eval.flip.model == "gpt-4o-mini"


def test_paper_config_holds_the_released_behaviours_and_the_defaults_keep_ours():
    """Each behaviour in which the release and this project differ is a named value: paper.yaml sets the
    release's (docs/faithfulness.md says why the defaults differ)."""
    paper, ours = load_config(REPO / "configs" / "paper.yaml"), Config()
    released = {
        "endpoints.response_format": "json_object",
        "endpoints.max_reasks": 0,
        "localizer.clip.precision": "fp32",
        "proposer.prompt_style": "release",
        "differencer.prompt_style": "release",
        "baseline.prompt_style": "release",
        "proposer.enforce_counts": False,
        "proposer.refinement": "wholesale",
        "proposer.link_by": "name",
        "localizer.viterbi_ties": "latest",
        "localizer.score_floor": "replace_zeros",
        "localizer.burst_step": "as_released",
        "localizer.no_viterbi_window": "as_released",
        "data.hf_repo": "viddiff/VidDiffBench_2",
        "data.hf_split": "test",
    }
    for key, value in released.items():
        node_paper, node_ours = paper, ours
        for part in key.split("."):
            node_paper, node_ours = getattr(node_paper, part), getattr(node_ours, part)
        assert node_paper == value, key
        if key != "data.hf_split":
            assert node_ours != value, key


def test_paper_clip_precision_is_fp32_on_a_gpu_where_auto_is_fp16():
    from viddiff.backends.clip import resolve_precision

    paper = load_config(REPO / "configs" / "paper.yaml").localizer.clip.precision
    assert resolve_precision(paper, "cuda") == "fp32" and resolve_precision(paper, "cpu") == "fp32"
    assert resolve_precision(Config().localizer.clip.precision, "cuda") == "fp16"


def _departure_overrides() -> list[str]:
    """The ``key=value`` settings in the last column of the departures table (docs/faithfulness.md)."""
    page = (REPO / "docs" / "faithfulness.md").read_text(encoding="utf-8")
    section = page.split("## Departures from the paper and the released code\n", 1)[1].split("\n#", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| ") and not line.startswith("| what")]
    assert len(rows) >= 10
    cells = [row.rstrip(" |").rsplit(" | ", 1)[-1] for row in rows]
    return [item for cell in cells for code in re.findall(r"`([^`]*)`", cell) for item in code.split() if "=" in item]


def test_defaults_differ_from_paper_yaml_only_where_the_docs_say_why():
    paper = load_config(REPO / "configs" / "paper.yaml").model_dump(mode="json")
    overrides = _departure_overrides()
    # the defaults plus every "restores the original" setting of the table are exactly paper.yaml
    restored = Config().with_overrides(overrides).model_dump(mode="json")
    assert restored == paper
    # and each listed key really differs by default (the table lists no stale departures)
    defaults = Config().model_dump(mode="json")
    for item in overrides:
        node_default, node_paper = defaults, paper
        for part in item.split("=", 1)[0].split("."):
            node_default, node_paper = node_default[part], node_paper[part]
        assert node_default != node_paper, item


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
