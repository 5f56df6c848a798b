"""Stage 1 of VidDiff: propose differences, sub-action stages, and the links between them."""

from __future__ import annotations

import logging
from typing import Optional

from viddiff.backends.llm import ChatClient, UsageMeter, system_message, user_message
from viddiff.config import ProposerConfig
from viddiff.errors import InvalidAnswerError
from viddiff.proposer import prompts
from viddiff.proposer.answers import DifferencesAnswer, LinksAnswer, StagesAnswer
from viddiff.proposer.matching import best_match, normalise
from viddiff.schema import Difference, Proposal, Stage

log = logging.getLogger(__name__)
STAGE = "proposer"


class Proposer:
    """Runs the proposer's LLM calls for one action; stateless apart from its client."""

    def __init__(self, client: ChatClient, cfg: ProposerConfig):
        self.client = client
        self.cfg = cfg

    async def propose(
        self,
        action: str,
        *,
        differences: Optional[list[Difference]] = None,
        n_differences: Optional[int] = None,
        meter: Optional[UsageMeter] = None,
    ) -> Proposal:
        """Closed mode passes ``differences`` (the task's candidates); open mode passes ``n_differences``."""
        notes: list[str] = []
        if differences is None:
            if not n_differences or n_differences < 1:
                raise ValueError("open mode needs n_differences >= 1")
            differences = await self.propose_differences(action, n_differences, meter)
        if not differences:
            raise ValueError("no differences to localise")
        stages = await self.propose_stages(action, meter)
        if self.cfg.refine_retrieval_strings:
            stages = await self.refine_stages(action, stages, notes, meter)
        links = await self.link(action, stages, differences, notes, meter)
        for note in notes:
            log.info("proposer: %s", note)
        return Proposal(differences=differences, stages=stages, links=links, notes=notes)

    async def _ask(self, text: str, schema, meter, validate=None):
        return await self.client.complete_json(
            self.cfg,
            [system_message(prompts.SYSTEM), user_message(text)],
            schema,
            stage=STAGE,
            validate=validate,
            meter=meter,
        )

    async def propose_differences(self, action: str, n: int, meter: Optional[UsageMeter]) -> list[Difference]:
        def validate(answer: DifferencesAnswer) -> None:
            if not answer.differences:
                raise ValueError("the list of differences is empty")
            if len(answer.differences) > n:
                raise ValueError(f"{len(answer.differences)} differences given, at most {n} allowed")
            names = [normalise(d.name) for d in answer.differences]
            if len(set(names)) != len(names):
                raise ValueError("difference names must be distinct")

        answer = await self._ask(
            prompts.DIFFERENCES.format(action=action, n_differences=n), DifferencesAnswer, meter, validate
        )
        return [
            Difference(
                key=str(i),
                name=d.name.strip(),
                description=d.description.strip(),
                query_string=(d.query_string or d.description).strip(),
                num_frames=d.num_frames,
            )
            for i, d in enumerate(answer.differences)
        ]

    async def propose_stages(self, action: str, meter: Optional[UsageMeter]) -> list[Stage]:
        max_stages, n_keys = self.cfg.max_stages, self.cfg.n_retrieval_keys

        def validate(answer: StagesAnswer) -> None:
            if len(answer.stages) > max_stages:
                raise ValueError(f"{len(answer.stages)} stages given, at most {max_stages} allowed")
            names = [normalise(s.name) for s in answer.stages]
            if len(set(names)) != len(names):
                raise ValueError("stage names must be distinct")
            for s in answer.stages:
                if len([r for r in s.retrieval_strings if r.strip()]) < n_keys:
                    raise ValueError(f"stage {s.name!r} has fewer than {n_keys} retrieval strings")

        answer = await self._ask(
            prompts.STAGES.format(action=action, max_stages=max_stages, n_retrieval_keys=n_keys),
            StagesAnswer,
            meter,
            validate,
        )
        return [
            Stage(
                name=s.name.strip(),
                description=s.description.strip(),
                retrieval_strings=[r.strip() for r in s.retrieval_strings if r.strip()],
            )
            for s in answer.stages
        ]

    async def refine_stages(
        self, action: str, stages: list[Stage], notes: list[str], meter: Optional[UsageMeter]
    ) -> list[Stage]:
        """Drop retrieval strings that are not distinctive of their stage; keep the originals on failure."""
        threshold = self.cfg.fuzzy_match_threshold
        listing = "\n".join(
            f"{i + 1}. {s.name}: " + "; ".join(f'"{r}"' for r in s.retrieval_strings) for i, s in enumerate(stages)
        )

        def validate(answer: StagesAnswer) -> None:
            if len(answer.stages) != len(stages):
                raise ValueError(f"{len(answer.stages)} stages returned, expected the same {len(stages)} stages")
            for original, refined in zip(stages, answer.stages):
                if best_match(refined.name, [original.name], threshold) is None:
                    raise ValueError(f"stage {refined.name!r} does not match {original.name!r} at its position")
                if not any(r.strip() for r in refined.retrieval_strings):
                    raise ValueError(f"stage {original.name!r} lost all its retrieval strings")

        try:
            answer = await self._ask(prompts.REFINE.format(action=action, stages=listing), StagesAnswer, meter, validate)
        except InvalidAnswerError as exc:
            notes.append(f"retrieval-string refinement failed ({exc}); kept the unrefined strings")
            return stages
        refined_stages = []
        for original, refined in zip(stages, answer.stages):
            kept = []
            for text in refined.retrieval_strings:
                idx = best_match(text, original.retrieval_strings, threshold)
                if idx is None:
                    notes.append(f"refinement invented string {text!r} for stage {original.name!r}; ignored")
                elif original.retrieval_strings[idx] not in kept:
                    kept.append(original.retrieval_strings[idx])
            if not kept:
                notes.append(f"refinement kept no known string for stage {original.name!r}; kept the originals")
                kept = original.retrieval_strings
            refined_stages.append(original.model_copy(update={"retrieval_strings": kept}))
        return refined_stages

    async def link(
        self,
        action: str,
        stages: list[Stage],
        differences: list[Difference],
        notes: list[str],
        meter: Optional[UsageMeter],
    ) -> dict[str, list[int]]:
        """Map each difference key to stage indices, repairing names and falling back to the middle stage."""
        threshold = self.cfg.fuzzy_match_threshold
        stage_listing = "\n".join(f"{i + 1}. {s.name}: {s.description}" for i, s in enumerate(stages))
        diff_listing = "\n".join(f"{d.key}: {d.description}" for d in differences)
        keys = [d.key for d in differences]
        names = [d.name for d in differences]
        links: dict[str, set[int]] = {k: set() for k in keys}
        try:
            answer = await self._ask(
                prompts.LINKS.format(action=action, stages=stage_listing, differences=diff_listing), LinksAnswer, meter
            )
            entries = answer.links
        except InvalidAnswerError as exc:
            notes.append(f"linking failed ({exc}); every difference falls back to the middle stage")
            entries = []
        for entry in entries:
            stage_idx = best_match(entry.stage, [s.name for s in stages], threshold)
            if stage_idx is None:
                notes.append(f"link to unknown stage {entry.stage!r} ignored")
                continue
            for ref in entry.differences:
                ref = str(ref).strip()
                if ref in links:
                    links[ref].add(stage_idx)
                    continue
                name_idx = best_match(ref, names, threshold)
                if name_idx is None:
                    notes.append(f"link to unknown difference {ref!r} ignored")
                    continue
                notes.append(f"difference {ref!r} matched by name to key {keys[name_idx]!r}")
                links[keys[name_idx]].add(stage_idx)
        middle = (len(stages) - 1) // 2
        result: dict[str, list[int]] = {}
        for key in keys:
            if not links[key]:
                notes.append(f"difference {key!r} linked to no stage; using the middle stage {stages[middle].name!r}")
                links[key].add(middle)
            result[key] = sorted(links[key])
        return result
