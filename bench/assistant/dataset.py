"""The assistant-chat dev set (``bench/assistant/data/*.json``, one user per file).

A user record (JSON object):

- ``user``: tenant-safe id (``en-dana``); ``lang``: ``en`` | ``zh``; ``split``: ``dev`` |
  ``heldout`` | ``heldout2`` (a second held-out set by another author) | ``heldout3`` (a third, written blind) |
  ``heldout4`` (a fourth, written blind) | ``heldout5`` (a fifth, written blind) | ``heldout6``
  (a sixth, written blind) | ``heldout7`` (a seventh, written blind) | ``heldout8`` (an eighth, written blind) |
  ``heldout9`` (a ninth, written blind) | ``heldout10`` (a tenth, written blind) | ``updates`` (an
  update-focused read split, written blind) | ``heldout11`` (an eleventh, written blind) |
  ``heldout12`` (a twelfth, written blind) | ``asks`` (facts stated inside questions, with look-alike
  controls: a read split, written blind) | ``asks2`` (a second such split, written blind) |
  ``heldout13`` (a thirteenth, mostly Chinese, written blind, measured blind once, then read) | ``heldout14`` (a fourteenth, mostly
  Chinese, written blind and measured blind first, now a read split) | ``heldout15`` (a fifteenth, mostly Chinese, written blind) |
  ``heldout16`` (a sixteenth, mostly Chinese, written blind) | ``heldout17`` (a seventeenth, mostly Chinese,
  written blind) | ``train1`` .. ``train3`` (mostly Chinese, written blind by three authors as training
  data for the learned gates: read splits) | ``train4`` (changes and repeats said inside requests and
  in other words, written blind as training data: a read split) | ``heldout18`` (its blind sibling,
  written to the same brief by another author);
  ``persona``: a free note for the reader.
- ``sessions``: conversations in order, each ``{"id", "date", "turns"}`` (``date``: ISO day,
  informational: the replay runs on the wall clock). Each session is a new conversation.
- a turn: ``id`` (unique in the user), ``kind`` (:data:`KINDS`), ``user`` (what the user
  types), ``assistant`` (the reply the upstream double answers with), ``facts`` (fact-bearing
  kinds only, at least one), ``question`` (``answer`` only: the assistant's question the
  turn answers, a substring of the previous turn's ``assistant``), ``in_request`` (optional,
  ``update``/``repeat``: the fact sits inside a request). Kinds: ``fact`` (self-disclosure),
  ``fact_in_request`` (a fact stated inside an ask), ``request`` (a pure ask or question),
  ``small_talk`` (greetings, thanks, ok, lol), ``update`` (changes an earlier fact: at least
  one of its facts ``supersedes`` one), ``repeat`` (an earlier fact said again: at least one
  of its facts ``repeats`` one), ``answer`` (a short reply that only makes sense with the
  assistant's question).
- a fact: ``id`` (unique in the user), ``fact`` (short gold text), ``key`` (list of strings
  that must ALL appear, case-insensitively, in what reaches the upstream for the fact to
  count as recalled; taken from the user's own words, for ``answer`` turns from the user's
  words and the assistant's question), ``topic`` (:data:`TOPICS`), ``supersedes`` (``update``
  only: the earlier fact id it replaces), ``repeats`` (``repeat`` only: the earlier fact id
  said again).
- ``probes``: questions asked in a new conversation after every session, each ``{"id",
  "ask", "needs": [fact ids], "stale": [strings]}``: ``needs`` are current facts (not
  superseded, nor repeats of superseded ones); ``stale`` (optional) are strings of
  superseded facts that must not reach the upstream.

:func:`load_users` validates every rule below and raises :class:`DatasetError` naming the
file and the field (:func:`validate`).

Which files a study may open (:data:`READ_TAGS`, :func:`read_paths`, :func:`read_users`): the read
splits' only, picked by name; the assistant bench itself runs any split it is asked for.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

DATA_DIR = Path(__file__).resolve().parent / "data"

KINDS = ("fact", "fact_in_request", "request", "small_talk", "update", "repeat", "answer")
FACT_KINDS = frozenset({"fact", "fact_in_request", "update", "repeat", "answer"})
#: Kinds whose memories are junk when injected: the user's own asks and small talk.
JUNK_KINDS = frozenset({"request", "small_talk"})
TOPICS = ("family", "partner", "kids", "pets", "health", "diet", "home", "work", "commute", "hobbies",
          "travel", "plans", "possessions", "dates", "preferences", "education", "finance")
LANGS = ("en", "zh")
SPLITS = ("dev", "heldout", "heldout2", "heldout3", "heldout4", "heldout5", "heldout6", "heldout7",
          "heldout8", "heldout9", "heldout10", "updates", "heldout11", "heldout12", "asks", "asks2",
          "heldout13", "heldout14", "heldout15", "heldout16", "heldout17", "train1", "train2", "train3",
          "train4", "heldout18")
_TENANT = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
#: The splits a study (``bench/*.py`` other than the assistant bench itself) may read, and
#: the tag each one's file names carry: ``en-01-dana.json`` (dev and heldout share untagged
#: names), ``zh-h3-02-...``, ``en-u-04-...``, ``en-h11-05-...``, ``zh-h13-01-...``,
#: ``zh-h14-01-...`` (heldout14: measured blind first, then read), ``en-q-03-...``, ``zh-t1-01-...``. Every other split
#: is blind (``h6`` .. ``h10``, ``h12``, ``h15``, ``h16``, ``h17``, the asks2
#: ``q2`` and any later tag): its files are never opened by a study (:func:`read_paths`).
READ_TAGS: dict[str, str] = {"dev": "", "heldout": "", "heldout2": "h2", "heldout3": "h3", "heldout4": "h4",
                             "heldout5": "h5", "updates": "u", "heldout11": "h11", "heldout13": "h13", "heldout14": "h14",
                             "asks": "q", "train1": "t1", "train2": "t2", "train3": "t3",
                             "train4": "t4"}
READ_SPLITS = tuple(READ_TAGS)


def read_files(splits: Iterable[str] = READ_SPLITS) -> re.Pattern[str]:
    """The file names of ``splits`` (read splits only, :data:`READ_TAGS`): ``<lang>-<tag>-NN-<name>.json``,
    or ``<lang>-NN-<name>.json`` for dev and heldout.

    Raises:
        ValueError: a split is not a read split.
    """
    tags = []
    for split in splits:
        if split not in READ_TAGS:
            raise ValueError(f"{split!r} is not a read split (one of {READ_SPLITS})")
        tags.append(f"{READ_TAGS[split]}-" if READ_TAGS[split] else "")
    alternatives = "|".join(re.escape(t) + r"\d+" for t in sorted(set(tags)))
    return re.compile(rf"^[a-z]{{2}}-(?:{alternatives})-[^/]*\.json$")


#: The file names of every read split.
READ_FILES = read_files()


def read_paths(splits: Iterable[str] = READ_SPLITS, lang: str = "all") -> list[Path]:
    """The files of :data:`DATA_DIR` named as one of ``splits``' (:func:`read_files`; dev and
    heldout share their files) in ``lang`` (``en`` | ``zh`` | ``all``), sorted: picked by
    name, none opened."""
    pattern = read_files(splits)
    return [p for p in sorted(DATA_DIR.glob("*.json")) if pattern.match(p.name) and lang in ("all", p.name[:2])]


def read_users(splits: Iterable[str] = READ_SPLITS, lang: str = "all") -> list[User]:
    """The users of ``splits`` in ``lang``, loaded from :func:`read_paths` only.

    Raises:
        DatasetError: a loaded file's ``split`` is not a read split (a blind file under a
            read split's name), or as :func:`load_users`.
    """
    wanted = set(splits)
    users = load_users(read_paths(wanted, lang))
    bad = [u.user for u in users if u.split not in READ_TAGS]
    if bad:
        raise DatasetError(f"refusing: users of a blind split were loaded: {bad}")
    return [u for u in users if u.split in wanted]


class DatasetError(ValueError):
    """A user file breaks a rule of the format (module docstring)."""


@dataclass(frozen=True)
class Fact:
    id: str
    fact: str
    key: tuple[str, ...]
    topic: str
    supersedes: str | None = None
    repeats: str | None = None


@dataclass(frozen=True)
class Turn:
    id: str
    session: str
    kind: str
    user: str
    assistant: str
    facts: tuple[Fact, ...] = ()
    question: str | None = None
    in_request: bool = False

    @property
    def source_text(self) -> str:
        """What a memory of this turn may hold: the user's words, with the assistant's
        question first for an ``answer``."""
        return f"{self.question}\n{self.user}" if self.question else self.user


@dataclass(frozen=True)
class Probe:
    id: str
    ask: str
    needs: tuple[str, ...]
    stale: tuple[str, ...] = ()


@dataclass(frozen=True)
class Session:
    id: str
    date: str
    turns: tuple[Turn, ...]


@dataclass(frozen=True)
class User:
    user: str
    lang: str
    split: str
    sessions: tuple[Session, ...]
    probes: tuple[Probe, ...]
    persona: str = ""
    path: str = ""
    facts: dict[str, Fact] = field(default_factory=dict, compare=False)

    @property
    def turns(self) -> list[Turn]:
        return [t for s in self.sessions for t in s.turns]

    def root(self, fact_id: str) -> str:
        """The fact a repeat repeats (followed to the first statement), else itself."""
        seen = set()
        while (f := self.facts.get(fact_id)) is not None and f.repeats and fact_id not in seen:
            seen.add(fact_id)
            fact_id = f.repeats
        return fact_id

    def superseded(self) -> set[str]:
        """Root ids of the facts some update replaced."""
        return {self.root(f.supersedes) for f in self.facts.values() if f.supersedes}

    def statements(self, fact_id: str) -> list[Fact]:
        """The fact and every repeat of it (each with its own keys)."""
        root = self.root(fact_id)
        return [f for f in self.facts.values() if self.root(f.id) == root]


def _req(obj: dict[str, Any], name: str, where: str, kind: type | tuple[type, ...] = str) -> Any:
    value = obj.get(name)
    if not isinstance(value, kind) or (isinstance(value, (str, list)) and not value):
        raise DatasetError(f"{where}: field {name!r} is missing, empty or not {getattr(kind, '__name__', kind)}")
    return value


def _keys(value: Any, where: str, name: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(k, str) and k.strip() for k in value):
        raise DatasetError(f"{where}: field {name!r} must be a list of non-empty strings")
    return tuple(value)


def parse_user(data: Any, path: str = "<memory>") -> User:
    """One user record, validated (:func:`validate`). Raises :class:`DatasetError`."""
    if not isinstance(data, dict):
        raise DatasetError(f"{path}: a user record must be a JSON object")
    user_id = _req(data, "user", path)
    if not _TENANT.match(user_id):
        raise DatasetError(f"{path}: field 'user' {user_id!r} is not a tenant id")
    lang, split = _req(data, "lang", path), _req(data, "split", path)
    if lang not in LANGS or split not in SPLITS:
        raise DatasetError(f"{path}: 'lang' must be one of {LANGS}, 'split' one of {SPLITS}")
    sessions, facts = [], {}
    for s in _req(data, "sessions", path, list):
        sid = _req(s, "id", f"{path} session")
        turns = []
        for t in _req(s, "turns", f"{path} {sid}", list):
            where = f"{path} turn {t.get('id')!r}"
            kind = _req(t, "kind", where)
            if kind not in KINDS:
                raise DatasetError(f"{where}: 'kind' {kind!r} is not one of {KINDS}")
            turn_facts = []
            for f in t.get("facts") or []:
                fw = f"{where} fact {f.get('id')!r}"
                fact = Fact(_req(f, "id", fw), _req(f, "fact", fw), _keys(f.get("key"), fw, "key"),
                            _req(f, "topic", fw), f.get("supersedes"), f.get("repeats"))
                if fact.topic not in TOPICS:
                    raise DatasetError(f"{fw}: 'topic' {fact.topic!r} is not one of {TOPICS}")
                if fact.id in facts:
                    raise DatasetError(f"{fw}: duplicate fact id")
                facts[fact.id] = fact
                turn_facts.append(fact)
            turns.append(Turn(_req(t, "id", where), sid, kind, _req(t, "user", where), _req(t, "assistant", where),
                              tuple(turn_facts), t.get("question"), bool(t.get("in_request", False))))
        sessions.append(Session(sid, str(s.get("date", "")), tuple(turns)))
    probes = []
    for p in _req(data, "probes", path, list):
        where = f"{path} probe {p.get('id')!r}"
        probes.append(Probe(_req(p, "id", where), _req(p, "ask", where), _keys(p.get("needs"), where, "needs"),
                            _keys(p["stale"], where, "stale") if p.get("stale") else ()))
    user = User(user_id, lang, split, tuple(sessions), tuple(probes), str(data.get("persona", "")), path, facts)
    validate(user)
    return user


def validate(user: User) -> None:
    """The format's rules (module docstring), plus: each key occurs in its turn's
    ``source_text``; ``supersedes``/``repeats`` name an earlier fact; a probe needs only
    current facts; a fact's keys do not all occur in the user's words of a turn that does
    not state it (nor a repeat of it); a stale string occurs in a superseded fact's turn and in no turn
    stating only current facts (else injecting a current fact would count as stale; a
    turn stating a superseded and a current fact may hold it: injecting that turn does
    inject the outdated fact)."""
    where = user.path
    turns = user.turns
    ids = [t.id for t in turns]
    if len(set(ids)) != len(ids):
        raise DatasetError(f"{where}: duplicate turn ids")
    order: dict[str, int] = {}
    previous: Turn | None = None
    for i, turn in enumerate(turns):
        tw = f"{where} turn {turn.id!r}"
        if (turn.kind in FACT_KINDS) != bool(turn.facts):
            raise DatasetError(f"{tw}: kind {turn.kind!r} {'needs' if turn.kind in FACT_KINDS else 'must not have'} 'facts'")
        if turn.kind == "answer":
            if not turn.question or previous is None or previous.session != turn.session \
                    or turn.question not in previous.assistant:
                raise DatasetError(f"{tw}: an answer needs 'question', a substring of the previous "
                                   "turn's 'assistant' in the same session")
        elif turn.question:
            raise DatasetError(f"{tw}: only an answer has 'question'")
        for fact in turn.facts:
            order[fact.id] = i
            for key in fact.key:
                if key.casefold() not in turn.source_text.casefold():
                    raise DatasetError(f"{tw} fact {fact.id!r}: key {key!r} is not in the user's words")
            for ref, rkind in ((fact.supersedes, "update"), (fact.repeats, "repeat")):
                if ref is not None and (turn.kind != rkind or order.get(ref, i) >= i):
                    raise DatasetError(f"{tw} fact {fact.id!r}: {'supersedes' if rkind == 'update' else 'repeats'} "
                                       f"{ref!r} must be an earlier fact, on a {rkind} turn")
        if turn.kind == "update" and not any(f.supersedes for f in turn.facts):
            raise DatasetError(f"{tw}: an update names the fact it 'supersedes'")
        if turn.kind == "repeat" and not any(f.repeats for f in turn.facts):
            raise DatasetError(f"{tw}: a repeat names the fact it 'repeats'")
        previous = turn
    for fact in user.facts.values():
        root = user.root(fact.id)
        for turn in turns:
            if root not in {user.root(f.id) for f in turn.facts} and \
                    all(k.casefold() in turn.user.casefold() for k in fact.key):
                raise DatasetError(f"{where} fact {fact.id!r}: its keys all occur in turn {turn.id!r}, which does "
                                   "not state it (a memory of that turn would count as recalling the fact)")
    superseded = user.superseded()
    pids = [p.id for p in user.probes]
    if len(set(pids)) != len(pids):
        raise DatasetError(f"{where}: duplicate probe ids")
    current_texts = [t.user for t in turns if t.facts and all(user.root(f.id) not in superseded for f in t.facts)]
    stale_texts = [t.user for t in turns for f in t.facts if user.root(f.id) in superseded]
    for probe in user.probes:
        pw = f"{where} probe {probe.id!r}"
        for need in probe.needs:
            if need not in user.facts:
                raise DatasetError(f"{pw}: needs unknown fact {need!r}")
            if user.root(need) in superseded:
                raise DatasetError(f"{pw}: needs {need!r}, which an update superseded")
        for stale in probe.stale:
            s = stale.casefold()
            if not any(s in t.casefold() for t in stale_texts):
                raise DatasetError(f"{pw}: stale {stale!r} is in no superseded fact's turn")
            if any(s in t.casefold() for t in current_texts):
                raise DatasetError(f"{pw}: stale {stale!r} also occurs in a turn stating only current facts")


def load_users(paths: Iterable[Path] | None = None) -> list[User]:
    """Every user file (default: ``*.json`` under :data:`DATA_DIR`), sorted by user id.

    Raises:
        DatasetError: a file is not JSON or breaks a rule; two files share a user id.
    """
    users = []
    for path in sorted(paths if paths is not None else DATA_DIR.glob("*.json")):
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            raise DatasetError(f"{path}: {exc}") from None
        users.append(parse_user(data, str(path)))
    names = [u.user for u in users]
    if len(set(names)) != len(names):
        raise DatasetError("two files share a user id")
    return sorted(users, key=lambda u: u.user)


def select(users: list[User], split: str = "all", lang: str = "all") -> list[User]:
    """The users of ``split`` (dev | heldout | heldout2 | ... | heldout10 | updates | heldout11 | heldout12 | asks
    | asks2 | heldout13 | heldout14 | heldout15 | heldout16 | heldout17 | heldout18 | all, :data:`SPLITS`) and ``lang`` (en | zh | all)."""
    return [u for u in users if split in ("all", u.split) and lang in ("all", u.lang)]
