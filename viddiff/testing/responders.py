"""A scripted stand-in for the LLMs/VLMs viddiff calls, for offline tests, demos and benches.

``ScriptedModel`` answers every request the toolkit makes (proposer,
differencer, open-mode judge and flip check, LMM baselines, the captioning
benchmarks' captioner and judges, questions about one video and their judge)
with valid, deterministic answers, recognising each request by its
response-format schema name (or, in ``json_object`` mode and for free text, by
its wording). Captions of the synthetic single-video clips state the background
colour and the square's direction read from the frames
(``viddiff.data.synth_clips``). Its visual answers are
computed from the images it is sent (mean brightness of A's frames versus
B's, direction chosen per statement), so they depend on the videos, flip
when A and B are swapped, and say ``c`` when both videos are the same —
enough to exercise the sanity checks end to end. It knows nothing about
actions: its accuracy is meaningless by design.

Use it with :class:`viddiff.testing.fake_openai.FakeOpenAIServer`::

    with FakeOpenAIServer(ScriptedModel()) as server: ...
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from typing import Any, Optional

import numpy as np

from viddiff.benchmarks.vidpair import prompts as vidpair_prompts
from viddiff.benchmarks.vidpair.synthetic import COLOURS, colours_seen
from viddiff.testing.fake_openai import ChatRequest

OPPOSITES = [("wider", "narrower"), ("deeper", "shallower"), ("higher", "lower"), ("faster", "slower"), ("more", "less")]
_SIMILARITY = re.compile(r"\b(both|same|similar|identical|no differences?)\b", re.I)
_JUDGE_STOPWORDS = {
    "the", "are", "was", "were", "does", "did", "than", "and", "with", "between", "two", "both", "video", "videos",
    "first", "second", "there", "any", "difference", "differences", "different", "differ", "compared", "same", "its",
    "their", "this", "that", "which", "what", "how", "from", "for", "one", "other", "has", "have", "appear", "appears",
    "whereas", "while",
}


_NAME_LINKS = 'Refer to stages and differences by their "name"'
"""Marks the linking prompt by name (``proposer.link_by=name``)."""
_REFINE_MARKERS = ("Remove the strings", "filter out")
"""Mark the two refinement prompts (``proposer.refinement``: ``keep_known``, ``wholesale``)."""
_N_A = re.compile(r"the first (\d+) images", re.I)
"""How many of a baseline request's images are video A's, as its text says (both prompt styles)."""
POSE_RULES: list[tuple[set[str], dict]] = [
    ({"slower"}, {"quantity": "duration", "direction": "greater", "side": "none"}),
    ({"faster", "hands"}, {"quantity": "speed", "body_part": "wrist", "statistic": "max", "direction": "greater"}),
    ({"faster"}, {"quantity": "duration", "direction": "smaller", "side": "none"}),
    ({"deeper"}, {"quantity": "knee_angle", "statistic": "min", "direction": "smaller"}),
    ({"knees", "straighter"}, {"quantity": "knee_angle", "statistic": "mean", "direction": "greater"}),
    ({"knee", "straighter"}, {"quantity": "knee_angle", "statistic": "mean", "direction": "greater"}),
    ({"arms", "straighter"}, {"quantity": "elbow_angle", "statistic": "mean", "direction": "greater"}),
    ({"leans"}, {"quantity": "trunk_lean", "statistic": "max", "direction": "greater", "side": "none"}),
    ({"upright"}, {"quantity": "trunk_lean", "statistic": "mean", "direction": "smaller", "side": "none"}),
    ({"stance", "wider"}, {"quantity": "stance_width", "statistic": "mean", "direction": "greater", "side": "none"}),
    ({"hands", "higher"}, {"quantity": "wrist_height", "statistic": "max", "direction": "greater"}),
    ({"hips", "lower"}, {"quantity": "hip_height", "statistic": "min", "direction": "smaller", "side": "none"}),
]
"""Keyword rules of the scripted body-pose mapping: the words a statement must contain → its measurement."""


def _stable_bit(text: str) -> int:
    return hashlib.sha256(text.encode()).digest()[0] & 1


def _after(text: str, marker: str) -> Any:
    """The JSON value that starts right after ``marker`` in ``text``."""
    start = text.index(marker) + len(marker)
    start = min(i for i in (text.find("{", start), text.find("[", start)) if i >= 0)
    value, _ = json.JSONDecoder().raw_decode(text, start)
    return value


def _leading_json(text: str) -> Any:
    """The JSON value a message starts with (the client may append an instruction after it)."""
    value, _ = json.JSONDecoder().raw_decode(text.lstrip())
    return value


def _words(text: str) -> set[str]:
    return set(re.findall(r"[a-z]+", text.lower()))


class ScriptedModel:
    """Responder for ``FakeOpenAIServer``: a deterministic fake of every model viddiff uses."""

    def __init__(self, n_stages: int = 3):
        self.n_stages = n_stages

    def __call__(self, req: ChatRequest) -> str:
        kind = self.kind(req)
        handler = getattr(self, f"_answer_{kind}", None)
        if handler is None:
            raise ValueError(f"ScriptedModel does not know how to answer a {kind!r} request")
        answer = handler(req)
        return answer if isinstance(answer, str) else json.dumps(answer)  # str: a free-text answer

    def kind(self, req: ChatRequest) -> str:
        """Which request this is: its answer schema's name (``json_schema``), else told by its wording."""
        name = schema_name(req)
        text = req.text
        if req.response_format is None and "Compare video A and video B along these seven dimensions" in text:
            return "DescribeText"
        if name is None and "Plan the comparison of two performances" in text:
            return "ProposalAnswer"
        if req.response_format is None and vidpair_prompts.QUESTION_MARK in text and any(
            instruction in text for instruction in vidpair_prompts.INSTRUCTIONS.values()
        ):
            return "VidPairQuestion"
        if req.response_format is None:
            if "Correct Answer:" in text and "Predicted Answer:" in text:
                return "GradeText"
            if "\nDescription:\n" in text and "\nQuestion:\n" in text:
                return "CaptionAnswerText"
            if req.images:
                return "CaptionText"
        if name is None and _NAME_LINKS in text:  # first: its stage plan is JSON with a "stages" key
            return "StageNameLinks"
        if name == "StagesAnswer" or name is None and '"stages"' in text:
            return "refine" if any(marker in text for marker in _REFINE_MARKERS) else "stages"
        if name is None:
            for marker, kind in (
                ("<reference>", "DescriptionScoreAnswer"),  # first: the judged texts may contain other markers
                ("<question>", "ChecklistJudgeAnswer"),
                ('"checkitem"', "SpanAnswer"),
                ('"result_confidence"', "OpenJudgeAnswer"),
                ("Predicted Answer:", "CaptionGrade"),
                ("ways in which the two performances could differ", "DifferencesAnswer"),
                ("differences in how this action could be performed", "DifferencesAnswer"),
                ("candidate differences between the two videos", "DimensionDifferencesAnswer"),
                ("list the ids of the differences", "LinksAnswer"),
                ("choose the ONE measurement", "PoseMeasurementsAnswer"),
                ('"answer_detailed"', "AnswerABC"),
                ('"matches"', "MatchAnswer"),
                ('"results"', "FlipAnswer"),
                ("mapping each id", "ClosedAnswer"),
                ("mapping each key", "ClosedAnswer"),
                ('"differences": [{"description"', "OpenAnswer"),
            ):
                if marker in text:
                    return kind
            return "unknown"
        return name

    # ----------------------------------------------------------------- proposer

    def _answer_DifferencesAnswer(self, req: ChatRequest) -> dict:
        n = int(re.search(r"(?:List|Suggest) (\d+) (?:ways|differences)", req.text).group(1))
        return {
            "differences": [
                {
                    "name": f"property {i}",
                    "description": f"property {i} is {'higher' if i % 2 else 'wider'}",
                    "query_string": f"property {i} is {'higher' if i % 2 else 'wider'}",
                    "num_frames": "gt_1" if i % 2 else "1",
                }
                for i in range(n)
            ]
        }

    def _answer_DimensionDifferencesAnswer(self, req: ChatRequest) -> dict:
        """Describe mode: cycle through the listed dimensions; motion and position are local, the rest global."""
        n = int(re.search(r"List (\d+) candidate differences", req.text).group(1))
        categories = re.findall(r"^- (\w+): ", req.text, flags=re.M)
        items = []
        for i in range(n):
            category = categories[i % len(categories)]
            local = category in ("motion", "position")
            items.append(
                {
                    "name": f"{category} aspect {i}",
                    "category": category,
                    "scope": "local" if local else "global",
                    "description": f"the {category} aspect {i} is more pronounced",
                    "contrast": f"the {category} aspect {i} is less pronounced",
                    "query_string": f"the {category} aspect {i} is more pronounced",
                    "num_frames": "gt_1" if local else "1",
                }
            )
        return {"differences": items}

    def _answer_stages(self, req: ChatRequest) -> dict:
        n_keys = int(re.search(r"at least (\d+)", req.text).group(1))
        return {
            "stages": [
                {
                    "name": f"stage {k}",
                    "description": f"the person is in phase {k}",
                    "retrieval_strings": [f"A photo of a person in pose {k}, view {j}" for j in range(n_keys)],
                }
                for k in range(self.n_stages)
            ]
        }

    def _answer_refine(self, req: ChatRequest) -> dict:
        """Drops each stage's first string (if it has more than one), listed as lines or (wholesale) as JSON."""
        if "filter out" in req.text:
            plan = _after(req.text, "look like:")["stages"]
            return {"stages": [{**s, "retrieval_strings": s["retrieval_strings"][1:] or s["retrieval_strings"]} for s in plan]}
        stages = []
        for line in req.text.splitlines():
            match = re.match(r"\d+\. (.+?): (\".*\")$", line)
            if match:
                strings = re.findall(r'"([^"]*)"', match.group(2))
                stages.append({"name": match.group(1), "description": "", "retrieval_strings": strings[1:] or strings})
        return {"stages": stages}

    def _answer_ProposalAnswer(self, req: ChatRequest) -> dict:
        """``proposer.calls: one``: the separate calls' answers in one (unrefined strings); open-mode links by name."""
        stages = self._answer_stages(req)["stages"]
        if "(id: statement):" in req.text:
            answer: dict = {}
            refs = re.findall(r"^(\S+): ", req.text.split("(id: statement):", 1)[1].split("\n\n", 1)[0], flags=re.M)
        else:
            answer = self._answer_DifferencesAnswer(req)
            refs = [d["name"] for d in answer["differences"]]
        links = [
            {"stage": stage["name"], "differences": [r for i, r in enumerate(refs) if i % len(stages) == k]}
            for k, stage in enumerate(stages)
        ]
        return {**answer, "stages": stages, "links": links}

    def _answer_LinksAnswer(self, req: ChatRequest) -> dict:
        stages = re.findall(r"^\d+\. (.+?): ", req.text, flags=re.M)
        ids = re.findall(r"^(\S+): ", req.text.split("(id: statement):", 1)[1], flags=re.M)
        return {
            "links": [
                {"stage": name, "differences": [d for i, d in enumerate(ids) if i % len(stages) == k]}
                for k, name in enumerate(stages)
            ]
        }

    def _answer_StageNameLinks(self, req: ChatRequest) -> dict:
        """Linking by name: the differences' names dealt round the stages' names, as ``LinksAnswer`` deals ids."""
        stages = [s["name"] for s in _after(req.text, "Its stages:")["stages"]]
        names = [d["name"] for d in _after(req.text, "than of the other:").values()]
        return {name: [d for i, d in enumerate(names) if i % len(stages) == k] for k, name in enumerate(stages)}

    def _answer_PoseMeasurementsAnswer(self, req: ChatRequest) -> dict:
        """Body-pose mapping by keywords (:data:`POSE_RULES`): the first rule whose words all occur in the statement
        gives its measurement, over the stage the statement names (else the whole action); no rule, none."""
        stages = re.findall(r"^(\d+)\. ([^:\n]+)", req.text.split("Its stages, in order:", 1)[1].split("\n\n", 1)[0], re.M)
        block = req.text.split("Differences (id: statement):", 1)[1].split("\n\nAnswer as JSON", 1)[0]
        items = []
        for key, statement in re.findall(r"^(\S+): (.*)$", block.strip(), flags=re.M):
            words = _words(statement)
            rule = next((r for needed, r in POSE_RULES if needed <= words), None)
            if rule is None:
                items.append({"id": key, "measurable": False})
                continue
            stage = next((int(n) for n, name in stages if name.lower() in statement.lower()), None)
            side = "left" if "left" in words else "right" if "right" in words else rule.get("side", "both")
            items.append({"id": key, "measurable": True, **rule, "side": side, "stage": stage})
        return {"differences": items}

    # ----------------------------------------------------------------- visual answers

    def _direction(self, req: ChatRequest, statement: str, n_a: int) -> Optional[str]:
        """``a``/``b`` from the brightness of A's images vs B's; ``None`` when they are the same."""
        images = [np.asarray(p.image.convert("L"), dtype=np.float64).mean() for p in req.images]
        if not images:
            return None
        if n_a < 1 or n_a >= len(images):
            return None
        a, b = np.mean(images[:n_a]), np.mean(images[n_a:])
        if abs(a - b) < 1e-9:
            return None
        brighter_a = a > b
        return "a" if brighter_a ^ bool(_stable_bit(statement)) else "b"

    def _answer_AnswerABC(self, req: ChatRequest) -> dict:
        statement = re.search(r'Statement: "(.*)"', req.text).group(1)
        direction = self._direction(req, statement, len(req.images) // 2)
        return {"answer_detailed": f"compared brightness for: {statement}", "answer": direction or "c"}

    def _answer_AnswerAB(self, req: ChatRequest) -> dict:
        statement = re.search(r'Statement: "(.*)"', req.text).group(1)
        return {"answer_detailed": "forced choice", "answer": self._direction(req, statement, len(req.images) // 2) or "a"}

    def _answer_ClosedAnswer(self, req: ChatRequest) -> dict:
        ids = re.findall(r'^\s*"([^"]+)": ', req.text, flags=re.M)
        n_a = int(m.group(1)) if (m := _N_A.search(req.text)) else len(req.images) // 2
        return {key: self._direction(req, key, n_a) or "a" for key in ids}

    def _answer_OpenAnswer(self, req: ChatRequest) -> dict:
        n = int(re.search(r"at most (\d+) differences", req.text).group(1))
        n_a = int(m.group(1)) if (m := _N_A.search(req.text)) else len(req.images) // 2
        return {
            "differences": [
                {"description": f"property {i} is higher", "prediction": self._direction(req, str(i), n_a) or "a"}
                for i in range(n)
            ]
        }

    def _answer_DescribeText(self, req: ChatRequest) -> str:
        """Describe-mode baseline: plain text, one line per listed dimension; style says which video is brighter."""
        dimensions = re.findall(r"^\d+\. ([^:]+): ", req.text, flags=re.M)
        n_a = int(m.group(1)) if (m := re.search(r"The first (\d+) images", req.text)) else len(req.images) // 2
        means = [np.asarray(p.image.convert("L"), dtype=np.float64).mean() for p in req.images]
        a, b = (np.mean(means[:n_a]), np.mean(means[n_a:])) if 0 < n_a < len(means) else (0.0, 0.0)
        lines = []
        for name in dimensions:
            if name.lower() == "style" and abs(a - b) > 1e-9:
                bright, dark = ("A", "B") if a > b else ("B", "A")
                lines.append(f"{name}: In video {bright} the scene is brighter; in video {dark} it is darker.")
            else:
                lines.append(f"{name}: Both videos are similar.")
        return "\n".join(lines)

    # ----------------------------------------------------------------- judge

    def _answer_MatchAnswer(self, req: ChatRequest) -> dict:
        gt = _after(req.text, "G (ground truth):")
        pred = _after(req.text, "P (predicted):")
        used: set[str] = set()
        matches: dict[str, Optional[str]] = {}
        for gk, gtext in gt.items():
            best, best_score = None, 0.5
            for pk, ptext in pred.items():
                a, b = _words(gtext), _words(ptext)
                score = len(a & b) / max(len(a | b), 1)
                if pk not in used and score >= best_score:
                    best, best_score = pk, score
            if best is not None:
                used.add(best)
            matches[gk] = best
        return {"matches": matches}

    def _answer_FlipAnswer(self, req: ChatRequest) -> dict:
        pairs = _after(req.text, "Pairs:")
        results = []
        for pair in pairs:
            first, second = _words(pair["first"]), _words(pair["second"])
            flipped = any((x in first and y in second) or (y in first and x in second) for x, y in OPPOSITES)
            results.append(int(flipped))
        return {"results": results}

    def _answer_ChecklistJudgeAnswer(self, req: ChatRequest) -> dict:
        """Checklist judge (description benchmarks): "yes" iff a sentence of the description that is not a similarity statement names
        at least half of the question's key words; so a difference counts only where one is stated."""
        description = re.search(r"<description>\n(.*?)\n</description>", req.text, flags=re.S).group(1)
        question = re.search(r"<question>\n(.*?)\n</question>", req.text, flags=re.S).group(1)
        keys = {w for w in _words(question) if len(w) > 2} - _JUDGE_STOPWORDS
        need = max(1, (len(keys) + 1) // 2)
        for sentence in re.split(r"[.;\n]+", description):
            if _SIMILARITY.search(sentence) or len(keys & _words(sentence)) < need:
                continue
            return {"answer": "yes", "explanation": f"the description states: {sentence.strip()!r}"}
        return {"answer": "no", "explanation": "the description states no difference about this"}

    # ----------------------------------------------------------------- single-video captions (IF-VidCap, VidCapBench)

    def _scene(self, req: ChatRequest) -> tuple[str, str]:
        """(background colour, direction of the square) seen in the request's frames (synthetic clips)."""
        from viddiff.data.synth_clips import scene_of

        if not req.images:
            return "unknown", "somewhere"
        colour, direction = scene_of([np.asarray(p.image.convert("RGB")) for p in req.images])
        return colour, f"from {direction}" if direction else "nowhere"

    def _answer_CaptionText(self, req: ChatRequest) -> str:
        """A caption in the form the instruction names (list, JSON, else prose), stating what the frames show.
        It follows a form but ignores case and length instructions, so some constraints fail by design."""
        colour, direction = self._scene(req)
        instruction = req.texts[-1].lower() if req.texts else ""
        if "unordered list" in instruction:
            return f"- the background is {colour}\n- the square moves {direction}"
        if "json" in instruction:
            return json.dumps({"background": colour, "motion": f"a white square moves {direction}"})
        return f"The background is {colour}. A white square moves {direction} across the frame."

    def _answer_SpanAnswer(self, req: ChatRequest) -> dict:
        """Extraction: the whole response (always verbatim); for ``count``, one ``(item)`` per non-empty line."""
        payload = _leading_json(next(t for t in req.texts if t.lstrip().startswith("{") and '"checkitem"' in t))
        response = payload["response"]
        if payload["checkitem"].get("constraint_id") == "count":
            lines = [line.strip().lstrip("-*• ").strip() for line in response.splitlines() if line.strip()]
            return {"content": [",".join(f"({line})" for line in lines)]}
        return {"content": [response]}

    def _answer_OpenJudgeAnswer(self, req: ChatRequest) -> dict:
        """Open question from the response alone: an option whose words appear in it in order (else most shared
        words); yes/no: "yes" when the response names a key word of the question."""
        payload = _leading_json(next(t for t in req.texts if t.lstrip().startswith("{") and '"options"' in t))
        response, options = payload["response"].lower(), payload["options"]
        if [o.lower() for o in options] == ["yes", "no"]:
            keys = {w for w in _words(payload["question"]) if len(w) > 3} - _JUDGE_STOPWORDS - {"response", "state", "describe", "does"}
            hit = keys & _words(response)
            return {"answer": "yes" if hit else "no", "result_explanation": f"names {sorted(hit)}", "result_confidence": 4}
        texts = [re.sub(r"^[A-D]\.\s*", "", o).lower() for o in options]
        exact = [k for k, t in enumerate(texts) if re.search(rf"\b{re.escape(t)}\b", response)]
        best = exact[0] if exact else max(range(len(texts)), key=lambda k: len(_words(texts[k]) & _words(response)))
        return {"answer": options[best], "result_explanation": f"the response fits {texts[best]!r}", "result_confidence": 3}

    def _answer_CaptionAnswerText(self, req: ChatRequest) -> str:
        """VidCapBench: the description's sentence sharing most key words with the question, else "Not mentioned"."""
        text = req.text
        description = text.split("\nDescription:\n", 1)[1].split("\nQuestion:\n", 1)[0]
        question = text.split("\nQuestion:\n", 1)[1]
        keys = {w for w in _words(question) if len(w) > 2} - _JUDGE_STOPWORDS
        sentences = [s.strip() for s in re.split(r"(?<=[.!?])\s+", description) if s.strip()]
        scored = [(len(keys & _words(s)), s) for s in sentences]
        best = max(scored, default=(0, ""))
        return best[1] if best[0] > 0 else "Not mentioned."

    def _grade(self, req: ChatRequest) -> tuple[int, str]:
        answer = re.search(r"Correct Answer: (.*)", req.text).group(1)
        prediction = re.search(r"Predicted Answer: (.*)", req.text).group(1)
        if "not mentioned" in prediction.lower():
            return 0, "the prediction does not mention it"
        keys = {w for w in _words(answer) if len(w) > 2} - _JUDGE_STOPWORDS
        found = keys & _words(prediction)
        if found == keys:
            return 2, "all key words are there"
        if found:
            return 1, f"{len(found)} of {len(keys)} key words are there"
        return -1, "it says something else"

    def _answer_CaptionGrade(self, req: ChatRequest) -> dict:
        score, analysis = self._grade(req)
        return {"score": score, "analysis": analysis}

    def _answer_GradeText(self, req: ChatRequest) -> str:
        """The grade as free text, as the released reader gets it (digits in the analysis can flip it)."""
        score, analysis = self._grade(req)
        return str({"score": score, "analysis": analysis})


    # ----------------------------------------------------------------- VidPair-Halluc questions

    def _answer_VidPairQuestion(self, req: ChatRequest) -> str:
        """A question about a video (``qa`` mode): colours are read from every image sent (the discs of the
        synthetic VidPair-Halluc), so a pair-aware request pools both videos; other questions get a stable guess.
        One yes/no question in ten gets "I don't know." (the release reads it as no) and one "Unclear from these
        frames." (unreadable); multiple-choice answers of several letters are sometimes written "A, C"."""
        text = req.text
        question = text.split(vidpair_prompts.QUESTION_MARK, 1)[1]
        kind = next(k for k, instruction in vidpair_prompts.INSTRUCTIONS.items() if instruction in text)
        seen = colours_seen([np.asarray(p.image.convert("RGB")) for p in req.images]) if req.images else []
        first_line = question.splitlines()[0].lower()
        named = sorted((c for c in COLOURS if re.search(rf"\b{c}\b", first_line)), key=first_line.index)
        salt = _stable_int(question + "|" + ",".join(seen))
        if kind == "binary":
            if salt % 10 == 0:
                return "I don't know."
            if salt % 10 == 1:
                return "Unclear from these frames."
            yes = all(c in seen for c in named) if named else bool(_stable_bit(question))
            return "Yes." if yes else "No."
        if kind == "multiple_choice":
            options = re.findall(r"^([A-Z])\. (.+)$", question, flags=re.M)
            letters = [letter for letter, option in options if any(re.search(rf"\b{c}\b", option) for c in seen)]
            if not letters:
                return "AB"[salt % 2] if options else "A"
            return ", ".join(letters) if len(letters) > 1 and salt % 3 == 0 else "".join(letters)
        if not seen:
            return "A grey room with a picture on the wall."
        return "A " + " and ".join(seen) + " disc bounces in a grey room."

    def _answer_DescriptionScoreAnswer(self, req: ChatRequest) -> dict:
        """Our open-ended judge: the share of the reference's words (3+ letters) that the answer uses, out of 10."""
        reference = re.search(r"<reference>\n(.*?)\n</reference>", req.text, flags=re.S).group(1)
        answer = re.search(r"<answer>\n(.*?)\n</answer>", req.text, flags=re.S).group(1)
        wanted = {w for w in _words(reference) if len(w) > 2}
        score = round(10 * len(wanted & _words(answer)) / max(1, len(wanted)))
        return {"score": score, "explanation": f"{len(wanted & _words(answer))} of {len(wanted)} reference words"}


def _stable_int(text: str) -> int:
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:4], "big")


class AlwaysA(ScriptedModel):
    """``ScriptedModel`` with a perfectly position-biased eye: every visual question (differencer, baseline)
    is answered ``a`` (more true of the first video), whatever the images show, and open-mode statements
    are all claimed for ``a``. Text-only requests (proposer, judge) are answered as ``ScriptedModel`` does.
    ``viddiff audit`` must give it a swap-flip rate of 0 and an a-share of 1."""

    def _direction(self, req: ChatRequest, statement: str, n_a: int) -> Optional[str]:
        return "a"


class FailingWhen:
    """Answers like ``inner`` except for requests that ``matches``: those get ``fail(request)``, which may
    raise :class:`~viddiff.testing.fake_openai.HTTPFault` (an HTTP error) or return an answer.

    Lets a test fail one sample (its action text, its model) through the real server while the others
    are served normally; set :attr:`active` to ``False`` to "fix the endpoint" before a resume.
    """

    def __init__(self, inner: Any, matches: Any, fail: Any):
        self.inner = inner
        self.matches = matches
        self.fail = fail
        self.active = True

    def __call__(self, req: ChatRequest) -> Any:
        if self.active and self.matches(req):
            return self.fail(req)
        return self.inner(req)


class Gate:
    """Answers like ``inner``, except that requests ``matches`` picks wait until :meth:`open` (or ``timeout_s``).

    Holds a stage's answers back so a test can look at what the code did meanwhile (e.g. whether frames
    were embedded while the proposal was awaited); :attr:`arrived` counts the requests that reached the gate,
    :attr:`timed_out` those answered only because nobody opened it in time.
    """

    def __init__(self, inner: Any, matches: Any, timeout_s: float = 60.0):
        self.inner = inner
        self.matches = matches
        self.timeout_s = timeout_s
        self.arrived = 0
        self.timed_out = 0
        self._open = threading.Event()
        self._lock = threading.Lock()

    def open(self) -> None:
        self._open.set()

    def __call__(self, req: ChatRequest) -> Any:
        if self.matches(req):
            with self._lock:
                self.arrived += 1
            if not self._open.wait(self.timeout_s):
                with self._lock:
                    self.timed_out += 1
        return self.inner(req)


def schema_name(req: ChatRequest) -> Optional[str]:
    """The name of a request's ``json_schema`` response format (``None`` for other requests)."""
    rf = req.response_format or {}
    return (rf.get("json_schema") or {}).get("name") if rf.get("type") == "json_schema" else None
