"""Judge templates: placeholders checked with one clear error, literal braces kept, a hash of the texts used."""

from __future__ import annotations

from pathlib import Path

import pytest

from viddiff.config import ConfigError, JudgePromptFiles, VidicPromptFiles, load_config
from viddiff.eval.prompts import BUILT_IN as OPEN_BUILT_IN
from viddiff.eval.prompts import judge_templates
from viddiff.benchmarks.vidic.prompts import BUILT_IN as VIDIC_BUILT_IN
from viddiff.benchmarks.vidic.prompts import vidic_templates
from viddiff.templates import TemplateError, check_template, load_templates


def test_built_in_templates_use_every_required_placeholder() -> None:
    for family, built_in in ((JudgePromptFiles.FAMILY, OPEN_BUILT_IN), (VidicPromptFiles.FAMILY, VIDIC_BUILT_IN)):
        templates = load_templates(family, {}, built_in)
        assert set(templates.templates) == set(family.slots)
        assert set(templates.sources.values()) == {"built-in"}


def test_rendering_keeps_literal_braces_and_never_rescans_values() -> None:
    # the authors' style: JSON examples with single braces, filled by name
    text = 'Match {gt} to {pred}. Output like { "0": "3", "1": "None" }; keys {gt_keys}.'
    template = check_template(JudgePromptFiles.FAMILY, "match", text, "mine.txt")
    out = template.render(gt='{"0": "x {pred}"}', pred="{}", action="", gt_keys="0", pred_keys="")
    assert out == 'Match {"0": "x {pred}"} to {}. Output like { "0": "3", "1": "None" }; keys 0.'


@pytest.mark.parametrize(
    "name, text, message",
    [
        ("match", "{gt} vs {pred} for {final}", r"unknown placeholder\(s\) \{final\} in the 'match' template; allowed: "
         r"\{gt\}, \{pred\}, \{action\}, \{gt_keys\}, \{pred_keys\}"),
        ("match", "only {gt}", r"must contain \{pred\}"),
        ("flip", "no pairs here", r"must contain \{pairs\}"),
        ("system", "You are a judge of {action}", r"unknown placeholder\(s\) \{action\}.*allowed: none"),
        ("flip", "  \n", "is empty"),
    ],
)
def test_bad_templates_get_one_clear_error(name, text, message) -> None:
    with pytest.raises(TemplateError, match=message):
        check_template(JudgePromptFiles.FAMILY, name, text, "mine.txt")


def test_template_files_are_checked_when_the_config_loads(tmp_path: Path) -> None:
    bad = tmp_path / "match.txt"
    bad.write_text("Compare {differences0} with {differences1}", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"eval\.prompt_files.*unknown placeholder\(s\) \{differences0\}, "):
        load_config(None, [f"eval.prompt_files.match={bad}"])
    with pytest.raises(ConfigError, match=r"template file not found: .*nope\.txt"):
        load_config(None, [f"vidic.prompt_files.judge={tmp_path / 'nope.txt'}"])
    with pytest.raises(ConfigError, match=r"unknown key 'eval.prompt_files.matching'"):
        load_config(None, [f"eval.prompt_files.matching={bad}"])
    (tmp_path / "latin1.txt").write_bytes("{gt} {pred} caf\xe9".encode("latin-1"))
    with pytest.raises(ConfigError, match="cannot read template file"):
        load_config(None, [f"eval.prompt_files.match={tmp_path / 'latin1.txt'}"])


def test_the_hash_names_the_exact_texts(tmp_path: Path) -> None:
    flip = tmp_path / "flip.txt"
    flip.write_text("Opposites? {pairs}", encoding="utf-8")
    built_in, custom = judge_templates(), judge_templates({"flip": str(flip)})
    assert custom.sources == {"flip": str(flip), "match": "built-in", "system": "built-in"}
    assert custom.sha256 != built_in.sha256 == judge_templates().sha256
    flip.write_text("Opposites?\n{pairs}", encoding="utf-8")
    assert judge_templates({"flip": str(flip)}).sha256 != custom.sha256
    assert vidic_templates().sha256 != built_in.sha256
