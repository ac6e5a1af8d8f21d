"""The text home: the CJK character classes, comparison folding, and linear, bounded
text helpers for per-request and per-job work.

Everything here runs on the event loop for every chat request (language of the prompt,
length of a follow-up) or in every memorization job, so each function looks at a
bounded prefix of its input and does its counting with compiled regular expressions
(C speed, no backtracking) rather than a Python loop over every character: a 10 MB
message used to cost ~1.9 s of event-loop time in ``prompt_language`` alone.

- :data:`CJK_CLASS` / :data:`CJK_RE`: the CJK character class (Han ideographs, kana,
  hangul), defined here only; :data:`HAN_CLASS` / :data:`HAN_RE`: Han ideographs alone
  (Chinese-specific rules). Every module that asks "is this CJK" uses these.
- :func:`is_cjk`: one character is a CJK ideograph, kana or hangul.
- :func:`casefolded`: NFKC + case folding; :func:`folded`: that with white space collapsed
  (the comparison form of a text).
- :func:`prompt_language`: ``zh`` or ``en`` from the first :data:`LANGUAGE_PREFIX_CHARS`
  characters (a language does not change after a few thousand characters; what follows
  in a huge message is usually pasted data).
- :func:`cjk_share_language`: ``zh`` or ``en`` by the share of CJK letters among the
  letters of several texts, again on bounded prefixes (memorization prompts).
- :func:`length_units`: length where a CJK character counts 3, with an optional cap.
- :func:`truncate_text`: a text cut to a size, without leaving half a word at the end.
- :func:`count_tokens`: tiktoken tokens of a text; long texts without building a Python
  list of ints (which holds the GIL: ~1 s for 10 MB, stalling the event loop even when the
  count runs in a worker thread; ``encode_to_numpy`` measured 23 ms of loop stall).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from typing import Any, Literal

Language = Literal["zh", "en"]

#: Characters of a message looked at to decide its language (4,096: a few paragraphs).
LANGUAGE_PREFIX_CHARS = 4096

#: Han ideographs (the inside of a regex ``[...]``): CJK unified ideographs, extension A,
#: compatibility ideographs, extension B.
HAN_CLASS = "\u4e00-\u9fff\u3400-\u4dbf\uf900-\ufaff\U00020000-\U0002a6df"
#: Hiragana and katakana.
KANA_CLASS = "\u3040-\u30ff"
#: Hangul syllables.
HANGUL_CLASS = "\uac00-\ud7af"
#: The scripts of zh/ja/ko text (the inside of a regex ``[...]``): Han, kana, hangul.
CJK_CLASS = HAN_CLASS + KANA_CLASS + HANGUL_CLASS
#: One CJK character.
CJK_RE = re.compile(f"[{CJK_CLASS}]")
#: One Han ideograph.
HAN_RE = re.compile(f"[{HAN_CLASS}]")
_LATIN_WORD_RE = re.compile(r"[A-Za-z]+")
_LETTER_RE = re.compile(r"[^\W\d_]")  # a letter: a word character, not a digit or "_"


def is_cjk(char: str) -> bool:
    """True for CJK ideographs, kana and hangul (the scripts of zh/ja/ko text).

    >>> is_cjk("北"), is_cjk("a"), is_cjk("カ")
    (True, False, True)
    """
    return CJK_RE.fullmatch(char) is not None


def casefolded(text: str) -> str:
    """``text`` NFKC-normalised and case folded (full-width letters and digits become
    ASCII, ``ß`` becomes ``ss``): what matching and tokenizing compare. Linear.

    >>> casefolded("Ｓtraße")
    'strasse'
    """
    return unicodedata.normalize("NFKC", text).casefold()


def folded(text: str) -> str:
    """The form two texts are compared in: NFKC, case folded, every run of white space
    one space, no space at either end. Linear in ``len(text)``.

    >>> folded("  Ｉ like\tCATS ")
    'i like cats'
    """
    return " ".join(casefolded(text).split())


def prompt_language(text: str, limit: int = LANGUAGE_PREFIX_CHARS) -> Language:
    """``zh`` when the first ``limit`` characters of ``text`` are mostly CJK, else ``en``.

    "Mostly" counts each CJK character as one unit and each run of Latin letters (a word)
    as one unit, since one Chinese character carries about what one English word does:
    "帮我写个 Python 函数" (6 vs 1) is zh, "I visited 北京" (2 vs 2) is zh on a tie,
    "What does 你好 mean in English?" (2 vs 6) is en. No text at all: en. Cost: O(limit).

    >>> prompt_language("帮我写个 Python 函数"), prompt_language("What does 你好 mean?")
    ('zh', 'en')
    """
    prefix = text[:limit]
    cjk = len(CJK_RE.findall(prefix))
    if not cjk:
        return "en"
    words = len(_LATIN_WORD_RE.findall(prefix))
    return "zh" if cjk >= words else "en"


def cjk_share_language(texts: Iterable[str], threshold: float = 0.2,
                       limit: int = LANGUAGE_PREFIX_CHARS) -> Language:
    """``zh`` when at least ``threshold`` of the letters (word characters that are not
    digits or ``_``; CJK characters are letters) in the texts' first ``limit`` characters
    each are CJK, else ``en`` (no letters: ``en``).
    Cost: O(limit) per text.

    >>> cjk_share_language(["我昨天去了北京"]), cjk_share_language(["I went to Beijing"])
    ('zh', 'en')
    """
    letters = cjk = 0
    for text in texts:
        prefix = text[:limit]
        cjk += len(CJK_RE.findall(prefix))
        letters += len(_LETTER_RE.findall(prefix))
    if not letters:
        return "en"
    return "zh" if cjk / letters >= threshold else "en"


def length_units(text: str, cap: int | None = None) -> int:
    """Length where a CJK character counts 3 and anything else 1, counted over at most
    ``cap`` characters (None: all). ``length_units(t[:k]) < k`` exactly when
    ``length_units(t) < k``, since every character counts at least 1, so a caller
    comparing with ``k`` may pass ``cap=k``.

    >>> length_units("ab北"), length_units("abcdef", cap=3)
    (5, 3)
    """
    part = text if cap is None else text[:cap]
    return len(part) + 2 * len(CJK_RE.findall(part))


def truncate_text(text: str, max_chars: int, word_slack: int = 200) -> tuple[str, bool]:
    """``(text cut to at most max_chars, whether it was cut)``.

    When cut, a partial word at the end is dropped if a whitespace occurs in the last
    ``word_slack`` kept characters, so a secret or address straddling the cut is not
    kept half-way (where a redaction pattern would no longer recognise it). Cost:
    O(max_chars).

    >>> truncate_text("hello big world", 12)
    ('hello big', True)
    >>> truncate_text("short", 12)
    ('short', False)
    """
    if len(text) <= max_chars:
        return text, False
    cut = text[:max_chars]
    tail = cut[-word_slack:]
    match = re.search(r"\s\S*\Z", tail)
    if match is not None:
        cut = cut[: len(cut) - len(tail) + match.start()]
    return cut.rstrip(), True


#: Above this many characters :func:`count_tokens` uses ``encode_to_numpy``.
NUMPY_TOKEN_COUNT_CHARS = 16_384


def count_tokens(encoding: Any, text: str) -> int:
    """Tokens of ``text`` under a tiktoken ``encoding``, special-token text counted as
    ordinary text (``disallowed_special=()``); the same count either way, but texts over
    :data:`NUMPY_TOKEN_COUNT_CHARS` go through ``encode_to_numpy`` so no list of Python
    ints is built while holding the GIL. O(len(text)); call it off the event loop for
    long texts."""
    if not text:
        return 0
    if len(text) > NUMPY_TOKEN_COUNT_CHARS:
        return int(encoding.encode_to_numpy(text, disallowed_special=()).size)
    return len(encoding.encode(text, disallowed_special=()))
