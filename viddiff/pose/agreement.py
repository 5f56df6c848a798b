"""One verdict a coach can read: the VLM's answer beside the one its difference's own measurement supports.

A headline that shows only the VLM's letter above numbers that say the opposite (or "within noise") is two
verdicts of which a reader sees one. :func:`agreement` puts both side by side and names the outcome ("VLM: B ·
measured: same within ±6° — disagree"), and :func:`settle` picks the answer by ``differencer.evidence``:
``off`` keeps the VLM's, ``decide`` lets a measurement that decides answer (its ``c`` only where the options
allow ``c``), the VLM the rest. Every face (the console, ``--json``, the service, the HTML report) shows the
:class:`~viddiff.schema.Agreement` stored on the prediction, so they cannot say different things. Pure.
"""

from __future__ import annotations

import math
from typing import Literal, Mapping, Optional

from viddiff.pose.measure import comparison_widths, decide, shown_value
from viddiff.pose.vocabulary import QUANTITIES
from viddiff.schema import Agreement, Evidence, Letter, Prediction

EvidenceMode = Literal["off", "decide"]
Options = Literal["ab", "abc"]
_NAMES: dict[Optional[str], str] = {"a": "A", "b": "B", "c": "similar", None: "no answer"}


def agreement(
    vlm: Optional[Letter], evidence: Evidence, margins: Mapping[str, float], *, mode: EvidenceMode = "off",
    options: Options = "ab", has_vlm: bool = True,
) -> Agreement:
    """Both readings of one difference, the outcome, and whose answer counts (see the module docstring).
    ``has_vlm=False``: the answer is the measurement's alone (the ``pose`` method)."""
    measured, reason = decide(evidence, margins)
    words = measured_words(evidence, measured, margins)
    if not has_vlm:
        outcome, decided_by = "measured only", "measurement"
    else:
        outcome = _outcome(vlm, measured)
        decided_by = "measurement" if mode == "decide" and _measurement_answers(measured, options) else "vlm"
    vlm_part = f"VLM: {_NAMES[vlm]}" if has_vlm else ""
    measured_part = f"measured: {words}"
    if not has_vlm:
        headline = measured_part
    elif decided_by == "measurement":
        headline = f"{measured_part} · {vlm_part} — {outcome}; the measurement decides"
    else:
        headline = f"{vlm_part} · {measured_part} — {outcome}"
    return Agreement(
        vlm=vlm if has_vlm else None, measured=measured, measured_words=words, measured_reason=reason,
        outcome=outcome, decided_by=decided_by, headline=headline,
    )


def settle(
    prediction: Prediction, evidence: Optional[Evidence], margins: Mapping[str, float], *, mode: EvidenceMode,
    options: Options,
) -> Prediction:
    """``prediction`` with its :class:`Agreement` (none without evidence), answered by the measurement where
    ``mode`` lets it decide (its rationale then leads, the VLM's follows)."""
    if evidence is None:
        return prediction
    agreed = agreement(prediction.prediction, evidence, margins, mode=mode, options=options)
    if agreed.decided_by == "vlm":
        return prediction.model_copy(update={"agreement": agreed})
    rationale = f"{agreed.measured_reason}. The VLM answered {_NAMES[prediction.prediction]}: {prediction.rationale}"
    return prediction.model_copy(update={"prediction": agreed.measured, "rationale": rationale, "agreement": agreed})


def _measurement_answers(measured: Optional[Letter], options: Options) -> bool:
    return measured in ("a", "b") or (measured == "c" and options == "abc")


def _outcome(vlm: Optional[Letter], measured: Optional[Letter]) -> str:
    if measured is None:
        return "undecided"
    if vlm is None:
        return "measured only"
    return "agree" if vlm == measured else "disagree"


def measured_words(evidence: Evidence, measured: Optional[Letter], margins: Mapping[str, float]) -> str:
    """The measured reading in a few words, from the same numbers :func:`~viddiff.pose.measure.decide` used."""
    if evidence.status == "uncertain":
        return "not measured reliably"
    if evidence.status == "not_comparable" or measured is None:
        return "not compared"
    a, b, unit = float(evidence.value_a), float(evidence.value_b), evidence.unit
    ua, ub = comparison_widths(evidence)
    kind = QUANTITIES[evidence.measurement.quantity].margin
    if kind in ("angle", "length"):
        noise, gap = math.hypot(ua, ub, evidence.view_difference), abs(b - a)
        noise_text, gap_text = f"±{shown_value(noise, unit)}", f"{shown_value(gap, unit)} apart"
        margin_text = shown_value(margins["angle_deg" if kind == "angle" else "length"], unit)
    else:
        low, high = sorted((abs(a), abs(b)))
        if low == 0:
            return _NAMES[measured]
        noise, gap = math.hypot(ua / abs(a), ub / abs(b)), math.log(high / low)
        noise_text, gap_text = f"±{100 * noise:.2g}%", f"×{high / low:.3g}"
        margin_text = f"×{margins[f'{kind}_ratio']:g}"
    if measured == "c":
        if gap <= noise:
            return f"same within {noise_text}"
        return f"same ({gap_text}, under the {margin_text} that matters)"
    return f"{_NAMES[measured]} ({gap_text}, beyond {noise_text})"


__all__ = ["EvidenceMode", "agreement", "measured_words", "settle"]
