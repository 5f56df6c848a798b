"""Stage 3 of VidDiff: ask a VLM which video each difference statement is more true of."""

from __future__ import annotations

import asyncio
import logging
from collections import Counter
from typing import Annotated, Literal, Optional, Sequence, Union

import numpy as np
from pydantic import BaseModel, BeforeValidator

from viddiff.backends.chat import ChatModel
from viddiff.backends.messages import system_message, user_message
from viddiff.backends.usage import UsageMeter
from viddiff.config import DifferencerConfig
from viddiff.differencer import prompts
from viddiff.errors import InvalidAnswerError, ViddiffError
from viddiff.schema import Difference, Letter, Prediction
from viddiff.differencer.statements import statement_text

log = logging.getLogger(__name__)
STAGE = "differencer"


def _letter(value: object) -> object:
    """``"A"``, ``" (b) "``, ``"c."`` → the bare lower-case letter; anything else is left for validation to reject."""
    if isinstance(value, str):
        return value.strip().strip("().").strip().lower()
    return value


class AnswerABC(BaseModel):
    answer_detailed: str = ""
    answer: Annotated[Literal["a", "b", "c"], BeforeValidator(_letter)]


class AnswerAB(BaseModel):
    answer_detailed: str = ""
    answer: Annotated[Literal["a", "b"], BeforeValidator(_letter)]


Answer = Union[AnswerABC, AnswerAB]


class Differencer:
    """One VLM call per (sample, difference, vote); invalid answers are recorded, never guessed."""

    def __init__(self, client: ChatModel, cfg: DifferencerConfig):
        self.client = client
        self.cfg = cfg
        if cfg.n_votes > 1 and cfg.temperature == 0:
            log.warning("differencer.n_votes=%d with temperature 0: votes will mostly agree", cfg.n_votes)

    async def judge(
        self,
        action: str,
        difference: Difference,
        frames_a: Sequence[np.ndarray],
        frames_b: Sequence[np.ndarray],
        *,
        seconds_between_frames: Optional[float],
        meter: Optional[UsageMeter] = None,
        frame_times_s: Optional[tuple[Sequence[float], Sequence[float]]] = None,
        measured: Optional[str] = None,
    ) -> Prediction:
        """Ask ``n_votes`` times; the majority of the valid answers wins, ``None`` when there is none.

        ``measured``: a body-pose measurement of this difference, given to the model as context
        (``differencer.pose_evidence``)."""
        if not len(frames_a) or not len(frames_b):
            raise ViddiffError(
                f"difference {difference.key!r}: need at least one frame of each video, "
                f"got {len(frames_a)} of A and {len(frames_b)} of B"
            )
        statement = statement_text(difference, self.cfg.statement)
        text = prompts.build_prompt(
            action=action,
            statement=statement,
            n_frames_a=len(frames_a),
            n_frames_b=len(frames_b),
            seconds_between_frames=seconds_between_frames,
            options=self.cfg.options,
            frame_times_s=frame_times_s,
            style=self.cfg.prompt_style,
            measured=measured,
        )
        messages = [
            system_message(prompts.system_prompt(action, self.cfg.prompt_style)),
            user_message(text, *frames_a, *frames_b, image=self.cfg.image),
        ]
        schema = AnswerABC if self.cfg.options == "abc" else AnswerAB
        base_seed = self.cfg.seed or 0
        votes = await asyncio.gather(
            *(self._vote(messages, schema, base_seed + i, meter) for i in range(self.cfg.n_votes))
        )
        letters: list[Letter] = [v.answer for v, _ in votes if v is not None]
        raws = [raw for _, raw in votes]
        prediction = self._majority(letters)
        agreeing = [v.answer_detailed for v, _ in votes if v is not None and v.answer == prediction]
        return Prediction(
            key=difference.key,
            description=difference.description,
            prediction=prediction,
            rationale=agreeing[0] if agreeing else "",
            raw_answers=raws,
            votes=letters,
        )

    async def _vote(
        self, messages: list[dict], schema: type[Answer], seed: int, meter: Optional[UsageMeter]
    ) -> tuple[Optional[Answer], str]:
        """One answer and its raw text; an answer still invalid after the client's re-asks is ``None``."""
        call = self.cfg if self.cfg.n_votes == 1 else self.cfg.model_copy(update={"seed": seed})
        try:
            answer = await self.client.complete_json(call, messages, schema, stage=STAGE, meter=meter)
        except InvalidAnswerError as exc:
            log.warning("differencer: invalid answer recorded as invalid: %s", exc)
            return None, exc.raw
        return answer, answer.model_dump_json()

    def _majority(self, letters: list[Letter]) -> Optional[Letter]:
        """Most common valid vote; a tie means the votes cannot tell (``c``, or invalid in ``ab`` mode)."""
        if not letters:
            return None
        counts = Counter(letters).most_common()
        if len(counts) > 1 and counts[0][1] == counts[1][1]:
            return "c" if self.cfg.options == "abc" else None
        return counts[0][0]
