"""What a verbatim memory is worth (issue 11, item 4), sans-IO, zh + en, no model.

:func:`is_small_talk`: greetings, thanks, acknowledgements and sign-offs ("hi", "Thanks,
that's all for now", "好的谢谢", "哈哈哈", "q4") carry nothing to remember. A turn is small
talk when, once punctuation, emoji and spaces are gone, it is at most
:data:`MIN_CONTENT_CHARS` characters of Latin letters and digits with no CJK, or it splits
entirely into the phrases of :data:`SMALL_TALK_EN` (whole words) and
:data:`SMALL_TALK_ZH` (longest match first, Chinese having no spaces). Anything else
stays: a short turn with one content word ("I'm vegan", "我27岁") is kept.

:func:`profile_type`: a user turn that states a lasting preference or fact about the user
belongs in the ``profile`` scope (seed 002: the user's profile is shared with every
friend; events stay with one friend), typed ``preference`` or ``semantic``. The cues are
first-person statements (:data:`PREFERENCE_CUES`, :data:`FACT_CUES`), seed 000 P3's
style words (简洁, 详细, 注释, 新手, 专家) among them; questions and hypotheticals ("do
you like...?", "如果我喜欢") are not statements. Cue lists, not a classifier: measured on
the labelled turns in ``tests/memorization/data/salience.jsonl`` (zh + en), precision and
recall are in the test and the README.
"""

from __future__ import annotations

import re

from gateway.memory.records import MemoryType

__all__ = ['FACT_CUES', 'MIN_CONTENT_CHARS', 'PREFERENCE_CUES', 'SMALL_TALK_EN', 'SMALL_TALK_ZH', 'is_small_talk', 'profile_type']

#: Latin letters and digits (no CJK) at most this many: nothing to remember ("ok", "q4").
MIN_CONTENT_CHARS = 3

SMALL_TALK_EN = frozenset("""
hi hello hey hiya yo howdy greetings morning evening afternoon night good goodnight gn
thanks thank thx ty tysm you u so much very a lot lots many again cheers appreciated
ok okay k kk okey alright alrighty fine sure yes yeah yep yup ya no nope nah
great cool nice awesome perfect wonderful excellent amazing lovely sweet neat sounds
bye goodbye cya see later soon take care ttyl
lol lmao haha hahaha hehe hmm hm mm oh ah wow aw uh um oops
got it understood noted gotcha makes sense right i see there worries helps helped helpful one
that's thats all for now it is was will do that this
np no problem welcome you're youre please
""".split())

SMALL_TALK_ZH = tuple(sorted("""
你好 您好 大家好 嗨 哈喽 哈啰 早 早安 早上好 中午好 下午好 晚上好 晚安 午安
谢谢 谢谢你 谢谢您 谢啦 谢了 多谢 感谢 感谢你 非常感谢 太感谢了 辛苦了 麻烦了 不客气 没关系 没事 没问题
好的 好滴 好哒 好吧 好呀 好啊 好 行 行吧 可以 嗯 嗯嗯 恩 哦 噢 喔 哦哦 啊 呀 吧 啦 了 呢 么 嘛
是的 是 对 对的 对啊 没错 明白 明白了 了解 了解了 知道了 收到 懂了 我懂了 我知道了
哈哈 哈 呵呵 嘿嘿 嘻嘻 哇 哇塞 厉害 棒 太棒了 不错 很好 真好 牛
原来如此 原来是这样 懂啦 再见 拜拜 拜 回头见 下次见 先这样 就这样 那就这样 先这样吧 就这些 没有了 没了 暂时没有了
""".split(), key=len, reverse=True))

#: First-person statements of a preference (``preference``).
PREFERENCE_CUES = re.compile(
    r"\b(?:i|we)\s+(?:(?:really|do\s+not|don't|dont|also|absolutely|truly|just|still)\s+){0,2}"
    r"(?:like|love|enjoy|prefer|hate|dislike|adore|can't\s+stand|cannot\s+stand)\b"
    r"(?!\s+(?:it|that|this|these|those|them|your|the\s+idea)\b)"
    r"|\bmy\s+fav(?:ou?rite)?\b|\bi'?m\s+(?:a\s+)?(?:big\s+)?fan\s+of\b"
    r"|我(?:很|真的|特别|非常|最|比较|更|也|还|一直|从来)?(?:不)?(?:喜欢|爱吃|爱看|爱玩|爱听|讨厌|偏好|偏爱|受不了|热爱)"
    r"|我最爱|请(?:回答|回复)?(?:简洁|简短|详细)|(?:简洁|简短|详细|带注释)(?:一点|一些|点)?的?(?:回答|解释|代码)",
    re.IGNORECASE,
)

#: First-person statements of a lasting fact about the user (``semantic``).
FACT_CUES = re.compile(
    r"\bmy\s+name\s+is\b|\bcall\s+me\b|\bi'?m\s+called\b"
    r"|\bi\s+(?:work|worked)\s+(?:as|at|in|for)\b|\bi'?m\s+an?\s+\w+(?:\s+\w+)?\s+(?:by\s+profession|at|in|for)\b"
    r"|\bi\s+(?:live|grew\s+up)\s+in\b|\bi'?m\s+from\b|\bi\s+was\s+born\b"
    r"|\bi'?m\s+(?:allergic|vegetarian|vegan|married|divorced|single|pregnant|retired|left-handed)\b"
    r"|\bi\s+am\s+(?:allergic|vegetarian|vegan|married|divorced|single|pregnant|retired|left-handed)\b"
    r"|\bi\s+have\s+(?:a|an|two|three|\d+)\s+(?:kids?|children|sons?|daughters?|dogs?|cats?|brothers?|sisters?|pets?)\b"
    r"|\bmy\s+(?:wife|husband|partner|son|daughter|mom|mother|dad|father|brother|sister|dog|cat|birthday)\b\S*\s+(?:is|are|was)\b"
    r"|\bi'?m\s+\d{1,3}\s*(?:years?\s+old|yo)\b|\bi\s+am\s+\d{1,3}\s*years?\s+old\b"
    r"|我(?:的名字)?叫|我是(?:一[名个位])?\S{0,8}(?:人|师|生|员|家|者|手|工程师|医生|护士|学生|老师)"
    r"|我在\S{1,12}(?:工作|上班|上学|读书)|我住在|我来自|我(?:今年)?\d{1,3}岁|我对\S{1,10}过敏|我(?:是)?(?:素食|吃素)"
    r"|我(?:有|养了?)(?:一|两|三|\d)(?:个|只|条|位)|我(?:是)?(?:新手|初学者|专家|资深)",
    re.IGNORECASE,
)

_QUESTION = re.compile(r"[?？]\s*$|^\s*(?:do|does|did|are|is|can|could|would|will|should|what|why|how|when|where|who)\b"
                       r"|^\s*(?:如果|假如|要是)|吗[?？]?\s*$", re.IGNORECASE)
_WORD = re.compile(r"[a-z0-9']+")
_STRIP = re.compile(r"[\W_]+", re.UNICODE)  # punctuation, emoji, spaces
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")


def _only_zh_small_talk(text: str) -> bool:
    rest = text
    while rest:
        for phrase in SMALL_TALK_ZH:
            if rest.startswith(phrase):
                rest = rest[len(phrase):]
                break
        else:
            return False
    return True


def is_small_talk(text: str) -> bool:
    """True when ``text`` is a greeting, thanks, acknowledgement or sign-off with nothing
    else (rules in the module docstring). Linear in ``len(text)`` (texts are cut to
    ``redaction.max_chars`` before this runs)."""
    lowered = text.lower()
    bare = _STRIP.sub("", lowered)
    if not _CJK.search(bare):
        if len(bare) <= MIN_CONTENT_CHARS:
            return True
        return all(word in SMALL_TALK_EN for word in _WORD.findall(lowered))
    latin = _WORD.findall(_CJK.sub(" ", lowered))
    if latin and not all(word in SMALL_TALK_EN for word in latin):
        return False
    return _only_zh_small_talk("".join(_CJK.findall(bare)) if latin else bare)


def profile_type(text: str) -> MemoryType | None:
    """``preference`` or ``semantic`` when ``text`` states a lasting preference or fact
    about its speaker (first person), else None (an event). Questions and hypotheticals
    are never profile."""
    if _QUESTION.search(text):
        return None
    if PREFERENCE_CUES.search(text):
        return MemoryType.PREFERENCE
    if FACT_CUES.search(text):
        return MemoryType.SEMANTIC
    return None
