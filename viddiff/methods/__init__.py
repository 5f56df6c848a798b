"""Methods as plug-ins: what ``run_benchmark`` (and with it resume, caching, scoring, audits) drives.

A method answers one sample in a mode and returns a ``SampleResult``; everything around that (the
results store, resume, failure isolation, cost guard, the predictions file, scoring, reports) is the
runner's and the benchmark's. VidDiff (``viddiff``) and the LMM baselines (``baseline``) are the built-in
methods; a new one (a pose-evidence method, say) is a class with the attributes and coroutines of
:class:`Method`, registered with :func:`register_method` or through an entry point in the group
``viddiff.methods``. See docs/extending.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Optional, Protocol

from viddiff.config import ModelCallConfig
from viddiff.errors import ConfigError
from viddiff.plugins import METHODS
from viddiff.schema import Mode, Sample, SampleResult

if TYPE_CHECKING:
    from viddiff.backends.chat import ChatModel
    from viddiff.backends.usage import UsageMeter
    from viddiff.video import VideoFrames

ENTRY_POINT_GROUP = METHODS.group


class Method(Protocol):
    """One way of answering samples. Construct with ``Factory(config, cache=None)``; the runner closes it."""

    name: str
    """Recorded in ``run.json`` (a resume must use the same method) and in each ``SampleResult.method``."""
    stages: tuple[str, ...]
    """Its steps in order: progress bars, and the stage a failure is reported at."""
    modes: tuple[Mode, ...]
    """The task modes it can answer (a benchmark's mode must be among them: ``check_mode``)."""
    client: "ChatModel"
    """Its chat client; the benchmark's judge borrows it when the run is scored (one cache, one usage meter)."""

    def model_calls(self) -> dict[str, ModelCallConfig]:
        """The chat models it calls, by stage (prices must be known for ``run.max_cost_usd``)."""
        ...

    async def load_videos(self, sample: Sample) -> tuple["VideoFrames", ...]:
        """The videos of ``sample`` (both of a pair) decoded the way this method needs them."""
        ...

    async def aprocess(
        self,
        sample: Sample,
        mode: Mode,
        *,
        index: int = 0,
        videos: Optional[tuple["VideoFrames", ...]] = None,
        on_stage: Optional[Callable[[str], Any]] = None,
        meter: Optional["UsageMeter"] = None,
    ) -> SampleResult:
        """Answer one sample; ``on_stage(name)`` as each stage finishes; model usage recorded on ``meter``.
        A closed-mode sample with nothing to check (no ``a``/``b`` difference) gets an empty result."""
        ...

    def clip_stats(self) -> Optional[dict]:
        """CLIP forward passes and cache hits, if the method embeds frames (``usage.json``)."""
        ...

    async def aclose(self) -> None: ...


MethodFactory = Callable[..., Method]
"""``factory(config, cache=None) -> Method``: a method class, or anything called like one."""


def register_method(name: str, factory: MethodFactory) -> MethodFactory:
    """Make ``factory`` available as ``--method NAME`` (for plug-ins that are imported, not installed)."""
    return METHODS.register(name, factory)


def method_names() -> list[str]:
    return METHODS.names()


def get_method(name: str) -> MethodFactory:
    """The factory of the method called ``name``; an unknown name lists the known ones."""
    return METHODS.get(name)


def check_mode(method: Method, mode: Mode) -> None:
    """Refuse a method/benchmark pair that cannot work, naming the methods that can."""
    if mode in method.modes:
        return
    able = [name for name in method_names() if name != method.name and mode in getattr(get_method(name), "modes", ())]
    hint = f"; --method {' or --method '.join(able)} can" if able else ""
    raise ConfigError(f"method {method.name} cannot answer {mode} mode (it answers {', '.join(method.modes)}){hint}")

