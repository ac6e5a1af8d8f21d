"""SillyTavern macros in injected lore: ``{{user}}``, ``{{char}}`` and the other common ones.

SillyTavern replaces macros in World Info entries before they reach the model (its
documentation, "Macros": names are case-insensitive, an unknown macro stays as written).
The ones supported here, for text the gateway injects (:func:`substitute`):

- names: ``{{user}}`` (``<USER>``), ``{{char}}`` (``<BOT>``, ``<CHAR>``), ``{{group}}`` and
  ``{{charIfNotGroup}}`` (the character's name: the gateway sees one character per
  request). Where the names come from: :func:`names_from_request`;
- the chat: ``{{input}}`` and ``{{lastUserMessage}}`` (the last user message),
  ``{{lastCharMessage}}`` (the last assistant message), ``{{lastMessage}}`` (the last
  user or assistant message), ``{{model}}`` (the request's model);
- time, in UTC (the gateway does not know the client's time zone), formatted as
  SillyTavern's English locale does: ``{{time}}`` (``9:05 PM``), ``{{date}}``
  (``November 26, 2026``), ``{{weekday}}`` (``Thursday``), ``{{isotime}}`` (``21:05``),
  ``{{isodate}}`` (``2026-11-26``);
- text: ``{{newline}}``, ``{{trim}}`` (removes the newlines around it), ``{{noop}}`` and
  ``{{// a note}}`` (nothing);
- chance: ``{{random:a,b,c}}`` / ``{{random::a::b}}`` (one item) and ``{{roll:NdM+K}}``
  (dice; ``{{roll:20}}`` is ``1d20``; at most 100 dice of at most 1,000,000 sides, else left
  as written), drawn from the plugin's random generator (``random_seed``).

Each macro is replaced once, left to right, in one pass: a value that itself contains
``{{...}}`` (a user named ``{{char}}``) is not expanded again. Linear in the text.
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from gateway.chain.sdk import message_text

__all__ = ["MacroContext", "context_for", "names_from_request", "substitute"]

_TRIM = re.compile(r"(?:\r?\n)*\{\{trim\}\}(?:\r?\n)*", re.IGNORECASE)
_MACRO = re.compile(r"\{\{([^{}]*)\}\}|<(USER|BOT|CHAR)>")
_DICE = re.compile(r"(\d*)(?:d(\d+))?(?:([+-])(\d+))?", re.IGNORECASE)
MAX_DICE = 100
MAX_SIDES = 1_000_000


@dataclass(frozen=True)
class MacroContext:
    """What the macros of one request expand to (module docstring)."""

    user: str
    char: str
    now: datetime
    rng: random.Random
    last_user: str = ""
    last_char: str = ""
    last_message: str = ""
    model: str = ""


def names_from_request(messages: Sequence[Mapping[str, Any]], user_id: str, friend_id: str) -> tuple[str, str]:
    """``(user, char)`` for ``{{user}}`` / ``{{char}}``: the ``name`` of the last user
    message that has one (else ``user_id``, the caller's user id) and the ``name`` of the
    last assistant message that has one (else ``friend_id``, the key's friend)."""
    user = char = None
    for message in reversed(messages):
        name = message.get("name")
        if not isinstance(name, str) or not name.strip():
            continue
        if user is None and message.get("role") == "user":
            user = name
        elif char is None and message.get("role") == "assistant":
            char = name
        if user is not None and char is not None:
            break
    return user or user_id, char or friend_id


def context_for(
    messages: Sequence[Mapping[str, Any]], user_id: str, friend_id: str, now: datetime, rng: random.Random,
    model: str = "",
) -> MacroContext:
    """The :class:`MacroContext` of a chat request's ``messages``."""
    user, char = names_from_request(messages, user_id, friend_id)
    last_user = last_char = last = ""
    for message in reversed(messages):
        role = message.get("role")
        if role not in ("user", "assistant"):
            continue
        text = message_text(message)
        if not last:
            last = text
        if role == "user" and not last_user:
            last_user = text
        if role == "assistant" and not last_char:
            last_char = text
        if last_user and last_char:
            break
    return MacroContext(user, char, now, rng, last_user, last_char, last, model)


def _roll(formula: str, rng: random.Random) -> str | None:
    match = _DICE.fullmatch("".join(formula.split()))
    if not match or not (match.group(1) or match.group(2)):
        return None
    count_text, sides_text, sign, bonus = match.groups()
    if sides_text is None:  # "{{roll:20}}" is 1d20
        count, sides = 1, int(count_text)
    else:
        count, sides = int(count_text or 1), int(sides_text)
    if not (1 <= count <= MAX_DICE and 1 <= sides <= MAX_SIDES):
        return None
    total = sum(rng.randint(1, sides) for _ in range(count))
    if sign:
        total += int(bonus) if sign == "+" else -int(bonus)
    return str(total)


def _time(now: datetime) -> str:
    hour = now.hour % 12 or 12
    return f"{hour}:{now.minute:02d} {'AM' if now.hour < 12 else 'PM'}"


def _expand(body: str, ctx: MacroContext) -> str | None:
    """The value of the macro ``{{body}}``, or None to leave it as written."""
    name = body.strip()
    lower = name.lower()
    if lower.startswith("//"):
        return ""
    simple = {
        "user": ctx.user, "char": ctx.char, "group": ctx.char, "charifnotgroup": ctx.char,
        "newline": "\n", "noop": "", "input": ctx.last_user, "lastusermessage": ctx.last_user,
        "lastcharmessage": ctx.last_char, "lastmessage": ctx.last_message, "model": ctx.model,
    }
    if lower in simple:
        return simple[lower]
    if lower in ("time", "date", "weekday", "isotime", "isodate"):
        now = ctx.now
        return {
            "time": _time(now), "date": f"{now:%B} {now.day}, {now.year}", "weekday": f"{now:%A}",
            "isotime": f"{now:%H:%M}", "isodate": f"{now:%Y-%m-%d}",
        }[lower]
    if lower.startswith("random::"):
        items = name[len("random::"):].split("::")
        return ctx.rng.choice(items)
    if lower.startswith("random:"):
        items = [item.strip() for item in name[len("random:"):].split(",")]
        return ctx.rng.choice(items)
    if lower.startswith("roll:") or lower.startswith("roll "):
        return _roll(name[5:], ctx.rng)
    return None


def substitute(text: str, ctx: MacroContext) -> str:
    """``text`` with its macros replaced (module docstring); unknown ones stay."""
    if "{{" not in text and "<" not in text:
        return text
    text = _TRIM.sub("", text)

    def one(match: re.Match[str]) -> str:
        legacy = match.group(2)
        if legacy is not None:
            return ctx.user if legacy == "USER" else ctx.char
        value = _expand(match.group(1), ctx)
        return match.group(0) if value is None else value

    return _MACRO.sub(one, text)
