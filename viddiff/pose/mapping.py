"""Which measurement, if any, tests each difference: one structured call to the proposer's model.

The model sees the action, its stages and the difference statements, and maps each statement to at most
one measurement of the closed vocabulary (:mod:`viddiff.pose.vocabulary`), with the direction of the value
that makes the statement true. It never gives numbers: those are computed. The call goes through the
project's chat client, so it is validated against a JSON schema, re-asked when invalid, and cached.
"""

from __future__ import annotations

from typing import Literal, Optional, Sequence

from pydantic import BaseModel, Field

from viddiff.backends.chat import ChatModel
from viddiff.backends.messages import system_message, user_message
from viddiff.backends.usage import UsageMeter
from viddiff.config import ModelCallConfig
from viddiff.pose.vocabulary import BODY_PARTS, QUANTITIES, STATISTICS, normalised
from viddiff.schema import Difference, MeasurementSpec, PoseBodyPart, PoseQuantity, PoseSide, PoseStatistic, Stage

STAGE = "pose"
PROMPT_VERSION = "pose-mapping-v1"
SYSTEM = "You are a biomechanics analyst. You answer with JSON only, exactly in the requested format."

PROMPT = """Two videos show people performing this action: "{action}".
Its stages, in order:
{stages}

Body-pose measurements can be taken from both videos. Each measurement is one quantity:
{quantities}
summarised by one statistic over one stage (or over the whole action):
{statistics}

For each difference statement below, choose the ONE measurement that directly tests it, or say that none does. Choose none when the statement is about something a body pose cannot show (objects, equipment, clothing, facial expression, camera, smoothness, balance, intent) or when no quantity above matches it closely; never stretch a quantity to fit.
For a measurement give:
- "quantity": one of {quantity_names},
- "side": "left", "right" or "both" (the mean of the two sides) for quantities that have sides, else "none",
- "body_part": for "speed" only, one of {body_parts}, else null,
- "statistic": one of {statistic_names} (ignored for "duration"),
- "stage": the number of the stage where the statement is judged, as listed above, or null for the whole action,
- "direction": "greater" if a greater value makes the statement more true, "smaller" if a smaller value does.

Differences (id: statement):
{differences}

Answer as JSON: {{"differences": [{{"id": "...", "measurable": true, "quantity": "knee_angle", "side": "both", "body_part": null, "statistic": "min", "stage": 2, "direction": "smaller"}}, {{"id": "...", "measurable": false}}, ...]}} with every id exactly once."""


class MappedDifference(BaseModel):
    id: str
    measurable: bool
    quantity: Optional[PoseQuantity] = None
    side: PoseSide = "none"
    body_part: Optional[PoseBodyPart] = None
    statistic: PoseStatistic = "mean"
    stage: Optional[int] = Field(default=None, description="stage number as listed (1 = first), or null")
    direction: Optional[Literal["greater", "smaller"]] = None


class PoseMeasurementsAnswer(BaseModel):
    differences: list[MappedDifference]


def build_prompt(action: str, stages: Sequence[Stage], differences: Sequence[Difference]) -> str:
    return PROMPT.format(
        action=action,
        stages="\n".join(f"{i + 1}. {s.name}: {s.description}".rstrip(": ") for i, s in enumerate(stages)),
        quantities="\n".join(f"- {q.name}: {q.description}" for q in QUANTITIES.values()),
        statistics="\n".join(f"- {name}: {text}" for name, text in STATISTICS.items()),
        quantity_names=", ".join(f'"{n}"' for n in QUANTITIES),
        body_parts=", ".join(f'"{p}"' for p in BODY_PARTS),
        statistic_names=", ".join(f'"{s}"' for s in STATISTICS),
        differences="\n".join(f"{d.key}: {d.description}" for d in differences),
    )


def check_answer(answer: PoseMeasurementsAnswer, ids: Sequence[str], n_stages: int) -> None:
    """Every id exactly once; a measurable one names a quantity, a direction and a stage that exists."""
    given = [d.id for d in answer.differences]
    missing = [i for i in ids if i not in given]
    unknown = sorted(set(given) - set(ids))
    repeated = sorted({i for i in given if given.count(i) > 1})
    problems = []
    if missing:
        problems.append(f"missing ids {missing}")
    if unknown:
        problems.append(f"unknown ids {unknown}")
    if repeated:
        problems.append(f"ids given more than once {repeated}")
    for item in answer.differences:
        if not item.measurable:
            continue
        if item.quantity is None or item.direction is None:
            problems.append(f"id {item.id}: a measurable difference needs a quantity and a direction")
        if item.stage is not None and not 1 <= item.stage <= n_stages:
            problems.append(f"id {item.id}: stage {item.stage} is not between 1 and {n_stages}")
        if item.quantity == "speed" and item.body_part is None:
            problems.append(f'id {item.id}: "speed" needs a body_part')
    if problems:
        raise ValueError("; ".join(problems))


async def map_differences(
    client: ChatModel,
    call: ModelCallConfig,
    action: str,
    stages: Sequence[Stage],
    differences: Sequence[Difference],
    meter: Optional[UsageMeter] = None,
) -> dict[str, Optional[MeasurementSpec]]:
    """Difference key → its measurement (stage as an index into ``stages``), or ``None`` where none fits."""
    if not differences:
        return {}
    ids = [d.key for d in differences]
    messages = [system_message(SYSTEM), user_message(build_prompt(action, stages, differences))]
    answer = await client.complete_json(
        call, messages, PoseMeasurementsAnswer, stage=STAGE, meter=meter,
        validate=lambda a: check_answer(a, ids, len(stages)),
    )
    by_id = {item.id: item for item in answer.differences}
    specs: dict[str, Optional[MeasurementSpec]] = {}
    for key in ids:
        item = by_id[key]
        if not item.measurable:
            specs[key] = None
            continue
        specs[key] = normalised(
            MeasurementSpec(
                quantity=item.quantity, side=item.side, body_part=item.body_part, statistic=item.statistic,
                stage=None if item.stage is None else item.stage - 1, direction=item.direction,
            )
        )
    return specs
