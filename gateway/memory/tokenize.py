"""Keyword tokens for the hybrid (BM25) part of search, sans-IO.

English and other space-separated scripts: NFKC + casefold, runs of letters/digits, a
short English stop-word list removed, one-letter tokens dropped. CJK (Han, kana, Hangul):
each character is a token and so is each pair of neighbours (character bigrams, the usual
CJK indexing without a dictionary, e.g. Lucene's CJKAnalyzer).

:func:`index_terms` is what the keyword (BM25) index stores and looks up: the tokens with
words of Latin letters reduced to their Snowball English stem (Porter 2001, the
``snowballstemmer`` package), so "painting", "painted" and "paints" are one term;
CJK tokens and numbers stay as they are.
"""

from __future__ import annotations

import re
import threading
from collections import Counter
from functools import lru_cache

import snowballstemmer

from gateway.runtime.text import CJK_CLASS, CJK_RE, casefolded

__all__ = ['MAX_TOKEN_CHARS', 'STOP_WORDS', 'index_terms', 'stem', 'term_frequencies', 'tokenize']

_RUN_RE = re.compile(rf"[{CJK_CLASS}]+|[^\W_{CJK_CLASS}]+")
STOP_WORDS = frozenset(
    "a an and are as at be been but by did do does for from had has have he her him his how "
    "i if in into is it its me my no not of on or our she so than that the their them then "
    "there they this to too us was we were what when where which who why will with you your".split()
)
MAX_TOKEN_CHARS = 64


def _cjk_tokens(run: str) -> list[str]:
    return list(run) + [run[i : i + 2] for i in range(len(run) - 1)]


def tokenize(text: str) -> list[str]:
    """Tokens of ``text`` in order, with repeats.

    >>> tokenize("I moved to Berlin in 2023, 我喜欢猫")
    ['moved', 'berlin', '2023', '我', '喜', '欢', '猫', '我喜', '喜欢', '欢猫']
    """
    tokens: list[str] = []
    for run in _RUN_RE.findall(casefolded(text)):
        if CJK_RE.match(run):
            tokens.extend(_cjk_tokens(run))
        elif len(run) > 1 and run not in STOP_WORDS:
            tokens.append(run[:MAX_TOKEN_CHARS])
    return tokens


_LATIN_RE = re.compile(r"[a-z]+")
_STEMMERS = threading.local()  # a Snowball stemmer object is not safe to share between threads


@lru_cache(maxsize=65536)
def stem(token: str) -> str:
    """The Snowball English stem of a token of Latin letters (``"painting"`` ->
    ``"paint"``); any other token unchanged. Cached (tokens repeat)."""
    if not _LATIN_RE.fullmatch(token):
        return token
    stemmer = getattr(_STEMMERS, "english", None)
    if stemmer is None:
        stemmer = _STEMMERS.english = snowballstemmer.stemmer("english")
    return stemmer.stemWord(token)


def index_terms(text: str) -> list[str]:
    """:func:`tokenize`, each token through :func:`stem` (the keyword index's terms).

    >>> index_terms("She painted sunsets, 我喜欢猫")
    ['paint', 'sunset', '我', '喜', '欢', '猫', '我喜', '喜欢', '欢猫']
    """
    return [stem(token) for token in tokenize(text)]


def term_frequencies(text: str, keywords: list[str] | tuple[str, ...] = ()) -> Counter[str]:
    """Term -> count over ``text`` and ``keywords`` (what the keyword index stores:
    :func:`index_terms`)."""
    counts = Counter(index_terms(text))
    for keyword in keywords:
        counts.update(index_terms(keyword))
    return counts
