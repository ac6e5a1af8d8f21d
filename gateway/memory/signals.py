"""Ranking signals besides similarity and BM25 (seeds 001 and 004), sans-IO.

Seed 001 ranks memories by semantic similarity, keywords, time decay ("时间邻近性") and
emotional relevance ("情感相关性"); seed 004 weights time decay and keyword overlap. Each
function here gives one signal in [0, 1] (or a period) for one record or one query;
:func:`gateway.memory.ranking.rerank` adds them up with the weights of
:class:`gateway.memory.config.RankingConfig`. Everything is linear in the text's length.

- :func:`recency`: exponential decay of a record's age, ``0.5 ** (age / half_life)``.
- :func:`emotion_of`: an emotion label for a text from a small zh + en lexicon (the
  labels of :data:`EMOTIONS`), or a record's own ``emotion`` mapped onto them.
- :func:`query_period`: the time span a question names, relative to the request time
  ("last summer", "in May 2023", "two weeks ago", 上周, 去年, 五月), reusing the relative
  expressions of :mod:`gateway.memory.dates`.
- :func:`is_when_question`: "when did ...", "what date", 什么时候, 哪天.
- :func:`speaker_of`: who said a memory (seed 004's user continuity / mention relation:
  a question naming a person prefers what that person said).
- :func:`carries_date`: a record whose text names a time (a resolved relative expression,
  ``metadata.occurred_expression``, a date or a month name): the answer to a "when".
"""

from __future__ import annotations

import calendar
import re
from datetime import UTC, datetime, timedelta

from gateway.memory.dates import _RELATIVE_RE, _shift_months, resolve_occurred
from gateway.memory.records import MemoryRecord

__all__ = ['EMOTIONS', 'carries_date', 'emotion_of', 'is_when_question', 'query_period', 'recency', 'record_emotion', 'speaker_of']

#: Emotion labels and their cue words (en: word prefixes; zh: substrings). Six basic
#: emotions after Ekman (1992) with love for joy's social side, as role-play memories
#: label them (seed 001 ``emotionalContext``).
EMOTIONS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "joy": (("happy", "happi", "glad", "joy", "excit", "thrill", "delight", "proud", "cheer", "great time",
             "awesome", "wonderful", "fun"), ("开心", "高兴", "快乐", "兴奋", "激动", "幸福", "愉快", "骄傲", "好玩")),
    "sadness": (("sad", "unhappy", "depress", "cry", "cried", "lonely", "grief", "griev", "miss ", "down ",
                 "heartbroken", "upset", "lost my", "passed away"),
                ("难过", "伤心", "悲伤", "哭", "孤独", "失落", "想念", "沮丧", "去世", "郁闷")),
    "anger": (("angry", "anger", "mad ", "furious", "annoy", "irritat", "frustrat", "hate"),
              ("生气", "愤怒", "气死", "烦", "讨厌", "恼火")),
    "fear": (("afraid", "scared", "fear", "anxious", "anxiety", "worr", "nervous", "panic", "stress"),
             ("害怕", "担心", "焦虑", "紧张", "恐惧", "压力", "不安")),
    "love": (("love", "adore", "cherish", "grateful", "thankful"), ("爱", "喜欢", "感激", "感谢", "珍惜")),
    "surprise": (("surpris", "shock", "amaz", "unexpected", "can't believe"), ("惊讶", "吃惊", "没想到", "震惊")),
}
_ALIASES = {"happy": "joy", "happiness": "joy", "excited": "joy", "sad": "sadness", "angry": "anger",
            "scared": "fear", "anxious": "fear", "anxiety": "fear", "surprised": "surprise", "affection": "love"}


def recency(occurred_at: datetime, now: datetime, half_life_s: float) -> float:
    """``0.5 ** (age / half_life_s)`` for a record that happened at ``occurred_at``; 1.0
    for the future or ``half_life_s <= 0`` (no decay)."""
    age = (now - occurred_at).total_seconds()
    if age <= 0 or half_life_s <= 0:
        return 1.0
    return 0.5 ** (age / half_life_s)


#: Per label, what :func:`emotion_of` counts: each en cue after a space and after a
#: newline, then each zh cue.
_CUES = {label: tuple(p + cue for cue in en for p in (" ", "\n")) + zh for label, (en, zh) in EMOTIONS.items()}


def emotion_of(text: str, max_chars: int = 2000) -> str | None:
    """The label of :data:`EMOTIONS` whose cues occur most in ``text`` (first
    ``max_chars`` characters; an en cue where a word starts, a zh cue anywhere; ties: the
    label listed first), or None.

    >>> emotion_of("I was so happy and excited about it"), emotion_of("最近很焦虑"), emotion_of("the bus")
    ('joy', 'fear', None)
    """
    low = f" {text[:max_chars].lower()} "
    best, best_count = None, 0
    for label, cues in _CUES.items():
        count = 0
        for cue in cues:
            count += low.count(cue)
        if count > best_count:
            best, best_count = label, count
    return best


def record_emotion(record: MemoryRecord) -> str | None:
    """The record's ``emotion`` as a label of :data:`EMOTIONS` (itself, an alias, or what
    :func:`emotion_of` finds in it), else the emotion of its text."""
    if record.emotion:
        label = record.emotion.strip().lower()
        if label in EMOTIONS:
            return label
        return _ALIASES.get(label) or emotion_of(label) or emotion_of(record.text)
    return emotion_of(record.text)


_WHEN_RE = re.compile(
    r"\b(?:when|what (?:date|day|time|year|month)|which (?:date|day|year|month)|how long ago)\b"
    r"|什么时候|何时|哪天|哪一天|哪年|哪一年|几月|几号|多久以前|多久前"
)


def is_when_question(text: str) -> bool:
    """True for a question about when something happened.

    >>> is_when_question("When did Caroline go to the support group?"), is_when_question("你什么时候去的北京？")
    (True, True)
    """
    return _WHEN_RE.search(text[:2000].lower()) is not None


_MONTHS = {name.lower(): i for i, name in enumerate(calendar.month_name) if name}
_MONTHS.update({name.lower(): i for i, name in enumerate(calendar.month_abbr) if name and name != "May"})
_MONTH_NAMES = "|".join(sorted((m for m in _MONTHS), key=len, reverse=True))
_ZH_DIGITS = {"一": 1, "二": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9, "十": 10,
              "十一": 11, "十二": 12}
_SEASONS = {"spring": 3, "summer": 6, "autumn": 9, "fall": 9, "winter": 12,
            "春天": 3, "春季": 3, "夏天": 6, "夏季": 6, "秋天": 9, "秋季": 9, "冬天": 12, "冬季": 12}
_EN_MONTH_RE = re.compile(rf"(?:\b(in|during|of|since|last|this|early|late|mid)\s+)?\b({_MONTH_NAMES})\.?(?:\s+(\d{{1,2}})(?:st|nd|rd|th)?)?(?:,?\s+(\d{{4}}))?\b")
_ZH_MONTH_RE = re.compile(r"(?:(\d{4})\s*年\s*)?(\d{1,2}|十[一二]?|[一二三四五六七八九])\s*月(?:份)?(?:\s*(\d{1,2})\s*[日号])?")
_YEAR_RE = re.compile(r"\b(?:in|during|of|since)\s+((?:19|20)\d{2})\b|((?:19|20)\d{2})\s*年")
_SEASON_RE = re.compile(r"\b(last|this|next)\s+(spring|summer|autumn|fall|winter)\b"
                        r"|(去年|今年|明年)?(春天|春季|夏天|夏季|秋天|秋季|冬天|冬季)")
_ISO_DAY_RE = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
_WEEK_UNITS = ("week", "周", "星期", "礼拜")


def _month_span(year: int, month: int) -> tuple[datetime, datetime]:
    start = datetime(year, month, 1, tzinfo=UTC)
    return start, _shift_months(start, 1)


def _latest_month(now: datetime, month: int) -> int:
    """The year of the latest ``month`` that has begun by ``now`` (a bare "in May")."""
    return now.year if month <= now.month else now.year - 1


def _relative_span(expression: str, now: datetime) -> tuple[datetime, datetime] | None:
    start = resolve_occurred(expression, now)
    if start is None:
        return None
    text = expression.replace(" ", "")
    if "ago" in text or text.endswith("前"):
        days = {"month": 31, "月": 31, "year": 366, "年": 366}
        span = next((d for unit, d in days.items() if unit in text), 7 if any(u in text for u in _WEEK_UNITS) else 1)
        end = start + timedelta(days=span)
    elif "month" in text or "月" in text:
        end = _shift_months(start, 1)
    elif "year" in text or "年" in text:
        end = start.replace(year=start.year + 1)
    elif any(u in text for u in _WEEK_UNITS) and not re.search(r"[一二三四五六日天]$|day$", text):
        end = start + timedelta(days=7)
    else:
        end = start + timedelta(days=1)
    return start, end


def query_period(text: str, now: datetime, max_chars: int = 2000) -> tuple[datetime, datetime] | None:
    """The span ``[start, end)`` (UTC) a question names, relative to ``now``; None when it
    names none. The first of, in order: an ISO date; a month with a year or day ("May
    2023", "May 7, 2023", "2023年5月", "五月"; a bare month is its latest occurrence up to
    ``now``); a season ("last summer": the three months from June of last year, 去年夏天);
    a relative expression of :mod:`gateway.memory.dates` ("two weeks ago": that
    week, "yesterday", 上周, 去年, 上个月); a year ("in 2022", 2022年).

    >>> now = datetime(2024, 8, 20, tzinfo=UTC)
    >>> [d.date().isoformat() for d in query_period("What did I do last summer?", now)]
    ['2023-06-01', '2023-09-01']
    >>> [d.date().isoformat() for d in query_period("我五月去了哪里", now)]
    ['2024-05-01', '2024-06-01']
    """
    low = text[:max_chars].lower()
    if m := _ISO_DAY_RE.search(low):
        try:
            start = datetime(int(m.group(1)), int(m.group(2)), int(m.group(3)), tzinfo=UTC)
        except ValueError:
            start = None
        if start is not None:
            return start, start + timedelta(days=1)
    for m in _EN_MONTH_RE.finditer(low):
        prep, name, day, year = m.groups()
        if year or day or (prep and (name != "may" or prep != "of")):
            month = _MONTHS[name]
            y = int(year) if year else _latest_month(now, month)
            if day and 1 <= int(day) <= calendar.monthrange(y, month)[1]:
                start = datetime(y, month, int(day), tzinfo=UTC)
                return start, start + timedelta(days=1)
            return _month_span(y, month)
    for m in _ZH_MONTH_RE.finditer(low):
        year, month_text, day = m.groups()
        month = int(month_text) if month_text.isdigit() else _ZH_DIGITS.get(month_text, 0)
        prefix = low[max(0, m.start() - 3):m.start()]
        if 1 <= month <= 12 and not prefix.endswith(("个", "几")):
            y = int(year) if year else _latest_month(now, month)
            if not year and prefix.endswith(("去年", "今年")):
                y = now.year - (prefix.endswith("去年"))
            if day and 1 <= int(day) <= calendar.monthrange(y, month)[1]:
                start = datetime(y, month, int(day), tzinfo=UTC)
                return start, start + timedelta(days=1)
            return _month_span(y, month)
    if m := _SEASON_RE.search(low):
        which = m.group(1) or {"去年": "last", "明年": "next"}.get(m.group(3) or "", "this")
        month = _SEASONS[m.group(2) or m.group(4)]
        year = now.year + {"last": -1, "this": 0, "next": 1}[which]
        if which == "this" and not m.group(3) and datetime(year, month, 1, tzinfo=UTC) > now:
            year -= 1  # "this summer" asked in spring, without 今年: the last one
        start = datetime(year, month, 1, tzinfo=UTC)
        return start, _shift_months(start, 3)
    for match in _RELATIVE_RE.finditer(low):
        span = _relative_span(match.group(0), now)
        if span is not None:
            return span
    if m := _YEAR_RE.search(low):
        year = int(m.group(1) or m.group(2))
        return datetime(year, 1, 1, tzinfo=UTC), datetime(year + 1, 1, 1, tzinfo=UTC)
    return None


_DATE_IN_TEXT = re.compile(
    rf"\b(?:{_MONTH_NAMES.replace('|may', '')})\b|\bmay \d|\b(?:19|20)\d{{2}}\b|\d{{1,2}}/\d{{1,2}}|\b(?:monday|tuesday|wednesday|thursday|friday"
    r"|saturday|sunday|weekend|yesterday|today|tonight|tomorrow|last (?:week|month|year|night)|ago)\b"
    r"|\d{1,2}\s*月|\d{1,2}\s*[日号]|[上下本这]周|昨天|前天|今天|明天|去年|今年|上个月|周末|星期[一二三四五六日天]"
)


def carries_date(record: MemoryRecord) -> bool:
    """True when the record states a time: memorization resolved a relative expression in
    it (``metadata.occurred_expression``), or its text names a date, month, weekday or
    relative day ("last week", "昨天")."""
    if record.metadata.get("occurred_expression"):
        return True
    return _DATE_IN_TEXT.search(record.text[:2000].lower()) is not None


_SPEAKER_PREFIX = re.compile(r"^([^\W\d_][\w.' -]{0,40}?):\s")


def speaker_of(record: MemoryRecord) -> str | None:
    """Who said the memory: ``metadata.speaker`` (memorization sets it from the message's
    ``name``), else a short ``Name: `` prefix of its text (the form memorization writes
    named turns in), else None."""
    speaker = record.metadata.get("speaker")
    if isinstance(speaker, str) and speaker.strip():
        return speaker
    match = _SPEAKER_PREFIX.match(record.text[:48])
    return match.group(1) if match else None
