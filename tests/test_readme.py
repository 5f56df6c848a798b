"""The README and the pages under docs/ stay true:

- the Python API's offline example (docs/python-api.md) runs as written (only its port and demo folder are
  swapped for free ones), against the scripted server it starts in the background, over real HTTP;
- README.md is a front door: at most 250 lines, with the install and test commands that .ci/run runs near
  its top, and the main job;
- every relative link in README.md and docs/*.md reaches an existing file, and every ``#anchor`` into a
  markdown file an existing heading (GitHub's slug rules).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
PYTHON_API = ROOT / "docs" / "python-api.md"
CI_RUN = ROOT / ".ci" / "run"
DEMO_DIR, PORT = "/tmp/viddiff-demo", "8011"
MAX_README_LINES = 250


def offline_example() -> tuple[list[str], str]:
    """The shell lines and the Python code of the Python API page's local-server example."""
    text = PYTHON_API.read_text()
    section = text[text.index("This runs as written"):text.index("With a real model")]
    (shell,) = re.findall(r"```bash\n(.*?)```", section, re.S)
    (python,) = re.findall(r"```python\n(.*?)```", section, re.S)
    commands = [line.split("#")[0].strip() for line in shell.splitlines() if line.split("#")[0].strip()]
    return commands, python


def free_port() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return str(s.getsockname()[1])


@pytest.mark.slow
def test_offline_python_example_runs_as_written(tmp_path: Path) -> None:
    commands, python = offline_example()
    assert len(commands) == 3 and DEMO_DIR in python and PORT in python
    demo, port = str(tmp_path / "demo"), free_port()
    env = {**os.environ, "HOME": str(tmp_path)}  # the default cache goes to a fresh ~/.cache
    synth, serve, export = (shlex.split(c.replace(DEMO_DIR, demo).replace(PORT, port)) for c in commands)
    assert synth[0] == "viddiff" and serve[:3] == ["python", "-m", "viddiff.testing.serve"]
    assert "--detach" in serve  # returns once serving, or fails on a taken port: no server dying unseen behind `&`
    assert export[0] == "export"
    key, value = export[1].split("=")
    env[key] = value
    subprocess.run([sys.executable, "-m", "viddiff.cli", *synth[1:]], check=True, capture_output=True, env=env, timeout=120)
    started = subprocess.run([sys.executable, *serve[1:]], capture_output=True, text=True, env=env, timeout=60)
    assert started.returncode == 0, started.stderr
    pid = int(re.search(r"stop it with: kill (\d+)", started.stdout).group(1))
    try:
        assert f"serving at http://127.0.0.1:{port}/v1" in started.stdout
        proc = subprocess.run(
            [sys.executable, "-c", python.replace(DEMO_DIR, demo).replace(PORT, port)],
            capture_output=True, text=True, env=env, timeout=300,
        )
    finally:
        os.kill(pid, signal.SIGTERM)
    assert proc.returncode == 0, proc.stderr
    (line,) = proc.stdout.splitlines()
    assert re.fullmatch(r"the knees bend more during the dip [abc] \[[\d., ]+\] \[[\d., ]+\]", line), line
    # the example names the action its videos show (it compared a free-throw pair as a squat)
    rows = [json.loads(r) for r in (Path(demo) / "dataset.jsonl").read_text().splitlines()]
    (row,) = [r for r in rows if "pair_0001_a.mp4" in r["videos"]]
    assert f'action="{row["action_name"]}"' in python
    assert "the knees bend more during the dip" in row["differences_annotated"]


# --- the README as a front door --------------------------------------------------------------------------


def test_readme_python_snippet_runs_as_a_script_would_parse_it() -> None:
    """It used top-level ``await``: a SyntaxError pasted into a script (issue 32). Parsed as a module here."""
    (snippet,) = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)
    compile(snippet, "README.md", "exec")


def test_every_test_file_the_code_and_docs_name_exists() -> None:
    """A docstring pointed readers at tests/benchmarks/ifvidcap/test_rules.py, which never existed (issue 32)."""
    named = {
        (path, match)
        for path in [*sorted((ROOT / "viddiff").rglob("*.py")), README, *sorted((ROOT / "docs").rglob("*.md"))]
        for match in re.findall(r"\btests/[\w/.-]+\.py\b", path.read_text())
    }
    assert named
    missing = sorted(f"{path.relative_to(ROOT)} names {test}" for path, test in named if not (ROOT / test).is_file())
    assert not missing, missing


def test_readme_is_at_most_250_lines() -> None:
    n = len(README.read_text(encoding="utf-8").splitlines())
    assert n <= MAX_README_LINES, f"README.md has {n} lines; move detail into a page under docs/"


def _normalise(command: str) -> str:
    """One shell command as compared here: whitespace collapsed, ``python -m pip`` spelled ``pip``."""
    command = " ".join(command.split())
    return re.sub(r"^python3? -m pip\b", "pip", command)


def _commands(script: str) -> list[str]:
    """The commands of a shell snippet, in order: comments dropped, ``a && b`` split."""
    out = []
    for line in script.splitlines():
        code = line.split(" #")[0] if not line.lstrip().startswith("#") else ""
        out += [_normalise(part) for part in code.split("&&") if part.strip()]
    return out


def _is_subsequence(needles: list[str], haystack: list[str]) -> bool:
    rest = iter(haystack)
    return all(any(n == h for h in rest) for n in needles)


def _setup_block() -> tuple[int, list[str]]:
    """Line number (1-based) and commands of the README's set-up block, the first bash block after its heading."""
    text = README.read_text(encoding="utf-8")
    heading = text.index("## Set up and test")
    match = re.compile(r"```bash\n(.*?)```", re.S).search(text, heading)
    assert match is not None, "README.md has no bash block under 'Set up and test'"
    return text[: match.start()].count("\n") + 1, _commands(match.group(1))


def test_readme_setup_commands_are_what_ci_runs() -> None:
    line, readme = _setup_block()
    assert line <= 20, f"the set-up commands start on line {line} of README.md; keep them near the top"
    ci = _commands(CI_RUN.read_text(encoding="utf-8"))
    install, test = 'pip install -e ".[dev]"', "python -m pytest"
    assert install in readme and test in readme, readme
    assert install in ci and test in ci, ci
    # the README's steps are .ci/run's steps, in the same order (.ci/run may do more, e.g. upgrade pip)
    assert _is_subsequence(readme, ci), (readme, ci)


def test_subsequence_check_catches_a_different_command() -> None:
    ci = _commands('python3 -m venv .venv\n. .venv/bin/activate\npython -m pip install -e ".[dev]"\npython -m pytest\n')
    assert _is_subsequence(_commands('pip install -e ".[dev]"   # install\npython -m pytest'), ci)
    assert not _is_subsequence(_commands("pip install -e .\npython -m pytest"), ci)
    assert not _is_subsequence(_commands('python -m pytest && pip install -e ".[dev]"'), ci)  # order matters


def test_readme_shows_the_main_job_near_the_top() -> None:
    lines = README.read_text(encoding="utf-8").splitlines()
    where = [i for i, line in enumerate(lines, 1) if line.startswith("viddiff run --split easy --mode closed")]
    assert where and where[0] <= 40, "README.md should show `viddiff run --split easy --mode closed` near its top"


# --- links and anchors -----------------------------------------------------------------------------------

LINK = re.compile(r"!?\[((?:[^\[\]]|\[[^\]]*\])*)\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
HEADING = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)(?:\s+#+)?\s*$")
FENCE = re.compile(r"^ {0,3}(```|~~~)")
HTML_ANCHOR = re.compile(r"<a\s[^>]*(?:name|id)=\"([^\"]+)\"", re.I)


def _outside_fences(text: str) -> str:
    """The text with the lines of fenced code blocks blanked."""
    lines, fenced = [], False
    for line in text.splitlines():
        if FENCE.match(line):
            fenced = not fenced
            lines.append("")
        else:
            lines.append("" if fenced else line)
    return "\n".join(lines)


def _prose(text: str) -> str:
    """The text outside fenced code blocks with inline code spans blanked (links there are not links); a span
    or a link may run over a line break, as in markdown."""
    return re.sub(r"(`+)[\s\S]+?\1", "code", _outside_fences(text))


def github_slug(heading: str) -> str:
    """The anchor GitHub gives a heading: its text (markup removed), lowercased, punctuation other than '-' and
    '_' removed, each space a '-'."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link's text
    text = re.sub(r"<[^>]+>", "", text).replace("`", "")
    return "".join(c for c in text.lower() if c.isalnum() or c in "-_ ").replace(" ", "-")


def anchors(path: Path) -> set[str]:
    """Every heading anchor of a markdown file (a repeated heading gets -1, -2, ... as on GitHub) and any
    explicit ``<a name=...>``/``id=`` anchor."""
    seen: dict[str, int] = {}
    out: set[str] = set()
    for line in _outside_fences(path.read_text(encoding="utf-8")).splitlines():
        out.update(HTML_ANCHOR.findall(line))
        match = HEADING.match(line)
        if match is None:
            continue
        slug = github_slug(match.group(2))
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        out.add(slug if n == 0 else f"{slug}-{n}")
    return out


def relative_links(path: Path) -> list[str]:
    """The targets of a markdown file's links and images that are not URLs (http:, mailto:, ...)."""
    targets = [target for _, target in LINK.findall(_prose(path.read_text(encoding="utf-8")))]
    return [t for t in targets if not re.match(r"^[a-z][a-z0-9+.-]*:", t, re.I)]


def broken_links(path: Path, root: Path) -> list[str]:
    """Each relative link of a markdown file that leads nowhere: a missing file, a path outside ``root``, or an
    ``#anchor`` that no heading of the target markdown file has."""
    problems = []
    for target in relative_links(path):
        file_part, _, anchor = target.partition("#")
        dest = (path.parent / file_part).resolve() if file_part else path.resolve()
        where = f"{path.name}: {target}"
        if not dest.is_relative_to(root.resolve()):
            problems.append(f"{where} (outside the repository)")
        elif not dest.exists():
            problems.append(f"{where} (no such file)")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            problems.append(f"{where} (no heading #{anchor} in {dest.name})")
    return problems


def documentation_files() -> list[Path]:
    return [README, *sorted((ROOT / "docs").glob("*.md"))]


def test_every_relative_link_in_the_docs_resolves() -> None:
    files = documentation_files()
    assert len(files) > 10 and any(f.name == "extending.md" for f in files)
    assert sum(len(relative_links(f)) for f in files) > 50  # the checker sees the links
    problems = [p for f in files for p in broken_links(f, ROOT)]
    assert not problems, "broken links:\n" + "\n".join(problems)


def test_every_docs_page_is_reachable_from_the_readme() -> None:
    index = ROOT / "docs" / "README.md"
    linked = {(page.parent / t.partition("#")[0]).resolve() for page in (README, index) for t in relative_links(page)}
    missing = [p.name for p in sorted((ROOT / "docs").glob("*.md")) if p.resolve() not in linked]
    assert not missing, f"docs pages linked from neither README.md nor docs/README.md: {missing}"


def test_github_slug_rules() -> None:
    assert github_slug("Set up and test (fresh machine)") == "set-up-and-test-fresh-machine"
    assert github_slug("The paper's GPT-4o baseline") == "the-papers-gpt-4o-baseline"
    assert github_slug("Figures for papers (`--save-visuals`)") == "figures-for-papers---save-visuals"
    assert github_slug("One comparison on the CPU, stage by stage") == "one-comparison-on-the-cpu-stage-by-stage"
    assert github_slug("What `configs/paper.yaml` is") == "what-configspaperyaml-is"
    assert github_slug("ViDiC-1K (video difference captioning)") == "vidic-1k-video-difference-captioning"
    assert github_slug("snake_case and [a link](x.md)") == "snake_case-and-a-link"


def test_link_checker_finds_broken_links(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    (root / "docs").mkdir(parents=True)
    (root / "docs" / "page.md").write_text("# Page\n\n## A section: with punctuation!\n\n## Twice\n\n## Twice\n\n## Figures (`--save-visuals`)\n")
    (root / "image.png").write_bytes(b"")
    (tmp_path / "outside.md").write_text("# Outside\n")
    doc = root / "README.md"
    doc.write_text(
        "# Top\n\n"
        "[ok](docs/page.md) [ok anchor](docs/page.md#a-section-with-punctuation) [second](docs/page.md#twice-1)\n"
        "![ok image](image.png) [code heading](docs/page.md#figures---save-visuals) [same file](#top) [web](https://example.com/missing.md#nowhere)\n"
        "[missing file](docs/nope.md) [missing anchor](docs/page.md#a-section) [third](docs/page.md#twice-2)\n"
        "[bad local anchor](#bottom) [escape](../outside.md)\n"
        "`[in code](docs/nope.md)` `a span\nover a break [in code](docs/nope.md)`\n\n```md\n[in a block](docs/nope.md)\n```\n"
        "[a link over\na line break](docs/gone.md)\n"
    )
    problems = broken_links(doc, root)
    assert problems == [
        "README.md: docs/nope.md (no such file)",
        "README.md: docs/page.md#a-section (no heading #a-section in page.md)",
        "README.md: docs/page.md#twice-2 (no heading #twice-2 in page.md)",
        "README.md: #bottom (no heading #bottom in README.md)",
        "README.md: ../outside.md (outside the repository)",
        "README.md: docs/gone.md (no such file)",
    ], problems
