"""Exceptions the CLI turns into one clear line and a non-zero exit.

Anything raised as a ``ViddiffError`` is a user-facing problem (bad input,
bad config, unreachable endpoint); its message must say what is wrong and
what to do. Other exceptions are bugs and keep their traceback.
"""


class ViddiffError(Exception):
    """Base class of every user-facing error."""


class VideoError(ViddiffError):
    """A video is missing, unreadable, empty, or its trim is invalid."""


class DatasetError(ViddiffError):
    """A dataset file or row is malformed, or a requested split/subset is empty."""


class EndpointError(ViddiffError):
    """A model endpoint refused a request permanently (bad key, unknown model, bad request)."""


class ModelLoadError(ViddiffError):
    """A local model (CLIP) cannot be built: unknown architecture/tag, weights not downloadable, bad checkpoint."""


class InvalidAnswerError(ViddiffError):
    """A model kept answering with invalid JSON / schema after all re-asks."""

    def __init__(self, message: str, raw: str):
        super().__init__(message)
        self.raw = raw


class PredictionFormatError(ViddiffError):
    """A predictions file does not match the official VidDiffBench format."""


class DownloadError(ViddiffError):
    """Benchmark files could not be fetched, verified or unpacked; what is already on disk is kept for a resume."""
