"""Privacy redaction before anything is stored or sent to the memory model, sans-IO.

Each detector replaces what it finds with ``[<name>]``. Built-in order: API keys, emails, card
numbers (13-19 digits with optional spaces/dashes, kept only if the Luhn checksum holds:
ISO/IEC 7812-1), phone numbers (a ``+`` country code and >= 8 digits, or >= 9 digits in
groups, or a mainland-China mobile ``1[3-9]xxxxxxxxx``; ISO dates such as ``2023-05-08``
and clock times are left alone). Configured extra patterns run first: they are the more
specific ones (a US SSN would otherwise be taken for a phone number).

Linear time. Every built-in pattern is linear in the text by
construction: a match may only *start* where the previous character cannot belong to it
(a negative lookbehind on the pattern's own first character class, or ``\b``), so inside
a long run of such characters (80 KB of hex) each position is rejected after one step,
and every quantifier a match could backtrack over is bounded (an e-mail's local part at
most 64 characters, RFC 5321 4.5.3.1, its domain at most 8 labels of 63). The old e-mail pattern
``[A-Za-z0-9._%+-]+@...`` retried the whole run from every position: quadratic, 10 s for
80 KB. Configured ``extra`` patterns are the operator's; what they cost is bounded by the
text size cap (:attr:`RedactionConfig.max_chars`, applied by :meth:`Redactor.redact`).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from gateway.memorization.config import RedactionConfig
from gateway.runtime.text import truncate_text

API_KEY_RE = re.compile(
    r"\b(?:sk-(?:proj-|ant-)?[A-Za-z0-9_\-]{16,}"
    r"|gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,}"
    r"|AKIA[0-9A-Z]{16}|AIza[0-9A-Za-z_\-]{35}|xox[abprs]-[A-Za-z0-9\-]{10,})"
    r"|(?<=Bearer )[A-Za-z0-9._\-]{20,}"
)
EMAIL_RE = re.compile(
    r"(?<![A-Za-z0-9._%+\-])[A-Za-z0-9._%+\-]{1,64}"
    r"@(?:[A-Za-z0-9\-]{1,63}\.){1,8}[A-Za-z]{2,63}(?![A-Za-z0-9\-])"
)
CARD_RE = re.compile(r"(?<![\d\w])(?:\d[ \-]?){12,18}\d(?![\d\w])")
PHONE_RE = re.compile(
    r"(?<![\w+])(?:\+\d{1,3}[\s.\-]?)?(?:\(\d{1,4}\)[\s.\-]?)?\d{2,4}(?:[\s.\-]?\d{2,5}){1,4}(?![\w])"
)
ISO_DATE_RE = re.compile(r"^\d{4}[-/.]\d{1,2}[-/.]\d{1,2}$")


def luhn_ok(digits: str) -> bool:
    """The Luhn checksum of a digit string holds.

    >>> luhn_ok("4111111111111111"), luhn_ok("4111111111111112")
    (True, False)
    """
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch)
        if i % 2 == 1:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def _card(match: re.Match[str]) -> str | None:
    digits = re.sub(r"\D", "", match.group())
    return "[card]" if 13 <= len(digits) <= 19 and luhn_ok(digits) else None


def _phone(match: re.Match[str]) -> str | None:
    text = match.group()
    digits = re.sub(r"\D", "", text)
    if ISO_DATE_RE.match(text):
        return None
    if text.startswith("+") and 8 <= len(digits) <= 15:
        return "[phone]"
    if re.fullmatch(r"1[3-9]\d{9}", digits) or (9 <= len(digits) <= 15 and not text.isdigit()):
        return "[phone]"
    return None


Detector = tuple[str, re.Pattern[str], Callable[[re.Match[str]], str | None]]

BUILTIN: dict[str, Detector] = {
    "api_key": ("api_key", API_KEY_RE, lambda m: "[api_key]"),
    "email": ("email", EMAIL_RE, lambda m: "[email]"),
    "card": ("card", CARD_RE, _card),
    "phone": ("phone", PHONE_RE, _phone),
}
ORDER = ("api_key", "email", "card", "phone")


@dataclass(frozen=True)
class Redactor:
    """Applies the configured detectors in order; build once with :meth:`from_config`.

    ``max_chars``: texts are first cut to this many characters
    (:func:`gateway.runtime.text.truncate_text`, no half word kept at the cut), so the work per
    text is bounded and nothing past the cut is ever stored or sent unscanned. None: no
    cut (only for callers that bound their texts themselves)."""

    detectors: tuple[Detector, ...]
    max_chars: int | None = None

    @classmethod
    def from_config(cls, config: RedactionConfig) -> Redactor:
        """Raises ``re.error`` for an invalid extra pattern (caught at start-up)."""
        if not config.enabled:
            return cls((), config.max_chars)
        chosen: list[Detector] = [
            (rule.name, re.compile(rule.pattern), _placeholder(rule.name)) for rule in config.extra
        ]
        chosen += [BUILTIN[name] for name in ORDER if name in config.builtin]
        return cls(tuple(chosen), config.max_chars)

    def redact(self, text: str) -> str:
        """``text`` (cut to ``max_chars``) with every detected secret replaced by its
        placeholder. O(len(text)) for the built-in detectors (module docstring)."""
        if self.max_chars is not None:
            text = truncate_text(text, self.max_chars)[0]
        for _, pattern, replace in self.detectors:
            text = pattern.sub(functools.partial(_apply, replace), text)
        return text

    def redact_all(self, texts: Sequence[str]) -> list[str]:
        return [self.redact(t) for t in texts]


def _placeholder(name: str) -> Callable[[re.Match[str]], str]:
    """The replacement of a configured rule's matches: ``[name]``."""
    return lambda _match: f"[{name}]"


def _apply(replace: Callable[[re.Match[str]], str | None], match: re.Match[str]) -> str:
    """A detector's replacement for ``match``; the match itself when it declines (None)."""
    return replace(match) or match.group()
