"""The embedder registry: the config key names an embedder, plug-ins register theirs (in Python or by entry point)."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path
from typing import Optional

import numpy as np
import pytest

from viddiff.plugins import EMBEDDERS
from viddiff.backends.clip import ClipEmbedder
from viddiff.backends.embedders import (
    Embedder,
    EmbedderChoiceError,
    EmbedStats,
    build_embedder,
    embedder_names,
    register_embedder,
)
from viddiff.cache import Cache
from viddiff.config import ClipConfig, Config, ConfigError
from viddiff.testing import TINY_CLIP_CONFIG, TINY_CLIP_MODEL


class ConstantEmbedder:
    def __init__(self, cfg: ClipConfig, cache: Optional[Cache]):
        self.cfg, self.cache, self.stats = cfg, cache, EmbedStats()

    def embed_images(self, frames: np.ndarray) -> np.ndarray:
        return np.ones((len(frames), 2), np.float32) / np.sqrt(2)

    def embed_texts(self, texts) -> np.ndarray:
        return np.ones((len(texts), 2), np.float32) / np.sqrt(2)


@pytest.fixture(autouse=True)
def _own_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test starts from the built-in embedders only, and its registrations stay in it."""
    monkeypatch.setattr(EMBEDDERS, "_registered", {})


def test_open_clip_is_the_default_and_builds_the_clip_embedder() -> None:
    cfg = ClipConfig(model=TINY_CLIP_MODEL, arch_config=str(TINY_CLIP_CONFIG), pretrained=None, device="cpu")
    assert cfg.backend == "open_clip" and "open_clip" in embedder_names()
    embedder = build_embedder(cfg)
    assert isinstance(embedder, ClipEmbedder) and isinstance(embedder, Embedder)


def test_an_unknown_backend_is_a_config_error_that_lists_the_choices() -> None:
    with pytest.raises(ConfigError, match=r"localizer\.clip\.backend.*unknown embedder 'siglip' \(localizer\.clip\.backend\); choose one of open_clip"):
        Config().with_overrides(["localizer.clip.backend=siglip"])


def test_a_registered_embedder_is_accepted_by_config_and_built_from_it(tmp_path: Path) -> None:
    register_embedder("constant", ConstantEmbedder)
    cfg = Config().with_overrides(["localizer.clip.backend=constant", "localizer.clip.batch_size=7"])
    with Cache(tmp_path / "c.sqlite") as cache:
        embedder = build_embedder(cfg.localizer.clip, cache)
    assert isinstance(embedder, ConstantEmbedder) and embedder.cfg.batch_size == 7 and embedder.cache is cache
    assert embedder_names() == ["open_clip", "constant"]


def test_a_taken_name_or_a_bad_name_is_refused() -> None:
    register_embedder("constant", ConstantEmbedder)
    register_embedder("constant", ConstantEmbedder)  # the same factory again: fine
    with pytest.raises(ValueError, match="already registered"):
        register_embedder("open_clip", ConstantEmbedder)
    with pytest.raises(ValueError, match="must be letters"):
        register_embedder("no spaces", ConstantEmbedder)


def _install_plugin(root: Path, module_source: str, name: str = "plugged") -> None:
    """An installed distribution (dist-info with an entry point) and its module, in a folder on sys.path."""
    (root / "viddiff_plugin_demo.py").write_text(textwrap.dedent(module_source))
    info = root / "viddiff_plugin_demo-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: viddiff-plugin-demo\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[viddiff.embedders]\n{name} = viddiff_plugin_demo:make\n")


PLUGIN = """
    import numpy as np
    from viddiff.backends.embedders import EmbedStats

    class Plugged:
        stats = EmbedStats()
        def embed_images(self, frames): return np.ones((len(frames), 1), np.float32)
        def embed_texts(self, texts): return np.ones((len(texts), 1), np.float32)

    def make(cfg, cache):
        return Plugged()
"""


def test_an_installed_plugin_is_found_by_its_entry_point(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _install_plugin(tmp_path, PLUGIN)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "viddiff_plugin_demo", raising=False)
    assert "plugged" in embedder_names()
    cfg = Config().with_overrides(["localizer.clip.backend=plugged"])
    assert type(build_embedder(cfg.localizer.clip)).__name__ == "Plugged"


def test_a_plugin_that_fails_to_import_is_named_with_its_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _install_plugin(tmp_path, "import a_module_that_is_not_installed\n", name="broken")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "viddiff_plugin_demo", raising=False)
    with pytest.raises(EmbedderChoiceError, match=r"'broken' is declared by an installed plug-in \(viddiff_plugin_demo:make\) "
                       r"but fails to load: ModuleNotFoundError"):
        build_embedder(ClipConfig.model_construct(backend="broken"))
