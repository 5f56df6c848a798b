"""IF-VidCap metrics on hand-built outcomes: micro (released) and macro (Eq. 1) CSR differ, a group with no
questions never passes but counts, an instruction without rule items is outside the rule-based rates."""

from __future__ import annotations

import pytest

from viddiff.benchmarks.ifvidcap.metrics import GroupOutcome, InstructionOutcome, OpenOutcome, RuleOutcome, score


def _rule(passed: bool) -> RuleOutcome:
    return RuleOutcome(check_id="r", constraint_id="plain_text", passed=passed)


def _group(*answers: bool) -> GroupOutcome:
    return GroupOutcome(
        index=0, items=[OpenOutcome(check_id="o", question="q", correct_answer="A", passed=a) for a in answers]
    )


def _ins(key: str, rules: list[bool], groups: list[tuple[bool, ...]]) -> InstructionOutcome:
    return InstructionOutcome(
        sample_key=key, video_id=key.split("/")[0], prompt_id=key.split("/")[1],
        rules=[_rule(p) for p in rules], groups=[_group(*g) for g in groups],
    )


OUTCOMES = [
    _ins("v1/01", [True, True, False, True], [(True, True)]),  # 4 of 5
    _ins("v1/02", [True], [(True, False), ()]),  # 1 of 3: a failed question, an empty group
    _ins("v2/01", [], [(True,)]),  # no rule item: 1 of 1
    _ins("v2/02", [True, True], []),  # no group: 2 of 2
]


def test_overall_rates_by_hand() -> None:
    o = score(OUTCOMES).overall
    assert (o.constraints, o.satisfied_constraints, o.instructions, o.satisfied_instructions) == (11, 8, 4, 2)
    assert o.csr_micro == pytest.approx(100 * 8 / 11)  # 72.73: pooled, as the released metrics.py
    assert o.csr_macro == pytest.approx(100 * (4 / 5 + 1 / 3 + 1 + 1) / 4)  # 78.33: Eq. 1
    assert o.csr_micro != pytest.approx(o.csr_macro)
    assert o.isr == pytest.approx(50.0)


def test_rule_based_rates_leave_out_instructions_without_rule_items() -> None:
    r = score(OUTCOMES).rule
    assert (r.constraints, r.satisfied_constraints, r.instructions, r.satisfied_instructions) == (7, 6, 3, 2)
    assert r.csr_micro == pytest.approx(100 * 6 / 7)
    assert r.csr_macro == pytest.approx(100 * (3 / 4 + 1 + 1) / 3)
    assert r.isr == pytest.approx(100 * 2 / 3)


def test_open_ended_rates_count_an_empty_group_that_never_passes() -> None:
    o = score(OUTCOMES).open
    assert (o.constraints, o.satisfied_constraints, o.instructions, o.satisfied_instructions) == (4, 2, 3, 2)
    assert o.csr_micro == pytest.approx(50.0)
    assert o.csr_macro == pytest.approx(100 * (1 + 0 + 1) / 3)
    assert o.isr == pytest.approx(100 * 2 / 3)
    assert not _group().passed and _group(True).passed and not _group(True, False).passed


def test_an_instruction_without_constraints_is_not_counted_and_nothing_scored_is_none() -> None:
    rates = score([_ins("v/01", [], [])]).overall
    assert (rates.instructions, rates.isr, rates.csr_micro, rates.csr_macro) == (0, None, None, None)
