"""viddiff.plugins.Registry: the lookup every plug-in kind (benchmark, method, embedder, segmenter) shares."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from viddiff.errors import ConfigError
from viddiff.plugins import Registry

GROUP = "viddiff.test_things"


def _install(root: Path, module_source: str, entry_points: str) -> None:
    """An installed distribution declaring ``entry_points`` in GROUP, with its module, in a folder on sys.path."""
    (root / "viddiff_things_demo.py").write_text(module_source)
    info = root / "viddiff_things_demo-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: viddiff-things-demo\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[{GROUP}]\n{entry_points}")


@pytest.fixture
def installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    def install(module_source: str, entry_points: str) -> None:
        _install(tmp_path, module_source, entry_points)
        monkeypatch.syspath_prepend(str(tmp_path))
        monkeypatch.delitem(sys.modules, "viddiff_things_demo", raising=False)

    return install


def registry() -> Registry[int]:
    return Registry("thing", GROUP, {"one": 1, "lazy": "math:pi"}, setting="--thing", accepts=lambda e: isinstance(e, int))


def test_lookup_order_names_and_lazy_built_ins(installed) -> None:
    installed("SEVEN = 7\n", "seven = viddiff_things_demo:SEVEN\none = viddiff_things_demo:SEVEN\n")
    things = registry()
    things.register("two", 2)
    assert things.names() == ["one", "lazy", "two", "seven"]  # built-in, registered, installed; no duplicates
    assert things.get("one") == 1 and things.get("two") == 2 and things.get("seven") == 7
    assert abs(things.get("lazy") - 3.14159) < 1e-5  # "module:attr" is imported when asked for
    assert "viddiff_things_demo" in sys.modules and things.check("seven") == "seven"


def test_unknown_taken_and_bad_names_are_errors() -> None:
    things = registry()
    with pytest.raises(ConfigError, match=r"unknown thing 'three' \(--thing\); choose one of one, lazy"):
        things.get("three")
    things.register("two", 2)
    things.register("two", 2)  # the same entry again is fine
    for name, value in (("two", 22), ("one", 1)):
        with pytest.raises(ConfigError, match=f"a thing named '{name}' is already registered"):
            things.register(name, value)
    with pytest.raises(ConfigError, match="must be letters"):
        things.register("no spaces", 3)


def test_check_never_imports_a_built_in() -> None:
    things = Registry("thing", GROUP, {"heavy": "a_module_that_is_not_installed:X"}, setting="--thing")
    assert things.check("heavy") == "heavy"
    with pytest.raises(ModuleNotFoundError):
        things.get("heavy")


def test_a_plugin_that_fails_to_import_is_named_with_its_error(installed) -> None:
    installed("import a_module_that_is_not_installed\n", "broken = viddiff_things_demo:X\n")
    with pytest.raises(ConfigError, match=r"thing 'broken' is declared by an installed plug-in "
                       r"\(viddiff_things_demo:X\) but fails to load: ModuleNotFoundError"):
        registry().get("broken")


def test_an_entry_point_of_the_wrong_kind_is_refused(installed) -> None:
    installed("WORDS = 'not a number'\n", "words = viddiff_things_demo:WORDS\n")
    with pytest.raises(ConfigError, match=rf"entry point 'viddiff_things_demo:WORDS' \({GROUP}: words\) is not a thing"):
        registry().get("words")
