"""Finding the memory lines in the request the upstream received.

What the gateway added is every upstream message that is not one the client sent (the
probe sends one user message, so: the system message(s) the recall plugins insert;
``placement: separate``, :func:`gateway.chain.injection.render`). Its text is
:attr:`Injected.text`, where probe keys are looked for.

Lines, read top to bottom (:func:`parse_injected`):

- the memory context (``hybrid_injection``; :data:`plugins.prompts.MEMORY_CONTEXT`, en or
  zh): from its first line ("Here is what you remember about the user..." /
  "以下是与用户相关的记忆信息...") to its notes line ("Notes:" / "注意事项："), the items are
  rendered ``1. text``: an item starts at ``^\\d+\\.\\s`` (or a list bullet, ``- text``) and
  runs to the next item, a sub-heading (a short line ending in a colon, skipped) or the
  notes line (continuation lines kept, joined with a newline). Section ``memory``.
- the personalization section (``personalization``; :data:`plugins.prompts.PERSONALIZATION_HEADER`):
  its ``- ...`` lines up to a blank line. Section ``personalization``: style lines from
  fixed templates, not memory text (counted, and in the duplicate check, not in junk).
- the memory context's notes (``- ...`` under "Notes:" up to a blank line): template
  text, skipped.
- any other line that starts like a list item (``1.``, ``1)``, ``-``, ``*``, ``•``) outside
  those sections is an item of section ``other`` (a block another plugin or a later
  format adds: counted as memory lines).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from plugins.prompts import MEMORY_CONTEXT, MEMORY_ITEMS, PERSONALIZATION_HEADER

_ITEM = re.compile(r"^(\d+)\.\s+(.*)$")
_BULLET = re.compile(r"^\s*(?:\d+[.)、]|[-*•])\s+(.*\S)\s*$")
#: A short line ending in a colon inside the memory context: a sub-heading ("Profile:").
_SUBHEADER = re.compile(r"^\S.{0,38}[:：]$")


def _first_line(text: str) -> str:
    return next(line.strip() for line in text.splitlines() if line.strip())


MEMORY_HEADERS = frozenset(_first_line(t.split(MEMORY_ITEMS)[0]) for t in MEMORY_CONTEXT.values())
NOTES_HEADERS = frozenset(_first_line(t.split(MEMORY_ITEMS)[1]) for t in MEMORY_CONTEXT.values())
PERSONALIZATION_HEADERS = frozenset(h.strip() for h in PERSONALIZATION_HEADER.values())


@dataclass(frozen=True)
class Line:
    """One injected item: its text (numbering or bullet removed) and section."""

    text: str
    section: str  # memory | personalization | other


@dataclass
class Injected:
    text: str = ""
    lines: list[Line] = field(default_factory=list)

    @property
    def memory_lines(self) -> list[Line]:
        return [line for line in self.lines if line.section != "personalization"]


def content_text(content: Any) -> str:
    """A message ``content`` as text (string, or the text of its parts)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return "" if content is None else str(content)


def injected_messages(received: dict[str, Any], sent: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Messages of the upstream body ``received`` that are not among ``sent`` (by role and
    text, each sent message matched once)."""
    left = [(m.get("role"), content_text(m.get("content"))) for m in sent]
    out = []
    for message in received.get("messages") or []:
        pair = (message.get("role"), content_text(message.get("content")))
        if pair in left:
            left.remove(pair)
        else:
            out.append(message)
    return out


def parse_injected(text: str) -> list[Line]:
    """The items of an injected text (module docstring)."""
    lines: list[Line] = []
    section = "none"
    item: list[str] | None = None

    def close() -> None:
        nonlocal item
        if item is not None:
            body = "\n".join(item).strip()
            if body:
                lines.append(Line(body, "memory"))
        item = None

    for raw in text.splitlines():
        stripped = raw.strip()
        if stripped in MEMORY_HEADERS:
            close()
            section = "memory"
            continue
        if stripped in NOTES_HEADERS:
            close()
            section = "notes"
            continue
        if stripped in PERSONALIZATION_HEADERS:
            close()
            section = "personalization"
            continue
        if section == "memory":
            match = _ITEM.match(stripped) or _BULLET.match(stripped)
            if match:
                close()
                item = [match.group(match.lastindex or 1)]
            elif _SUBHEADER.match(stripped):
                close()
            elif item is not None:
                item.append(raw)
            continue
        if section in ("personalization", "notes"):
            if not stripped:
                section = "none"
            elif section == "personalization" and (bullet := _BULLET.match(raw)):
                lines.append(Line(bullet.group(1), "personalization"))
            continue
        bullet = _BULLET.match(raw)
        if bullet:
            lines.append(Line(bullet.group(1), "other"))
    close()
    return lines


def read_request(received: dict[str, Any], sent: list[dict[str, Any]]) -> Injected:
    """What the gateway injected into the upstream body ``received`` for the client
    messages ``sent``: its text and its lines."""
    text = "\n\n".join(content_text(m.get("content")) for m in injected_messages(received, sent))
    return Injected(text, parse_injected(text))
