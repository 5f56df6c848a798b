"""Stage 1 of VidDiff: propose differences, sub-action stages, and the links between them."""

from __future__ import annotations

import logging
from typing import Optional, TypeVar

from pydantic import BaseModel

from viddiff.backends.chat import ChatModel
from viddiff.backends.messages import system_message, user_message
from viddiff.backends.usage import UsageMeter
from viddiff.config import ProposerConfig
from viddiff.errors import InvalidAnswerError, ViddiffError
from viddiff.proposer import prompts, release_prompts
from viddiff.proposer.answers import (
    ProposedDifference,
    ProposedStage,
    StageNameLinks,
    any_stages_answer,
    dimension_differences_answer,
    differences_answer,
    links_answer,
    refined_stages_answer,
    stages_answer,
)
from viddiff.proposer.matching import best_match, best_owner, normalise, same
from viddiff.schema import Difference, Proposal, Stage

log = logging.getLogger(__name__)
STAGE = "proposer"
T = TypeVar("T", bound=BaseModel)
D = TypeVar("D", bound=ProposedDifference)
WHOLE_VIDEO = Stage(
    name="whole video",
    description="the whole video, from its first frame to its last",
    retrieval_strings=["A photo of a frame from the video"],
)
"""The stage plan when every difference is global: nothing to localise, so no stage-plan calls are made."""


class Proposer:
    """Runs the proposer's LLM calls for one action; stateless apart from its client."""

    def __init__(self, client: ChatModel, cfg: ProposerConfig):
        self.client = client
        self.cfg = cfg

    async def propose(
        self,
        action: str,
        *,
        differences: Optional[list[Difference]] = None,
        n_differences: Optional[int] = None,
        stages: Optional[list[Stage]] = None,
        meter: Optional[UsageMeter] = None,
    ) -> Proposal:
        """Closed mode passes ``differences`` (the task's candidates); open mode passes ``n_differences``;
        describe mode passes the differences of :meth:`propose_dimension_differences`.

        ``stages`` reuses an earlier :meth:`stage_plan` of the same action (``proposer.reuse_per_action``).
        Only local differences are linked by the LLM; a global one is visible throughout, so it is linked
        to every stage (the localizer spreads its keyframes over the whole video and ignores the links).
        Without local differences no stage plan is asked for: the plan is the single :data:`WHOLE_VIDEO` stage.
        """
        notes: list[str] = []
        if differences is None:
            if not n_differences or n_differences < 1:
                raise ViddiffError(
                    f"open mode needs n_differences >= 1, got {n_differences!r}; "
                    "set the sample's n_differences_open (or pass n_differences)"
                )
            differences = await self.propose_differences(action, n_differences, meter)
        if not differences:
            raise ViddiffError("closed mode got an empty list of differences: give at least one statement to check")
        keys = [d.key for d in differences]
        if len(set(keys)) != len(keys):
            raise ViddiffError(f"difference keys must be distinct, got {keys}")
        local = [d for d in differences if d.scope == "local"]
        if stages is None and not local:
            stages = [WHOLE_VIDEO]
        elif stages is None:
            stages, plan_notes = await self.stage_plan(action, meter)
            notes.extend(plan_notes)
        local_links = await self.link(action, stages, local, notes, meter) if local else {}
        every_stage = list(range(len(stages)))
        links = {d.key: local_links.get(d.key, every_stage) for d in differences}
        for note in notes:
            log.info("proposer: %s", note)
        return Proposal(differences=differences, stages=stages, links=links, notes=notes)

    async def stage_plan(self, action: str, meter: Optional[UsageMeter] = None) -> tuple[list[Stage], list[str]]:
        """The action's stages with (optionally refined) retrieval strings, plus notes on repairs."""
        notes: list[str] = []
        stages = await self.propose_stages(action, meter, notes)
        if self.cfg.refine_retrieval_strings:
            stages = await self.refine_stages(action, stages, notes, meter)
        return stages, notes

    @property
    def _as_released(self) -> bool:
        return self.cfg.prompt_style == "release"

    async def _ask(self, text: str, schema: type[T], meter: Optional[UsageMeter], *, own_prompt: bool = False) -> T:
        """One proposer call; the release sent its proposer prompts without a system message.
        ``own_prompt``: a prompt the release has no counterpart of (describe mode), always with ours."""
        system = [] if self._as_released and not own_prompt else [system_message(prompts.SYSTEM)]
        return await self.client.complete_json(
            self.cfg, [*system, user_message(text)], schema, stage=STAGE, meter=meter
        )

    async def propose_differences(self, action: str, n: int, meter: Optional[UsageMeter]) -> list[Difference]:
        if self._as_released:
            text = release_prompts.differences(action, n)
        else:
            text = prompts.DIFFERENCES.format(scene=prompts.scene(action), n_differences=n)
        answer = await self._ask(text, differences_answer(n if self.cfg.enforce_counts else None), meter)
        return [
            Difference(
                key=str(i),
                name=d.name,
                description=d.description,
                query_string=d.query_string.strip() or d.description,
                num_frames=d.num_frames,
            )
            for i, d in enumerate(_distinct_names(answer.differences))
        ]

    async def propose_dimension_differences(
        self, action: str, n: int, meter: Optional[UsageMeter]
    ) -> list[Difference]:
        """Describe mode: ``n`` candidate differences along the seven dimensions (``viddiff.schema.DIMENSIONS``), each with its
        category (a canonical key), scope, and the contrasting phrase the description renderer needs."""
        if n < 1:
            raise ViddiffError(f"describe mode needs n_differences >= 1, got {n}; set proposer.describe_n_differences")
        schema = dimension_differences_answer(n, self.cfg.fuzzy_match_threshold)
        answer = await self._ask(prompts.dimension_differences(action, n), schema, meter, own_prompt=True)
        return [
            Difference(
                key=str(i),
                name=d.name,
                description=d.description,
                query_string=d.query_string.strip() or d.description,
                num_frames=d.num_frames,
                category=d.category,
                scope=d.scope,
                contrast=d.contrast,
            )
            for i, d in enumerate(_distinct_names(answer.differences))
        ]

    async def propose_stages(
        self, action: str, meter: Optional[UsageMeter], notes: Optional[list[str]] = None
    ) -> list[Stage]:
        """The action's stages. Stage names that repeat (up to case and spacing) get a numbered suffix,
        since links name stages; a model cannot be held to that, as JSON Schema cannot state it."""
        max_stages, n_keys = self.cfg.max_stages, self.cfg.n_retrieval_keys
        notes = notes if notes is not None else []
        if self._as_released:
            text = release_prompts.stages(action, max_stages, n_keys)
        else:
            text = prompts.STAGES.format(scene=prompts.scene(action), max_stages=max_stages, n_retrieval_keys=n_keys)
        schema = stages_answer(max_stages, n_keys) if self.cfg.enforce_counts else any_stages_answer()
        answer = await self._ask(text, schema, meter)
        return _stage_plan(answer.stages, n_keys, notes)

    async def refine_stages(
        self, action: str, stages: list[Stage], notes: list[str], meter: Optional[UsageMeter]
    ) -> list[Stage]:
        """Drop retrieval strings that are not distinctive of their stage; keep the originals on failure.

        ``keep_known`` refinement may only remove strings: anything it returns that is not (up to the fuzzy
        threshold) one of the stage's original strings is ignored. ``wholesale`` takes the refined plan as
        returned, as the release does.
        """
        if self.cfg.refinement == "wholesale":
            return await self._refine_wholesale(action, stages, notes, meter)
        threshold = self.cfg.fuzzy_match_threshold
        listing = "\n".join(
            f"{i + 1}. {s.name}: " + "; ".join(f'"{r}"' for r in s.retrieval_strings) for i, s in enumerate(stages)
        )
        schema = refined_stages_answer([s.name for s in stages], threshold)
        try:
            text = prompts.REFINE.format(scene=prompts.scene(action), stages=listing)
            answer = await self._ask(text, schema, meter)
        except InvalidAnswerError as exc:
            notes.append(f"retrieval-string refinement failed ({exc}); kept the unrefined strings")
            return stages
        by_name: dict[str, list[str]] = {}
        for entry in answer.stages:
            by_name.setdefault(entry.name, entry.retrieval_strings)  # a stage given twice: its first entry counts
        refined_stages = []
        for original in stages:
            refined = by_name.get(original.name)
            if refined is None:
                notes.append(f"refinement left out stage {original.name!r}; kept its strings")
                refined_stages.append(original)
                continue
            kept: list[str] = []
            for text in _clean_strings(refined):
                idx = best_match(text, original.retrieval_strings, threshold)
                if idx is None:
                    notes.append(f"refinement invented string {text!r} for stage {original.name!r}; ignored")
                    continue
                known = original.retrieval_strings[idx]
                if not same(text, known):
                    notes.append(f"refinement string {text!r} taken as the original {known!r}")
                if known not in kept:
                    kept.append(known)
            if not kept:
                notes.append(f"refinement kept no known string for stage {original.name!r}; kept the originals")
                kept = original.retrieval_strings
            refined_stages.append(original.model_copy(update={"retrieval_strings": kept}))
        return refined_stages

    async def _refine_wholesale(
        self, action: str, stages: list[Stage], notes: list[str], meter: Optional[UsageMeter]
    ) -> list[Stage]:
        """The refined plan replaces the plan (names, descriptions, number and order of stages, strings), as
        released; only an answer the localizer cannot use (no stage, a stage without strings) keeps the original."""
        try:
            answer = await self._ask(release_prompts.refine(action, stages), any_stages_answer(), meter)
        except InvalidAnswerError as exc:
            notes.append(f"retrieval-string refinement failed ({exc}); kept the unrefined strings")
            return stages
        refined = _stage_plan(answer.stages, 1, notes)
        if [s.name for s in refined] != [s.name for s in stages]:
            notes.append(
                f"refinement changed the stages from {[s.name for s in stages]} to {[s.name for s in refined]}; "
                "taken as returned (proposer.refinement=wholesale)"
            )
        return refined

    async def link(
        self,
        action: str,
        stages: list[Stage],
        differences: list[Difference],
        notes: list[str],
        meter: Optional[UsageMeter],
    ) -> dict[str, list[int]]:
        """Map each difference key to stage indices, repairing names and falling back to the middle stage.

        ``link_by=id``: the prompt lists stages as ``"N. name: description"`` and differences as
        ``"key: description"``; answers that copy a listing line, or name a difference by its name or
        statement instead of its id, are repaired by fuzzy matching above the threshold. ``link_by=name``
        (as released): see :meth:`_links_by_name`. Every repair and fallback is noted.
        """
        keys = [d.key for d in differences]
        links: dict[str, set[int]] = {k: set() for k in keys}
        try:
            if self.cfg.link_by == "name":
                await self._links_by_name(action, stages, differences, links, notes, meter)
            else:
                await self._links_by_id(action, stages, differences, links, notes, meter)
        except InvalidAnswerError as exc:
            notes.append(f"linking failed ({exc}); every difference falls back to the middle stage")
        middle = len(stages) // 2  # the later middle for an even count, as the release (stage1_proposer.py)
        result: dict[str, list[int]] = {}
        for key in keys:
            if not links[key]:
                notes.append(f"difference {key!r} linked to no stage; using the middle stage {stages[middle].name!r}")
                links[key].add(middle)
            result[key] = sorted(links[key])
        return result

    async def _links_by_id(
        self,
        action: str,
        stages: list[Stage],
        differences: list[Difference],
        links: dict[str, set[int]],
        notes: list[str],
        meter: Optional[UsageMeter],
    ) -> None:
        threshold = self.cfg.fuzzy_match_threshold
        stage_lines = [f"{i + 1}. {s.name}" for i, s in enumerate(stages)]
        stage_listing = "\n".join(f"{line}: {s.description}" for line, s in zip(stage_lines, stages))
        diff_lines = [f"{d.key}: {d.description}" for d in differences]
        keys = [d.key for d in differences]
        stage_aliases = [[s.name, line] for s, line in zip(stages, stage_lines)]
        diff_aliases = [[line, d.name, d.description] for line, d in zip(diff_lines, differences)]
        answer = await self._ask(
            prompts.LINKS.format(scene=prompts.scene(action), stages=stage_listing, differences="\n".join(diff_lines)),
            links_answer([s.name for s in stages], keys),
            meter,
        )
        for entry in answer.links:
            stage_idx = best_owner(entry.stage, stage_aliases, threshold)
            if stage_idx is None:
                notes.append(f"link to unknown stage {entry.stage!r} ignored")
                continue
            if not same(entry.stage, stages[stage_idx].name):
                notes.append(f"stage {entry.stage!r} matched to {stages[stage_idx].name!r}")
            for ref in entry.differences:
                ref = ref.strip()
                if ref in links:
                    links[ref].add(stage_idx)
                    continue
                diff_idx = best_owner(ref, diff_aliases, threshold)
                if diff_idx is None:
                    notes.append(f"link to unknown difference {ref!r} ignored")
                    continue
                notes.append(f"difference {ref!r} matched to key {keys[diff_idx]!r}")
                links[keys[diff_idx]].add(stage_idx)

    async def _links_by_name(
        self,
        action: str,
        stages: list[Stage],
        differences: list[Difference],
        links: dict[str, set[int]],
        notes: list[str],
        meter: Optional[UsageMeter],
    ) -> None:
        """As released: the model maps stage names to difference names. A stage name it misspells is taken
        above ``fuzzy_match_threshold``, else dropped; a difference name it misspells goes to the nearest
        listed name, however far (the release's repair has no threshold there). Differences sharing a name
        are listed with a numbered suffix so that each can be named."""
        names = _distinct_labels([d.name.strip() or d.description for d in differences])
        stage_names = [s.name for s in stages]
        text = release_prompts.links(action, stages, differences, names)
        answer = await self._ask(text, StageNameLinks, meter)
        for stage_name, refs in answer.root.items():
            stage_idx = best_match(stage_name, stage_names, self.cfg.fuzzy_match_threshold)
            if stage_idx is None:
                notes.append(f"link to unknown stage {stage_name!r} ignored")
                continue
            if not same(stage_name, stage_names[stage_idx]):
                notes.append(f"stage {stage_name!r} matched to {stage_names[stage_idx]!r}")
            for ref in refs:
                diff_idx = next((i for i, name in enumerate(names) if same(ref, name)), None)
                if diff_idx is None:
                    diff_idx = best_match(ref, names, 0.0)
                    notes.append(f"difference {ref!r} matched to the nearest name {names[diff_idx]!r}")
                links[differences[diff_idx].key].add(stage_idx)


def _stage_plan(proposed: list[ProposedStage], n_keys: int, notes: list[str]) -> list[Stage]:
    """Stages from an answer: repeated names numbered, strings cleaned (case variants merged); a stage
    left with fewer than ``n_keys`` distinct strings is noted."""
    stages: list[Stage] = []
    seen: dict[str, int] = {}
    for s in proposed:
        name = s.name
        count = seen[normalise(name)] = seen.get(normalise(name), 0) + 1
        if count > 1:
            name = f"{name} ({count})"
            notes.append(f"stage name {s.name!r} repeats; the repeat is called {name!r}")
        strings = _clean_strings(s.retrieval_strings)
        if len(strings) < n_keys:
            notes.append(f"stage {name!r} has {len(strings)} distinct retrieval strings ({n_keys} asked for)")
        stages.append(Stage(name=name, description=s.description.strip(), retrieval_strings=strings))
    return stages


def _distinct_labels(labels: list[str]) -> list[str]:
    """``labels`` with later repeats (up to case and spacing) numbered: ``"depth"``, ``"depth (2)"``."""
    seen: dict[str, int] = {}
    out = []
    for label in labels:
        count = seen[normalise(label)] = seen.get(normalise(label), 0) + 1
        out.append(label if count == 1 else f"{label} ({count})")
    return out


def _clean_strings(strings: list[str]) -> list[str]:
    """Stripped, non-empty, first occurrence of each (duplicates would only add weight to one description)."""
    seen: set[str] = set()
    out = []
    for text in strings:
        text = text.strip()
        if text and normalise(text) not in seen:
            seen.add(normalise(text))
            out.append(text)
    return out


def _distinct_names(differences: list[D]) -> list[D]:
    """The differences without later repeats of a name (up to case and spacing): JSON Schema cannot ask
    for distinct names, so a repeat is dropped (and logged), never re-asked."""
    seen: set[str] = set()
    kept = []
    for d in differences:
        key = normalise(d.name)
        if key in seen:
            log.info("proposer: dropped a repeat of the difference %r", d.name)
            continue
        seen.add(key)
        kept.append(d)
    return kept
