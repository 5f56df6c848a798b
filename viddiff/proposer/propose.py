"""Stage 1 of VidDiff: propose differences, sub-action stages, and the links between them."""

from __future__ import annotations

import logging
from typing import Callable, Optional, TypeVar

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
    StageLink,
    StageNameLinks,
    any_stages_answer,
    dimension_differences_answer,
    differences_answer,
    links_answer,
    proposal_answer,
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
        on_stage_plan: Optional[Callable[[list[Stage], list[Difference]], None]] = None,
    ) -> Proposal:
        """Closed mode passes ``differences`` (the task's candidates); open mode passes ``n_differences``;
        describe mode passes the differences of :meth:`propose_dimension_differences`.
        ``on_stage_plan(stages, differences)`` is called once both are final, before the linking call, so the
        caller can start on what needs only them (segmenting the videos).

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
            if self.cfg.calls == "one" and stages is None:
                return await self.propose_in_one_call(action, n_differences=n_differences, meter=meter)
            differences = await self.propose_differences(action, n_differences, meter)
        if not differences:
            raise ViddiffError("closed mode got an empty list of differences: give at least one statement to check")
        keys = [d.key for d in differences]
        if len(set(keys)) != len(keys):
            raise ViddiffError(f"difference keys must be distinct, got {keys}")
        local = [d for d in differences if d.scope == "local"]
        if stages is None and not local:
            stages = [WHOLE_VIDEO]
        elif stages is None and self.cfg.calls == "one":
            return await self.propose_in_one_call(action, differences=differences, meter=meter)
        elif stages is None:
            stages, plan_notes = await self.stage_plan(action, meter)
            notes.extend(plan_notes)
        if on_stage_plan is not None:
            on_stage_plan(stages, differences)
        local_links = await self.link(action, stages, local, notes, meter) if local else {}
        return _proposal(differences, stages, local_links, notes)

    async def propose_in_one_call(
        self,
        action: str,
        *,
        differences: Optional[list[Difference]] = None,
        n_differences: Optional[int] = None,
        meter: Optional[UsageMeter] = None,
    ) -> Proposal:
        """``proposer.calls: one``: differences (open mode, ``n_differences``), stages and links from one call,
        repaired as the separate calls' answers are (no refinement call: the prompt asks for distinctive strings).
        In open mode the links name differences by name, mapped to their keys here. The release has no such
        call, so its prompt is always ours (``prompt_style`` and ``link_by`` do not apply)."""
        notes: list[str] = []
        cfg = self.cfg
        local = [d for d in differences or [] if d.scope == "local"]
        if differences is None:
            text = prompts.one_call(action, cfg.max_stages, cfg.n_retrieval_keys, n_differences=n_differences or 0)
            schema = proposal_answer(cfg.max_stages, cfg.n_retrieval_keys, n_differences=n_differences)
        else:
            listing = "\n".join(f"{d.key}: {d.description}" for d in local)
            text = prompts.one_call(action, cfg.max_stages, cfg.n_retrieval_keys, differences=listing)
            schema = proposal_answer(cfg.max_stages, cfg.n_retrieval_keys, ids=[d.key for d in local])
        answer = await self._ask(text, schema, meter, own_prompt=True)
        entries = answer.links
        if differences is None:
            differences = local = _differences(answer.differences)
            entries = _names_to_keys(entries, differences)
        stages = _stage_plan(answer.stages, cfg.n_retrieval_keys, notes)
        local_links = self.resolve_links(entries, stages, local, notes)
        return _proposal(differences, stages, local_links, notes)

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
        return _differences(answer.differences)

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
        return _middle_stage_fallback(links, stages, notes)

    def resolve_links(
        self, entries: list[StageLink], stages: list[Stage], differences: list[Difference], notes: list[str]
    ) -> dict[str, list[int]]:
        """Stage indices per difference key from a model's ``link_by=id`` entries (``proposer.calls: one``),
        repaired as :meth:`link` repairs them; a difference left without a stage gets the middle one."""
        links: dict[str, set[int]] = {d.key: set() for d in differences}
        self._add_id_links(entries, stages, differences, links, notes)
        return _middle_stage_fallback(links, stages, notes)

    async def _links_by_id(
        self,
        action: str,
        stages: list[Stage],
        differences: list[Difference],
        links: dict[str, set[int]],
        notes: list[str],
        meter: Optional[UsageMeter],
    ) -> None:
        stage_listing = "\n".join(f"{i + 1}. {s.name}: {s.description}" for i, s in enumerate(stages))
        diff_lines = [f"{d.key}: {d.description}" for d in differences]
        answer = await self._ask(
            prompts.LINKS.format(scene=prompts.scene(action), stages=stage_listing, differences="\n".join(diff_lines)),
            links_answer([s.name for s in stages], [d.key for d in differences]),
            meter,
        )
        self._add_id_links(answer.links, stages, differences, links, notes)

    def _add_id_links(
        self,
        entries: list[StageLink],
        stages: list[Stage],
        differences: list[Difference],
        links: dict[str, set[int]],
        notes: list[str],
    ) -> None:
        """Add a ``link_by=id`` answer's entries to ``links``: stage names, listing lines, difference names or
        statements instead of ids are repaired by fuzzy matching above the threshold, each repair noted."""
        threshold = self.cfg.fuzzy_match_threshold
        stage_lines = [f"{i + 1}. {s.name}" for i, s in enumerate(stages)]
        keys = [d.key for d in differences]
        stage_aliases = [[s.name, line] for s, line in zip(stages, stage_lines)]
        diff_aliases = [[f"{d.key}: {d.description}", d.name, d.description] for d in differences]
        for entry in entries:
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


def _middle_stage_fallback(links: dict[str, set[int]], stages: list[Stage], notes: list[str]) -> dict[str, list[int]]:
    """Sorted stage indices per key; a difference linked to no stage gets the middle one (noted)."""
    middle = len(stages) // 2  # the later middle for an even count, as the release (stage1_proposer.py)
    result: dict[str, list[int]] = {}
    for key, stage_ids in links.items():
        if not stage_ids:
            notes.append(f"difference {key!r} linked to no stage; using the middle stage {stages[middle].name!r}")
            stage_ids.add(middle)
        result[key] = sorted(stage_ids)
    return result


def _proposal(
    differences: list[Difference], stages: list[Stage], local_links: dict[str, list[int]], notes: list[str]
) -> Proposal:
    """Global differences are visible throughout: linked to every stage (the localizer ignores their links)."""
    every_stage = list(range(len(stages)))
    links = {d.key: local_links.get(d.key, every_stage) for d in differences}
    for note in notes:
        log.info("proposer: %s", note)
    return Proposal(differences=differences, stages=stages, links=links, notes=notes)


def _differences(proposed: list[ProposedDifference]) -> list[Difference]:
    """Proposed differences keyed ``"0"``, ``"1"``, ... in order, repeats of a name dropped."""
    return [
        Difference(
            key=str(i),
            name=d.name,
            description=d.description,
            query_string=d.query_string.strip() or d.description,
            num_frames=d.num_frames,
        )
        for i, d in enumerate(_distinct_names(proposed))
    ]


def _names_to_keys(entries: list[StageLink], differences: list[Difference]) -> list[StageLink]:
    """Open-mode one-call links name differences; a name (up to case and spacing) becomes its key. Anything
    else is left as written, for the fuzzy repair to take or refuse."""
    by_name = {normalise(d.name): d.key for d in differences}
    return [
        entry.model_copy(update={"differences": [by_name.get(normalise(ref), ref) for ref in entry.differences]})
        for entry in entries
    ]


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
