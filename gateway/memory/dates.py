"""When a fact happened: the memory model's ``occurred`` answer resolved against the
message time, sans-IO.

The model is asked for an ISO date (``2024-05-07``, ``2024-05-07T18:00``, or ``2024-05``
/ ``2024``) or, when the speaker was relative, the expression itself ("yesterday",
"昨天", "last week", "3 days ago", "上周五"); relative expressions are resolved here, in
code, so a model that cannot count days cannot move a fact in time. Results are UTC
datetimes at the start of the day (or of the week/month/year) meant; None when the
expression is not understood (the caller then uses the message time).

:func:`relative_in` finds such an expression inside a message (verbatim mode has no model
to name it), so "I went to a support group yesterday" said on 8 May is
an event of 7 May.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

_NUM = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
        "seven": 7, "eight": 8, "nine": 9, "ten": 10, "一": 1, "两": 2, "二": 2, "三": 3,
        "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9, "十": 10, "几": 3}
_WEEKDAYS = {"monday": 0, "tuesday": 1, "wednesday": 2, "thursday": 3, "friday": 4,
             "saturday": 5, "sunday": 6, "一": 0, "二": 1, "三": 2, "四": 3, "五": 4,
             "六": 5, "日": 6, "天": 6}
_FIXED_DAYS = {
    "today": 0, "tonight": 0, "this morning": 0, "this afternoon": 0, "this evening": 0,
    "now": 0, "yesterday": -1, "last night": -1, "day before yesterday": -2,
    "the day before yesterday": -2, "tomorrow": 1, "day after tomorrow": 2,
    "今天": 0, "今日": 0, "今晚": 0, "今早": 0, "刚才": 0, "现在": 0, "昨天": -1, "昨日": -1,
    "昨晚": -1, "前天": -2, "大前天": -3, "明天": 1, "后天": 2,
}
_UNIT_DAYS = {"day": 1, "week": 7, "天": 1, "日": 1, "周": 7, "星期": 7, "礼拜": 7}
_AGO_EN = re.compile(r"^(\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten|a few|few|several)\s+(day|week|month|year)s?\s+ago$")
_AGO_ZH = re.compile(r"^(\d+|[一两二三四五六七八九十几])\s*(?:个)?\s*(天|日|周|星期|礼拜|月|年)(?:以)?前$")
_LAST_EN = re.compile(r"^(last|this|next)\s+(week|month|year|monday|tuesday|wednesday|thursday|friday|saturday|sunday)$")
_ZH_WEEKDAY = re.compile(r"^(上|这|本|下)?(?:个)?(?:周|星期|礼拜)([一二三四五六日天])$")
_ZH_PERIOD = {"上周": ("week", -1), "上星期": ("week", -1), "上个星期": ("week", -1), "本周": ("week", 0),
              "这周": ("week", 0), "下周": ("week", 1), "上个月": ("month", -1), "上月": ("month", -1),
              "这个月": ("month", 0), "本月": ("month", 0), "下个月": ("month", 1), "去年": ("year", -1),
              "今年": ("year", 0), "明年": ("year", 1), "前年": ("year", -2)}


def _day(at: datetime) -> datetime:
    return at.astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0)


def _shift_months(at: datetime, months: int) -> datetime:
    index = at.year * 12 + at.month - 1 + months
    return at.replace(year=index // 12, month=index % 12 + 1, day=1)


def _period(at: datetime, unit: str, offset: int) -> datetime:
    day = _day(at)
    if unit == "week":
        return day - timedelta(days=day.weekday()) + timedelta(weeks=offset)
    if unit == "month":
        return _shift_months(day, offset)
    return day.replace(year=day.year + offset, month=1, day=1)


def _weekday(at: datetime, weekday: int, which: str) -> datetime:
    monday = _day(at) - timedelta(days=_day(at).weekday())
    offset = {"last": -1, "上": -1, "next": 1, "下": 1}.get(which, 0)
    return monday + timedelta(weeks=offset, days=weekday)


def _count(word: str) -> int:
    if word.isdigit():
        return int(word)
    return _NUM.get(word, 3)


def parse_iso(text: str) -> datetime | None:
    """``YYYY``, ``YYYY-MM``, ``YYYY-MM-DD`` or a full ISO 8601 datetime, as UTC (naive
    values are taken as UTC); None if not ISO."""
    text = text.strip()
    try:
        if re.fullmatch(r"\d{4}", text):
            return datetime(int(text), 1, 1, tzinfo=UTC)
        if re.fullmatch(r"\d{4}-\d{2}", text):
            return datetime(int(text[:4]), int(text[5:]), 1, tzinfo=UTC)
        if re.fullmatch(r"\d{4}-\d{2}-\d{2}.*", text):
            value = datetime.fromisoformat(text.replace("Z", "+00:00"))
            return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
    except ValueError:
        return None
    return None


def resolve_occurred(expression: str | None, message_time: datetime) -> datetime | None:
    """The time ``expression`` names, relative to ``message_time`` (aware datetime).

    >>> t = datetime(2024, 5, 8, 15, 30, tzinfo=timezone.utc)  # a Wednesday
    >>> resolve_occurred("yesterday", t).date(), resolve_occurred("上周五", t).date()
    (datetime.date(2024, 5, 7), datetime.date(2024, 5, 3))
    """
    if not expression or not expression.strip():
        return None
    iso = parse_iso(expression)
    if iso is not None:
        return iso
    text = re.sub(r"\s+", " ", expression.strip().lower()).rstrip(".")
    compact = text.replace(" ", "")
    if text in _FIXED_DAYS:
        return _day(message_time) + timedelta(days=_FIXED_DAYS[text])
    if compact in _FIXED_DAYS:
        return _day(message_time) + timedelta(days=_FIXED_DAYS[compact])
    if compact in _ZH_PERIOD:
        unit, offset = _ZH_PERIOD[compact]
        return _period(message_time, unit, offset)
    if m := _AGO_EN.match(text):
        return _ago(message_time, _count(m.group(1).split()[-1]), m.group(2))
    if m := _AGO_ZH.match(compact):
        unit = {"月": "month", "年": "year"}.get(m.group(2), m.group(2))
        return _ago(message_time, _count(m.group(1)), unit)
    if m := _LAST_EN.match(text):
        which, what = m.groups()
        if what in _WEEKDAYS:
            return _weekday(message_time, _WEEKDAYS[what], which)
        return _period(message_time, what, {"last": -1, "this": 0, "next": 1}[which])
    if m := _ZH_WEEKDAY.match(compact):
        return _weekday(message_time, _WEEKDAYS[m.group(2)], m.group(1) or "这")
    return None


def _ago(at: datetime, n: int, unit: str) -> datetime:
    if unit == "month":
        day = _day(at)
        return _shift_months(day, -n).replace(day=min(day.day, 28))
    if unit == "year":
        return _day(at).replace(year=_day(at).year - n, month=1, day=1)
    return _day(at) - timedelta(days=n * _UNIT_DAYS[unit])


_EN_COUNT = r"(?:\d+|an?|one|two|three|four|five|six|seven|eight|nine|ten|a few|few|several)"
_EN_DAY = r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
#: Relative time expressions :func:`resolve_occurred` understands, as they appear in text
#: (longest alternatives first; English as whole words, Chinese anywhere).
_RELATIVE_RE = re.compile(
    r"\b(?:the day before yesterday|day before yesterday|day after tomorrow|yesterday|last night|tomorrow"
    rf"|{_EN_COUNT} (?:day|week|month|year)s? ago|(?:last|next) (?:week|month|year|{_EN_DAY}))\b"
    r"|(?:上|这|本|下)?个?(?:周|星期|礼拜)[一二三四五六日天]"
    r"|大前天|前天|昨天|昨日|昨晚|明天|后天|上个星期|上星期|上周|下周|上个月|上月|下个月|去年|明年|前年"
    r"|[0-9一两二三四五六七八九十几]+\s*个?\s*(?:天|日|周|星期|礼拜|月|年)以?前",
)


def relative_in(text: str, message_time: datetime, max_chars: int = 4096) -> tuple[str, datetime] | None:
    """The first relative time expression in ``text`` (its first ``max_chars`` characters;
    one regex scan, linear) that names another day than ``message_time``'s, with the time
    it names (:func:`resolve_occurred`); None when there is none. "today", "this week" and
    the like are not taken: the message time already says more.

    >>> t = datetime(2024, 5, 8, 15, 30, tzinfo=timezone.utc)  # a Wednesday
    >>> relative_in("I went to a support group yesterday.", t)[1].date()
    datetime.date(2024, 5, 7)
    >>> relative_in("我上周五去了北京", t)[1].date(), relative_in("see you today", t)
    (datetime.date(2024, 5, 3), None)
    """
    low = text[:max_chars].lower()
    for match in _RELATIVE_RE.finditer(low):
        expression = match.group(0)
        when = resolve_occurred(expression, message_time)
        if when is not None and when.date() != _day(message_time).date():
            return expression, when
    return None
