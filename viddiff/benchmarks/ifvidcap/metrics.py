"""IF-VidCap metrics from checked instructions: CSR and ISR, overall, rule-based and open-ended, ×100.

A *constraint* is one rule item or one open-ended group; a group is satisfied only when it has items and
every one is answered correctly (a group without items counts in the denominators and never passes, as in
the released ``metrics.py``).

- **ISR**: the share of instructions whose constraints are all satisfied, over the instructions that have
  at least one constraint (of the kind, for the rule-based and open-ended ISR).
- **CSR, micro** (the released code, which produced the published numbers): satisfied constraints over all
  constraints, pooled over instructions.
- **CSR, macro** (the paper's Eq. 1): the mean over instructions of each one's satisfied share.

The two CSRs differ whenever instructions have different numbers of constraints; both are reported,
labelled. Nothing here calls a model.
"""

from __future__ import annotations

from typing import Literal, Optional, Sequence

from pydantic import BaseModel, ConfigDict, Field


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class RuleOutcome(_Model):
    """One rule item of one instruction: the spans checked and the verdict."""

    check_id: str
    constraint_id: str
    description: str = ""
    spans: list[str] = Field(default_factory=list)
    verbatim: Optional[bool] = None
    """Every span occurs in the full response (``None``: not checked, as for ``count`` items)."""
    stale: bool = False
    """Not asked (the instruction's shared re-ask budget was spent): scored on the previous item's spans."""
    calls: int = 0
    passed: bool = False
    error: Optional[str] = None
    """Why the item could not be checked (judge failure, a check that raised): counted as not satisfied."""


class OpenOutcome(_Model):
    check_id: str
    check_type: str = ""
    question: str
    options: list[str] = Field(default_factory=list)
    correct_answer: str
    answer: Optional[str] = None
    """The judge's answer as read (its first letter when that is A-D)."""
    explanation: str = ""
    passed: bool = False
    error: Optional[str] = None


class GroupOutcome(_Model):
    index: int
    check_content: str = ""
    items: list[OpenOutcome] = Field(default_factory=list)

    @property
    def passed(self) -> bool:
        return bool(self.items) and all(i.passed for i in self.items)


Status = Literal["judged", "no_response"]


class InstructionOutcome(_Model):
    """One instruction's checked constraints (one sample)."""

    sample_key: str
    video_id: str
    prompt_id: str
    field: str = ""
    status: Status = "judged"
    """``no_response``: empty or missing response, not sent to the judges, every constraint unsatisfied."""
    rules: list[RuleOutcome] = Field(default_factory=list)
    groups: list[GroupOutcome] = Field(default_factory=list)

    @property
    def errors(self) -> list[str]:
        return [f"{r.check_id}: {r.error}" for r in self.rules if r.error] + [
            f"{i.check_id}: {i.error}" for g in self.groups for i in g.items if i.error
        ]

    def satisfied(self, kind: Literal["all", "rule", "open"] = "all") -> tuple[int, int]:
        """(satisfied, total) constraints of ``kind``."""
        rules = [r.passed for r in self.rules] if kind != "open" else []
        groups = [g.passed for g in self.groups] if kind != "rule" else []
        flags = rules + groups
        return sum(flags), len(flags)


class Rates(_Model):
    """One kind of constraint (all, rule-based, open-ended) over the scored instructions; rates ×100."""

    isr: Optional[float]
    csr_micro: Optional[float]
    """Released code: pooled satisfied / pooled constraints."""
    csr_macro: Optional[float]
    """Paper Eq. 1: mean over instructions of satisfied / constraints."""
    instructions: int
    """Instructions with at least one constraint of the kind (the ISR and macro-CSR denominator)."""
    satisfied_instructions: int
    constraints: int
    satisfied_constraints: int


class IfvidcapScores(_Model):
    overall: Rates
    rule: Rates
    open: Rates


def rates(outcomes: Sequence[InstructionOutcome], kind: Literal["all", "rule", "open"]) -> Rates:
    counted = [o.satisfied(kind) for o in outcomes]
    counted = [(s, n) for s, n in counted if n > 0]
    n_ins = len(counted)
    full = sum(1 for s, n in counted if s == n)
    sat, total = sum(s for s, _ in counted), sum(n for _, n in counted)
    return Rates(
        isr=100 * full / n_ins if n_ins else None,
        csr_micro=100 * sat / total if total else None,
        csr_macro=100 * sum(s / n for s, n in counted) / n_ins if n_ins else None,
        instructions=n_ins,
        satisfied_instructions=full,
        constraints=total,
        satisfied_constraints=sat,
    )


def score(outcomes: Sequence[InstructionOutcome]) -> IfvidcapScores:
    return IfvidcapScores(overall=rates(outcomes, "all"), rule=rates(outcomes, "rule"), open=rates(outcomes, "open"))
