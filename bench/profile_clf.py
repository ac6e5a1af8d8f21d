"""Study and export: the learned profile gate (:mod:`gateway.memorization.profile_classifier`).

``python -m bench.profile_clf [--target 0.02] [--c 20] [--splits older|read|A,B] [--json-out F]``
prints the leave-one-split-out table; ``--shipped WEIGHTS`` instead scores those weights as
they are on each split (marked ``*`` where in sample); ``--export F`` writes the product's
weights (``gateway/memorization/data/profile_classifier.json``); ``--langs en,zh`` which
languages get a model (``--keep WEIGHTS``: the others keep theirs from that file).

Data: ``bench/assistant/data`` read splits only, loaded by
:func:`bench.assistant.dataset.read_users`: a file is opened only when its name carries one
of the chosen splits' tags, and every loaded user's split is checked. ``--splits`` (:func:`splits_of`):
``older`` (default, :data:`bench.formation_clf.SPLITS`: dev, heldout, heldout2..5, updates,
heldout11, the splits of the shipped weights), ``read`` (every read split, adding heldout13,
heldout14 and asks) or a comma list of read splits; a blind split is refused.

Rows: every profile memory verbatim ``disclosure`` formation forms from a user turn
(:func:`gateway.memorization.disclosure.analyse`, ``Formed.durable``; confirmations and
answers kept with a question are not gated and not counted). Weak labels: *positive*
when the memory holds (case-insensitively) a key string of a gold fact of its turn;
*negative* when its turn is a ``request`` or ``small_talk``, or its turn has gold facts and
it holds none of their keys (a side piece); otherwise unlabelled (not used).

Features: the memory text's vector under the product's default embedder (the ``script``
provider: MiniLM int8 for Latin texts, multilingual-e5-small int8 for CJK ones; each
language's model reads its part's columns) and the structural features of
:func:`gateway.memorization.profile_classifier.structural`. Model: L2 logistic
regression (scikit-learn), balanced classes, one per language.

Leave-one-split-out: for each read split, a model fitted on the others; its threshold is
the one demoting at most ``--target`` of the positives of the training splits, scored out
of fold (each by a model fitted without it); on the held-out split: positives demoted
(facts filed as events) and negatives demoted (junk leaving the profile).
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import math
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from bench.assistant.dataset import User, read_users
from bench.formation_clf import SPLITS, splits_of
from bench.formation_clf import fit as formation_fit
from gateway.memorization.clauses import clauses
from gateway.memorization.disclosure import Formed, analyse
from gateway.memorization.profile_classifier import language_of, structural
from gateway.memory.records import MemoryType


@dataclass
class Row:
    """One profile memory the rules form."""

    user: str
    lang: str
    split: str
    turn: str
    kind: str  # the turn's gold kind
    text: str
    slot: bool
    attribute: bool
    preference: bool
    label: int | None
    profile: bool = True  # the rules file it as a profile memory (the gate's candidates)


def build(users: list[User], extra: bool = True) -> list[Row]:
    """Every memory the rules form from a user turn (``profile``: filed as profile), and,
    with ``extra``, every clause of the turn inside none of them (training rows only)."""
    rows: list[Row] = []
    for user in users:
        for session in user.sessions:
            for turn in session.turns:
                keys = [k.casefold() for f in turn.facts for k in f.key]
                text = turn.user.strip()
                found = analyse(text)
                formed_texts: list[tuple[str, Formed | None]] = [(m.text, m) for m in found.memories]
                if extra:
                    joined = "\n".join(m.text for m in found.memories)
                    for c in clauses(text):
                        if c.text not in joined and len(c.text) > 3:
                            sub = analyse(c.text).memories
                            formed_texts.append((c.text, sub[0] if sub else None))
                for n, (said, formed) in enumerate(formed_texts):
                    low = said.casefold()
                    label: int | None
                    if any(k in low for k in keys):
                        label = 1
                    elif turn.kind in ("request", "small_talk") or keys:
                        label = 0
                    else:
                        label = None
                    profile = n < len(found.memories) and formed is not None and formed.durable
                    rows.append(Row(user.user, language_of(said), user.split, turn.id, turn.kind, said,
                                    formed is not None and formed.slot is not None,
                                    formed is not None and formed.attribute is not None,
                                    formed is not None and formed.type is MemoryType.PREFERENCE, label, profile))
    return rows


async def embed(texts: list[str], cache_dir: Path) -> tuple[np.ndarray, str, int]:
    """Vectors of ``texts`` under the ``script`` provider (cached by content), its
    identity and the latin part's width."""
    from gateway.memory.config import EmbeddingConfig
    from gateway.memory.embeddings import load_provider

    embedder = await load_provider(EmbeddingConfig(provider="script", threads=1))
    identity, dims = embedder.model, embedder.dimensions
    digest = hashlib.sha256(("\x00".join(texts) + identity).encode()).hexdigest()[:16]
    path = cache_dir / f"pclf-{digest}.npy"
    try:
        if path.exists():
            return np.load(path), identity, dims // 2
        out = []
        for i in range(0, len(texts), 64):
            out.append(np.asarray(await embedder.embed_many(texts[i:i + 64]), dtype=np.float32))
        vectors = np.concatenate(out) if out else np.zeros((0, dims), np.float32)
    finally:
        await embedder.aclose()
    cache_dir.mkdir(parents=True, exist_ok=True)  # noqa: ASYNC240
    np.save(path, vectors)
    return vectors, identity, dims // 2


def fit(x: np.ndarray, y: np.ndarray, c: float) -> Any:
    """:func:`bench.formation_clf.fit` with room for C = 20 to converge."""
    return formation_fit(x, y, c, max_iter=3000)


def threshold_for(pos_scores: np.ndarray, target: float) -> float:
    """The highest threshold demoting (score below it) at most ``target`` of ``pos_scores``."""
    if len(pos_scores) == 0:
        return 0.0
    ranked = np.sort(pos_scores)
    allowed = math.floor(target * len(ranked))
    return float(ranked[allowed])  # scores < ranked[allowed]: at most ``allowed`` positives


def oof_threshold(x: np.ndarray, y: np.ndarray, split_of: np.ndarray, prof: np.ndarray, splits: list[str],
                  c: float, target: float) -> float:
    """:func:`threshold_for` on out-of-fold scores of the positive profile rows over ``splits``."""
    pos: list[float] = []
    for s in splits:
        tr, te = split_of != s, (split_of == s) & (y == 1) & prof
        if te.any() and len(set(y[tr])) == 2:
            pos.extend(fit(x[tr], y[tr], c).predict_proba(x[te])[:, 1])
    return threshold_for(np.asarray(pos), target)


def matrix(rows: list[Row], vectors: np.ndarray, lang: str, latin: int) -> tuple[np.ndarray, np.ndarray]:
    """The labelled rows of ``lang``: features (its part's columns, then structural) and indices."""
    idx = np.array([i for i, r in enumerate(rows) if r.lang == lang and r.label is not None])
    cols = vectors[idx, :latin] if lang == "en" else vectors[idx, latin:]
    struct = np.stack([structural(rows[i].text, rows[i].slot, rows[i].attribute, rows[i].preference) for i in idx])
    return np.hstack([cols, struct]), idx


def loso(rows: list[Row], vectors: np.ndarray, lang: str, latin: int, c: float, target: float,
         splits: tuple[str, ...] = SPLITS) -> dict[str, Any]:
    x, idx = matrix(rows, vectors, lang, latin)
    y = np.array([rows[i].label for i in idx])
    split_of = np.array([rows[i].split for i in idx])
    kind_of = np.array([rows[i].kind for i in idx])
    prof = np.array([rows[i].profile for i in idx])
    report: dict[str, Any] = {}
    for held in splits:
        test = (split_of == held) & prof
        if not test.any():
            continue
        train = split_of != held
        inner = [s for s in splits if s != held and (split_of == s).any()]
        t = oof_threshold(x[train], y[train], split_of[train], prof[train], inner, c, target)
        scores = fit(x[train], y[train], c).predict_proba(x[test])[:, 1]
        report[held] = outcome(scores < t, t, y[test], kind_of[test], idx[test], rows)
    return report


def outcome(down: np.ndarray, t: float, yt: np.ndarray, kt: np.ndarray, idx: np.ndarray, rows: list[Row]) -> dict[str, Any]:
    """One split's row of the table: ``down`` the demoted profile memories among those of
    labels ``yt``, kinds ``kt``, row indices ``idx``."""
    return {
            "threshold": round(t, 4), "pos": int((yt == 1).sum()), "neg": int((yt == 0).sum()),
            "pos_demoted": int((down & (yt == 1)).sum()), "neg_demoted": int((down & (yt == 0)).sum()),
            "neg_request_st": int(((yt == 0) & np.isin(kt, ["request", "small_talk"])).sum()),
            "neg_request_st_demoted": int((down & (yt == 0) & np.isin(kt, ["request", "small_talk"])).sum()),
            "demoted_facts": [rows[i].text for i, d, lab in zip(idx, down, yt, strict=True) if d and lab == 1],
        }


def shipped(rows: list[Row], vectors: np.ndarray, lang: str, latin: int, splits: tuple[str, ...],
            weights: Path) -> dict[str, Any]:
    """The table of the weights in ``weights`` as they are (no refit), per split: in sample on
    the splits they were trained on (the file's ``splits``), out of sample on the others."""
    doc = json.loads(weights.read_text(encoding="utf-8"))
    model = next(m[lang] for m in doc["models"].values() if lang in m)
    w, b, t = np.asarray(model["w"], np.float64), float(model["b"]), float(model["threshold"])
    x, idx = matrix(rows, vectors, lang, latin)
    y = np.array([rows[i].label for i in idx])
    split_of = np.array([rows[i].split for i in idx])
    kind_of = np.array([rows[i].kind for i in idx])
    prof = np.array([rows[i].profile for i in idx])
    scores = 1.0 / (1.0 + np.exp(-(x @ w + b)))
    report: dict[str, Any] = {}
    for held in splits:
        test = (split_of == held) & prof
        if test.any():
            report[held] = outcome(scores[test] < t, t, y[test], kind_of[test], idx[test], rows)
            report[held]["in_sample"] = held in doc.get("splits", ())
    return report


def export_model(rows: list[Row], vectors: np.ndarray, lang: str, latin: int, c: float, target: float,
                 splits: tuple[str, ...] = SPLITS) -> dict[str, Any]:
    x, idx = matrix(rows, vectors, lang, latin)
    y = np.array([rows[i].label for i in idx])
    split_of = np.array([rows[i].split for i in idx])
    prof = np.array([rows[i].profile for i in idx])
    t = oof_threshold(x, y, split_of, prof, [s for s in splits if (split_of == s).any()], c, target)
    model = fit(x, y, c)
    return {"w": [float(f"{v:.6g}") for v in model.coef_[0]], "b": float(f"{model.intercept_[0]:.6g}"),
            "threshold": round(t, 6), "trained_on": {"memories": len(idx), "positives": int(y.sum()),
                                                     "fact_demote_target": target}}


async def run(args: argparse.Namespace) -> dict[str, Any]:
    from gateway.memory.embeddings.script_routed import parts_of

    splits = splits_of(args.splits)
    rows = build(read_users(splits))
    vectors, identity, latin = await embed([r.text for r in rows], Path(args.cache))
    langs = args.langs.split(",")
    out: dict[str, Any] = {"labels": {}}
    for lang in ("en", "zh"):
        every = [r for r in rows if r.lang == lang and r.label is not None]
        sel = [r for r in rows if r.lang == lang and r.profile]
        out["labels"][lang] = {"training_rows": len(every), "training_pos": sum(r.label == 1 for r in every),
                               "profile_memories": len(sel), "pos": sum(r.label == 1 for r in sel),
                               "neg": sum(r.label == 0 for r in sel),
                               "neg_request_small_talk": sum(r.label == 0 and r.kind in ("request", "small_talk")
                                                             for r in sel),
                               "unlabelled": sum(r.label is None for r in sel)}
    print(json.dumps(out["labels"]))
    if args.export:
        parts = parts_of(identity)
        assert parts is not None
        models: dict[str, dict[str, Any]] = {}
        if args.keep:  # the other languages' models as that file has them, with the splits they were fitted on
            kept = json.loads(Path(args.keep).read_text(encoding="utf-8"))  # noqa: ASYNC240
            for part, by_lang in kept["models"].items():
                for lang, model in by_lang.items():
                    if lang not in langs:
                        model["trained_on"].setdefault("splits", kept.get("splits"))
                        models.setdefault(part, {})[lang] = model
        for lang in langs:
            model = export_model(rows, vectors, lang, latin, args.c, args.target, splits)
            model["trained_on"]["splits"] = list(splits)
            models.setdefault(parts[0] if lang == "en" else parts[1], {})[lang] = model
        doc = ("Profile gate weights (gateway/memorization/profile_classifier.py). Retrain: python -m bench.profile_clf "
               "--export gateway/memorization/data/profile_classifier.json (bench/profile_clf.py docstring).")
        Path(args.export).write_text(json.dumps({"doc": doc, "splits": list(splits), "C": args.c, "models": models},  # noqa: ASYNC240
                                                separators=(",", ":")) + "\n", encoding="utf-8")
        print(f"wrote {args.export}: " + ", ".join(f"{lang} threshold {m['threshold']}"
                                                  for v in models.values() for lang, m in v.items()))
        return out
    for lang in langs:
        if args.shipped:
            report = shipped(rows, vectors, lang, latin, splits, Path(args.shipped))
            print(f"== {lang} weights {args.shipped} as they are (* in sample)")
        else:
            report = loso(rows, vectors, lang, latin, args.c, args.target, splits)
            print(f"== {lang} C={args.c} target {args.target:.0%} facts demoted (train-chosen threshold)")
        out[lang] = report
        print("split      thresh  facts demoted  junk demoted  (request/small talk)")
        for split, e in report.items():
            print(f"{split + ('*' if e.get('in_sample') else ''):10s} {e['threshold']:.3f}  {e['pos_demoted']:3d}/{e['pos']:<4d}     {e['neg_demoted']:3d}/{e['neg']:<4d}"
                  f"    {e['neg_request_st_demoted']:3d}/{e['neg_request_st']}")
        tot = {k: sum(e[k] for e in report.values()) for k in ("pos", "pos_demoted", "neg", "neg_demoted")}
        print(f"all        facts {tot['pos_demoted']}/{tot['pos']}  junk {tot['neg_demoted']}/{tot['neg']}")
        if args.show:
            for split, e in report.items():
                for text in e["demoted_facts"]:
                    print(f"   {split} demoted fact: {text}")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.profile_clf", description=__doc__.split("\n\n")[0])
    parser.add_argument("--langs", default="en,zh")
    parser.add_argument("--keep", metavar="WEIGHTS", help="--export: the languages not in --langs keep their models from this weights file")
    parser.add_argument("--c", type=float, default=20.0, help="inverse L2 strength of the logistic regression (the shipped weights: 20)")
    parser.add_argument("--target", type=float, default=0.02, help="share of positives (facts) a threshold may demote")
    parser.add_argument("--show", action="store_true", help="print the facts the held-out folds demote")
    parser.add_argument("--cache", default="/tmp/memgate-profile-clf", help="embedding cache directory")
    parser.add_argument("--splits", default="older",
                        help="older (the 8 splits of bench.formation_clf), read (every read split) or a comma list")
    parser.add_argument("--shipped", metavar="WEIGHTS",
                        help="score these weights as they are per split instead of leave-one-split-out refits")
    parser.add_argument("--json-out")
    parser.add_argument("--export", help="write the product's weights to this JSON file")
    args = parser.parse_args(argv)
    report = asyncio.run(run(args))
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
