"""Keywords of a turn for verbatim memories, sans-IO.

Tokens of :func:`gateway.memory.tokenize.tokenize` (NFKC, casefold, English stop words
removed, CJK aware) minus a few more conversational fillers; for CJK runs the character
bigrams are kept and single characters dropped (a bigram carries the word, Lucene's
CJKAnalyzer). Unique, in order of first appearance, at most ``limit``.
"""

from __future__ import annotations

from gateway.memory.tokenize import tokenize
from gateway.runtime.text import CJK_RE

FILLERS = frozenset(
    "about also am any just like really so some very yeah yes ok okay oh well hey hi hello "
    "thanks thank lol can could would should im i'm dont don't got get one all".split()
) | frozenset("的 了 是 我 你 他 她 它 们 吗 呢 吧 啊 和 在 有 也 就 都 这 那 个".split())


def keywords_of(text: str, limit: int = 12) -> list[str]:
    """>>> keywords_of("I adopted a puppy named Rex, 我喜欢狗")
    ['adopted', 'puppy', 'named', 'rex', '我喜', '喜欢', '欢狗']
    """
    out: list[str] = []
    for token in tokenize(text):
        if token in FILLERS or token in out or (token.isdigit() and len(token) < 3):
            continue
        if CJK_RE.match(token) and len(token) == 1:
            continue
        out.append(token)
        if len(out) == limit:
            break
    return out
