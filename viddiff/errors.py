"""Exceptions the CLI turns into one clear line and a non-zero exit.

Anything raised as a ``ViddiffError`` is a user-facing problem (bad input,
bad config, unreachable endpoint); its message must say what is wrong and
what to do. Other exceptions are bugs and keep their traceback.
"""

from typing import Optional, Sequence


class ViddiffError(Exception):
    """Base class of every user-facing error.

    Pickles with its attributes whatever its constructor takes, so an error raised on a Ray actor reaches
    the driver as the same error (a run classifies failures by type and attributes).
    """

    def __reduce__(self):
        return _rebuild_error, (type(self), self.args, dict(self.__dict__))


def _rebuild_error(cls: type, args: tuple, state: dict) -> ViddiffError:
    error = cls.__new__(cls)
    Exception.__init__(error, *args)
    error.__dict__.update(state)
    return error


class ConfigError(ViddiffError, ValueError):
    """A config file or override is invalid; the message names the key."""


class EmbedderChoiceError(ViddiffError, ValueError):
    """``localizer.clip.backend`` names no embedder, or a plug-in's that cannot be loaded."""


class SegmenterChoiceError(ViddiffError, ValueError):
    """``localizer.method`` names no segmenter, or a plug-in's that cannot be loaded."""


class PoseEstimatorChoiceError(ViddiffError, ValueError):
    """``pose.estimator`` names no pose estimator, or a plug-in's that cannot be loaded."""


class PoseUnavailableError(ViddiffError):
    """A pose estimator cannot run here: its package is not installed, or its model file cannot be had."""


class VideoError(ViddiffError):
    """A video is missing, unreadable, empty, or its trim is invalid."""


class CameraSetupError(ViddiffError):
    """A performance's calibration cannot be read, or does not hold one camera per video of the performance."""


class DatasetError(ViddiffError):
    """A dataset file or row is malformed, or a requested split/subset is empty."""


class EndpointError(ViddiffError):
    """A model endpoint refused a request permanently (bad key, unknown model, bad request) or kept failing.

    ``fatal`` marks errors that every other request would hit too (no key, a refused key, an endpoint
    never reached, a model the endpoint does not know): a run stops on them instead of failing each
    sample in turn. ``status``/``server_message`` are the HTTP status and the server's own words.
    """

    def __init__(
        self,
        message: str,
        *,
        fatal: bool = False,
        status: Optional[int] = None,
        server_message: Optional[str] = None,
        stage: Optional[str] = None,
    ):
        super().__init__(message)
        self.fatal = fatal
        self.status = status
        self.server_message = server_message
        self.stage = stage


class ModelLoadError(ViddiffError):
    """A local model (CLIP) cannot be built: unknown architecture/tag, weights not downloadable, bad checkpoint."""


class InvalidAnswerError(ViddiffError):
    """A model kept answering with invalid JSON / schema after all re-asks."""

    def __init__(self, message: str, raw: str, *, stage: Optional[str] = None):
        super().__init__(message)
        self.raw = raw
        self.stage = stage


class RequestTooLargeError(ViddiffError):
    """A request's text is over ``endpoints.max_prompt_chars``: refused before anything is sent."""

    def __init__(self, message: str, *, stage: Optional[str] = None):
        super().__init__(message)
        self.stage = stage


class OutputError(ViddiffError):
    """An output file cannot be written (disk full, I/O error, read-only) or the directory is in use."""


class CostLimitError(ViddiffError):
    """The run's projected cost is above ``run.max_cost_usd``: it stops, resumable."""


class PredictionFormatError(ViddiffError):
    """A predictions file does not match the official VidDiffBench format."""


MAX_LISTED = 20
"""How many problems an error lists before "... and K more": enough to show the pattern."""


def bulleted(items: Sequence[str], limit: int = MAX_LISTED) -> str:
    """The first ``limit`` items as ``  - item`` lines, then ``  ... and K more`` for the rest."""
    listed = "\n".join(f"  - {item}" for item in items[:limit])
    return listed + (f"\n  ... and {len(items) - limit} more" if len(items) > limit else "")


def problems_error(source: str, problems: Sequence[str], help_text: str, about: str = "") -> PredictionFormatError:
    """One error for every problem a reader found in ``source`` (all fixed in one go, not one per attempt);
    ``about`` names what was read ("closed-mode predictions")."""
    what = f" with {about}" if about else ""
    return PredictionFormatError(f"{source}: {len(problems)} problem(s){what} ({help_text}):\n{bulleted(problems)}")


class DownloadError(ViddiffError):
    """Benchmark files could not be fetched, verified or unpacked; what is already on disk is kept for a resume."""
