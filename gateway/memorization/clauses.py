"""A user turn's clauses, and whom a clause is about (step 1 of :mod:`gateway.memorization.disclosure`).

**Clauses** (:func:`clauses`), linear in the text (compiled regular expressions with no
nested quantifiers): sentences end at ``. ! ? 。 ！ ？ ; ； … ～`` and line
breaks ("Went vegan last month… any swap for my omelette?" is a statement, then a
question; not a decimal point, "1.4"); a sentence is cut at commas and colons (``, ，、 :``;
not a time of day, "8:15"), at a dash before a request
("head of platform now — can u help me..."), before "and" that starts a clause of
its own (a noun phrase and a finite verb: "We live in Tucson and the grandkids are
visiting"), at a space between two Chinese
characters (typed instead of a comma: "车卖了 现在坐地铁") or after a Latin word glued to a
Chinese character ("主要写java 老板想..."; not "我用 Python 写", spaced Latin words), and before "but / so / and
then" (not after a copula or "feel": in "I'm so relieved" "so" is a degree adverb) and
但是 / 所以 / 不过 / 可是 (not 不过 as a potential complement, "忙不过来", "打不过", Li & Thompson 1981,
3.2.2 on potential resultative compounds). A clause remembers whether its sentence ended in a question mark
(only the sentence's last clause is the question: "I'm vegetarian, what can I cook?").

**Whom a clause is about**, read after its lead words (a discourse word or an
interjection: "btw", "oh", 其实, 对了: :func:`core_en`, :func:`core_zh`): the user
(:data:`FIRST_PERSON_EN`, :data:`FIRST_PERSON_ZH`, :data:`NAMES_USER`), someone of the
user's (:data:`MY_SOMEONE_EN`, by name :data:`NAMED_PERSON`), and whether a clause is led
by such a person or a pronoun, so is about them (:func:`about_someone`). The kind of a
clause (:mod:`gateway.memorization.kinds`), its slot (:mod:`gateway.memorization.slots`)
and the memory (:mod:`gateway.memorization.disclosure`) all read these, and the word
shapes :data:`LATIN_WORD` and :data:`VERB_EN` (a finite English verb).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from gateway.memorization.changes import MY_SOMEONE_ZH as _MY_SOMEONE_ZH
from gateway.memorization.changes import PRONOUN_EN as _PRONOUN_EN
from gateway.memorization.changes import PRONOUN_ZH as _PRONOUN_ZH
from gateway.memorization.lexicon import ASSOCIATES_ZH, KIN_BARE_EN, RUN_ON_PEOPLE_EN, THE_HOUSEHOLD_EN
from gateway.memorization.lexicon import PEOPLE_EN as _PEOPLE_EN
from gateway.memorization.lexicon import PEOPLE_ZH as _PEOPLE_ZH
from gateway.runtime.text import HAN_RE as _CJK

#: Longest text analysed (characters); a turn is cut to this first (work stays bounded).
MAX_CHARS = 4000

#: A sentence: up to its end mark; a full stop between digits is a decimal point ("a 35
#: 1.4 lens", "3.5 miles"), not an end.
_SENTENCE = re.compile(r"(?:[^.!?。！？;；…～\n]|(?<=\d)\.(?=\d))+[.!?。！？;；…～\n]*")
#: People after whom a run-on sentence goes on with a pronoun subject and no comma ("a
#: present for my mum shes turning 50", "for my twins Mateo and Lucia they're turning 4"
#: cut before "she" / "they": a comma splice without the comma, Quirk et al. 1985, 13.4n on
#: run-on sentences) and names after them are cut the same way by :data:`_CLAUSE_CUT`, as is
#: thanks run on into a statement ("thanks my son has autism so this helps"). The people
#: are :data:`gateway.memorization.lexicon.RUN_ON_PEOPLE_EN`. A comma between a digit and
#: three more is a thousands separator ("$2,100", "12,000 steps"), no cut; so is a colon
#: between digits ("2:04").
_CLAUSE_CUT = re.compile(r"\s*(?:(?<!\d),|,(?!\d{3}(?!\d))|[，、：]|(?<!\d):|:(?!\d))\s*|\s+(?=and\s+(?:the|my|our|his|her|their)\s+(?:[\w'-]+\s+){0,2}?"
                         r"(?:is|are|was|were|has|have|had|will|keeps?|gets?)\b)|\s*[—–]\s*(?=(?:can|could|would|will|what|how|please|pls|any|anything|help|is\s+there)\b)|(?<=[\u3400-\u9fff])\s+(?=[\u3400-\u9fff])|(?P<mixed>(?<=[A-Za-z0-9])\s+(?=[\u3400-\u9fff]))|(?<!'m)(?<!\bim)(?<!\bam)(?<!\bis)(?<!'s)(?<!\bare)(?<!'re)(?<!\bwas)(?<!\bwere)(?<!\bfeel)(?<!\bfelt)(?<!\bbeen)(?<!\bfeeling)\s+(?=(?:but|so|and\s+then|and\s+(?:can|could|what|how|please|i'd\s+like))\b)"
                         r"|(?=但是|所以|可是)|(?<![比打说斗拗赢跑躲])(?=不过(?![来去]))"
                         r"|\s+(?=(?:since|because|cause|cuz|coz|given\s+that|now\s+that|seeing\s+as)\s+(?:i|i'm|im|i've|ive|my|we|we're|our)\b)"
                         r"|(?<=[\u3400-\u9fff])(?=因为我|既然我|反正我|由于我)"
                         r"|(?:" + "|".join(rf"(?<=\b{w})" for w in RUN_ON_PEOPLE_EN) + r")[ \t]+"
                         r"(?=(?:she|he|they|shes|hes|theyre|she's|he's|they're)\s)"
                         r"|(?:(?<=\bthanks)|(?<=\bthank\syou)|(?<=\bthx)|(?<=\bty))[ \t]+(?=(?:i|i'm|im|i've|ive|my|we|we're|our)\s)",
                         re.IGNORECASE)
_ASKED = re.compile(r"[?？]")
_LEAD_EN = re.compile(
    r"^(?:(?:oh+|ah+|aw+|ooh+|wow|haha\w*|lol|well|hey+|hi|hiya|hello|heya|howdy|yo|omg|ugh+|welp|yay+|cool|nice|great|perfect|"
    r"awesome|alright|gotcha|also|and|but|so|btw|by\s+the\s+way|fyi|actually|anyway|ps|p\.s\.|"
    r"just\s+so\s+you\s+know|heads\s+up|quick\s+note|for\s+the\s+record|just\s+to\s+let\s+you\s+know|"
    r"for\s+context|for\s+reference|background|since|because|cause|cos|as|given\s+that|now\s+that|although|though|"
    r"ok(?:ay)?|yeah|yes|no|hmm+|um+|oh\s+and|plus|honestly|basically|currently|nowadays|these\s+days|lately|"
    r"recently|wait|ngl|tbh|tbf|imo|fwiw|lowkey|low\s+key|not\s+gonna\s+lie|to\s+be\s+honest)\b[\s,:!.\u2600-\u27bf\U0001f300-\U0001faff]*){0,3}",
    re.IGNORECASE,
)
_LEAD_ZH = re.compile(r"^(?:哈{2,}|嘿{2,}|呵{2,}|嘻{2,}|哎呀|哎哟|哎|唉|诶|欸|哇塞|哇哦|哇|呜+|天哪|天呐|那(?=我|咱)|对了|顺便说一下|顺便说|顺便|另外|其实|因为|既然|由于|话说|嗯+|哦+|啊|那个|所以|但是|不过|而且|"
                      r"就是|我跟你说|跟你说一下|跟你说|跟你讲一下|跟你讲|告诉你|说一下|补充一下|还有|然后|最近|现在|目前|平时|"
                      r"是这样的|说真的|老实说)*")
FIRST_PERSON_EN = re.compile(r"^(?:i|i'm|im|i've|ive|i'd|i'll|my|we|we're|we've|we'd|our|me\s+and|mine)\b", re.IGNORECASE)
#: Someone of the user's: "my / our <person>" anywhere, "the kids", "the wife", and a
#: parental or grandparental kin term with no determiner leading the clause ("Mom got
#: diagnosed with diabetes", "Grandpa's 90 on Friday"): used bare, such a term is a name for
#: the speaker's own relative (Dahl & Koptjevskaja-Tamm 2001 on kin terms as proper names).
MY_SOMEONE_EN = re.compile(r"\b(?:my|our)\s+(?:\w+\s+){0,2}" + _PEOPLE_EN + r"\b"
                           r"|\bthe\s+" + THE_HOUSEHOLD_EN + r"\b"
                           r"|^" + KIN_BARE_EN + r"(?:'s)?\s+(?=\w)", re.IGNORECASE)
FIRST_PERSON_ZH = re.compile(r"^(?:我|咱们|咱|俺)")
#: Someone of the user's introduced by name ("my husband Chris", "我女儿叫朵朵"): lasting.
NAMED_PERSON = re.compile(r"\b(?:my|our)\s+(?:\w+\s+)?" + _PEOPLE_EN + r"(?:'s\s+name\s+is|\s+is\s+(?:called|named))?\s+(?-i:[A-Z][a-z]+)\b"
                          r"|\b(?:named|called)\s+(?-i:[A-Z][a-z]+)\b"
                          r"|我(?:的|家的?)?" + _PEOPLE_ZH + r"(?:的名字)?(?:叫|名叫)", re.IGNORECASE)
NAMES_USER = re.compile(r"\b(?:i|i'm|i've|i'd|my|our|we|we're|me|mine)\b|我|咱|俺", re.IGNORECASE)
LATIN_WORD = re.compile(r"[A-Za-z0-9']+")
VERB_EN = re.compile(r"\b(?:is|are|was|were|be|been|being|has|have|had|does|did|do|feels?|felt|looks?|seems?|got|gets|went|goes|"
                     r"made|makes|said|says|loves?|likes?|hates?|wants?|needs?|works?|lives?|can|could|will|would|"
                     r"\w+ed|\w+'s|\w+'re)\b", re.IGNORECASE)


@dataclass(frozen=True)
class Clause:
    """One clause of a turn: its text, the separator that followed it in the turn,
    whether its sentence's question mark belongs to it (the sentence's last clause), and
    the index of its sentence in the turn."""

    text: str
    sep: str
    asked: bool
    sentence: int = 0


def clauses(text: str) -> list[Clause]:
    """The clauses of ``text`` (module docstring). Linear in ``len(text)``."""
    out: list[Clause] = []
    for number, sentence in enumerate(_SENTENCE.findall(text[:MAX_CHARS])):
        body = sentence.rstrip(".!?。！？;；…～\n \t")
        end = sentence[len(body):]
        asked = bool(_ASKED.search(end))
        pieces: list[tuple[str, str]] = []
        start = 0
        for cut in _CLAUSE_CUT.finditer(body):
            if cut.start() == cut.end() == start:
                continue
            if cut.group("mixed") and not _after_han_run(body, cut.start()):
                continue  # "我用 Python 写爬虫": spaces around a Latin word, no cut
            pieces.append((body[start:cut.start()], cut.group()))
            start = cut.end()
        pieces.append((body[start:], end))
        pieces = [(p.strip(), s) for p, s in pieces if p.strip()]
        for i, (piece, sep) in enumerate(pieces):
            out.append(Clause(piece, sep, asked and i == len(pieces) - 1, number))
    return out


def _after_han_run(body: str, end: int) -> bool:
    """The Latin/digit run that ends at ``end`` in ``body`` follows a CJK character with no
    space ("主要写java 老板..."): the writer puts no space around Latin words, so the space
    after it is a typed comma, as between two CJK characters. Scans only that run."""
    start = end
    while start > 0 and body[start - 1].isascii() and body[start - 1].isalnum():
        start -= 1
    return start > 0 and bool(_CJK.match(body[start - 1]))


def core_en(text: str) -> str:
    return _LEAD_EN.sub("", text.strip()).strip()


def core_zh(text: str) -> str:
    return _LEAD_ZH.sub("", text.strip()).strip()


#: A Chinese clause led by a person word with no 我 before it ("男朋友阿杰在北邮读研",
#: "老公下个月调去成都"): Chinese drops the possessor of kin when the speaker's own is
#: meant (Li & Thompson 1981, 4.2.1 on the possessive with kin terms), so the clause is
#: about that person, as "mom's ..." is in English. Not an exclamation (妈呀).
_KIN_LED_ZH = re.compile(r"^" + _PEOPLE_ZH + r"(?!呀|啊|的天)")


#: A Chinese clause whose subject is a person modified by a 的 phrase led by 我 ("我以前带的
#: 徒弟调到成都分院了", "我的同事搬去杭州了", "我大学室友在读博"): in X 的 N the head noun N comes
#: last and X modifies it (Li & Thompson 1981, ch. 20 on nominalization and relative
#: clauses), so the subject is that person, not 我. The modifier holds no clause break.
#: With a friend, a colleague or a classmate the 的 is often dropped ("我闺蜜搬去上海了", "我同事
#: 在腾讯上班": a pronoun possessor of a close relation needs no 的, Li & Thompson 1981, 4.2.1),
#: and the subject is still that person; not a compound that starts with the word (朋友圈, 同学会,
#: 学生证).
MY_OWN_PERSON_ZH = re.compile(r"^我[\u4e00-\u9fff]{0,6}?的(?:" + _PEOPLE_ZH + "|" + ASSOCIATES_ZH + ")"
                              r"|^我(?:好|大学|高中|初中|小学|老)?" + ASSOCIATES_ZH + r"(?!圈|会|证|卡|端|群|时代|时期|期间|聚会|录)")


def about_someone(text: str) -> bool:
    """``text`` is led by "my <someone>" / 我<家人>, a person a 我 的 phrase modifies
    (:data:`MY_OWN_PERSON_ZH`: "我以前带的徒弟调到成都了"), a bare Chinese person word
    (:data:`_KIN_LED_ZH`: "男朋友阿杰在北邮读研") or a pronoun (he, she, 他, 她...): it is
    about that person, not the user."""
    core = core_zh(core_en(text))
    return bool(MY_SOMEONE_EN.match(core) or _MY_SOMEONE_ZH.match(core) or _PRONOUN_EN.match(core)
                or _PRONOUN_ZH.match(core) or _KIN_LED_ZH.match(core) or MY_OWN_PERSON_ZH.match(core)
                or (re.match(r"^(?:my|our)\s", core, re.IGNORECASE) and MY_SOMEONE_EN.search(core[:40])))
