"""A change said without a slot word: what the user says has *ended*, and whether an
older memory is about that thing (no model).

:mod:`gateway.memorization.neardup` retires an older statement of the same slot
(residence, work, diet...: :func:`gateway.memorization.slots.slot_of`). Many
changes name no slot: "I sold the Honda, I ride a bike now", "I stopped running, it's
swimming now", "my sister moved out", "我不喝咖啡了，现在只喝茶". What such a sentence
always names is the thing that ended, right after (or, for "my sister moved out",
right before) an *ending cue*. :func:`ended_of` finds those phrases; an older memory is
about the ended thing (:func:`is_about`) when it holds the phrase's head (its last
content term: "eat *dairy*", "喝*咖啡*") and at least half of its content terms
(:func:`terms`: English words, stopwords dropped, crudely stemmed so "running" meets
"run"; Chinese character bigrams without function characters, so "喝咖啡" meets
"每天喝一杯咖啡"). The similarity floor the store's cosine must also reach is
:data:`gateway.memorization.neardup.CHANGE_MIN_SIMILARITY`. Whose ending it is comes
from the words before the cue in its clause (:func:`_subject`): the user's ("I", "we",
我, or no subject: "Finally sold the car"), someone named ("my husband", "Maya",
我老公: the older memory must name them too), or a bare pronoun (skipped: whom "he"
means is in another sentence).

Ending cues (each one a way English or Chinese grammar says "not any more"; sources:
English grammars on the discontinued state or habit, *no longer*, *not ... any more*,
*used to* (e.g. Swan, *Practical English Usage*, the entries for these words), and on
Chinese the change-of-state 了 with a negation ("不喝咖啡了": no longer drinks coffee),
不再 and 已经不 (Li & Thompson, *Mandarin Chinese: A Functional Reference Grammar*,
1981, the sentence-final 了 of a "currently relevant state"); the verbs of ending
(stop, quit, give up, sell, 戒, 卖, 退, 放弃, 停) are the lexical ones):

- English, object after the cue: *stopped*, *quit*, *gave up (on)*, *got rid of*,
  *sold*, *no longer*, *no more*, *used to*, *switched from*, *moved out of / away from*,
  *broke up with*, *cancelled*, *done / finished with*, *cut out*, *dropped out of*, *taking a break from*, *paused*, *rehomed*, *gave away*; *not / don't / can't / isn't ... anymore (any more, any longer)*, the words in
  between ("I don't eat dairy anymore": "eat dairy").
- English, subject before the cue: "my/our <X>" or a name ("Jo") + "moved out / moved
  away / passed away / died / is over". *moved out / away* ends only where X lives, so the older memory must also
  say where someone lives (:data:`_LIVING`): "my sister moved out" retires "my sister
  lives with us", not "my sister is a nurse".
- Chinese: 不再 / 已经不 / 再也不 / 没再 / 不想再 + X; 不 + X + 了 (negation with the
  change-of-state 了: "我不喝咖啡了"); 戒了 / 卖了 / 退了 / 放弃了 / 停了 + X, 戒(掉) + X
  (not 戒指, a ring), 把 X 戒了 / 卖了 / 退了 / 停了, X (已经)卖了 / 戒了 / 退了 / 停了 (the
  topic first: "车已经卖掉了"); 以前 + X ("以前住在上海"); 从 X 改成 / 换成; X 改成 / 换成 (X the old
  thing: "咖啡换成了茶"); X (先) 放一放 / 搁置 / 暂停 (put aside: "日语先放一放了"); X 搬走了 / 搬出去了 (as *moved out*, needs :data:`_LIVING`).
- A plan changed (:data:`_PLAN_CHANGE`: "change of plans", 计划有变): the older plan
  sharing a content term with the new one ends.
- A habit switched within its class (:data:`SWITCH_CLASSES`: drinks, exercise):
  *switched to* / *took up ... instead* / 改 / 换成 + a member of the class ends the
  older habit of that class, whatever its member ("switched to decaf" after "I drink
  three espressos a day"); an added habit ("I also play tennis now") ends nothing.

A cue word that is no ending is excluded where English has a common other use:
"stopped by / at / for", "stopped working" (a machine), "quit it", "sold out", "no more
than", "I'm / get used to" (accustomed). Everything here is linear in the text (one pass of each
compiled pattern, bounded repetitions only; a cue reads back at most
:data:`LOOKBACK` characters).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from gateway.memorization.lexicon import (
    KIN_CLOSE_EN,
    MONTH_NAMES,
    PAST_TIME_ZH,
    PEOPLE_ZH,
    PETS_EN,
    PLAN_CUES,
    SIBLING_ZH,
    WEEKDAY_EN,
    WEEKDAY_NAMES,
)
from gateway.runtime.text import HAN_CLASS

__all__ = ["MY_SOMEONE_ZH", "PEOPLE_ZH", "PRONOUN_EN", "PRONOUN_ZH", "SWITCH_CLASSES", "Ended", "ended_of", "is_about", "ordered_terms", "terms"]

#: English words that name no topic (articles, pronouns, auxiliaries, fillers): never a
#: shared term.
STOPWORDS_EN = frozenset(
    "a an the to of and or in on at for with from by as is am are was were be been being it its it's i i'm i've "
    "me my mine we we're our ours you your he his him she her they them their this that these those so just "
    "do does did doing have has had having not no nor any anymore more longer now really much very all some "
    "one other there then than also still even ever get got getting go going went make made thing things stuff "
    "like lot lots bit kind sort about up out over into onto off again since ago last week weeks month months "
    "year years day days time times can could would will should might must don't doesn't didn't can't won't "
    "isn't aren't wasn't weren't anyway honestly actually basically finally totally".split())
#: Chinese characters that carry grammar, not topic: a bigram holding one is no term
#: (pronouns, particles, negation, 把 / 被, and the measure words 个 辆 只 杯 瓶 件 位:
#: "那辆车" and "我的车" share 车).
FUNCTION_ZH = frozenset("我你您他她它的了是也都就和很太这那们吗呢吧啊不还再已把被给让个一在着过辆只杯瓶件位")

_CJK_RUN = re.compile(f"[{HAN_CLASS}]+")
_TERM = re.compile(f"[{HAN_CLASS}]+|[a-z][a-z'-]*[a-z]|[a-z]")
_STOP_AT = re.compile(
    r"\s+(?:and|but|now|because|since|so|anymore|any\s+more|any\s+longer|last|this|ago|after|when|which|who|"
    r"yesterday|today|tonight|recently|lately|completely|entirely|altogether|cold\s+turkey|for\s+(?:good|now|a\s+while)|"
    r"(?:in|on|at|during|over|back\s+in|since)\s+(?:the\s+)?(?:\d+|jan\w*|feb\w*|mar\w*|apr\w*|may|jun\w*|jul\w*|aug\w*|"
    r"sep\w*|oct\w*|nov\w*|dec\w*|spring|summer|autumn|fall|winter|" + WEEKDAY_EN + r"s?|"
    r"weekend|new\s+year|christmas))\b.*$", re.IGNORECASE)
#: At most this many words of an English ended phrase are kept (a cue's object is a
#: short noun or verb phrase; the rest of the clause says something else).
PHRASE_WORDS = 6
#: Characters before a cue read for its subject (the start of its clause, bounded so the
#: work per cue is constant).
LOOKBACK = 60

#: Who a clause is about (shared with :mod:`gateway.memorization.clauses`, which reads
#: the subject of a statement the same way): a bare pronoun, the user's people (zh:
#: :data:`gateway.memorization.lexicon.PEOPLE_ZH`, re-exported here).
PRONOUN_EN = re.compile(r"^(?:he|she|they|he's|she's|they're|hes|shes|theyre|his|her|their|it's)\b", re.IGNORECASE)
#: Someone of the user's after 我 / 我的 / 我们家 (group ``who``: the person word, or a
#: one-character sibling, :data:`gateway.memorization.lexicon.SIBLING_ZH`: "我弟").
MY_SOMEONE_ZH = re.compile(r"我(?:的|们|们家的?|家的?)?(?P<who>" + PEOPLE_ZH + "|" + SIBLING_ZH + ")")
#: The third-person pronouns of Mandarin, Cantonese (佢, 佢哋) and Wu (伊, before a verb or
#: a copula: not the 伊 of a name, 伊朗, 伊利).
PRONOUN_ZH = re.compile(r"^(?:他|她|它|他们|她们|佢|伊(?=[是在讲话说也就又还老一不要会个们搭拉]))")
#: A clause led by a person word with no 我 ("男朋友不读研了"): Chinese drops the
#: possessor of kin when the speaker's own is meant, so it is that person's.
_KIN_LED_ZH = re.compile(r"^(?P<who>" + PEOPLE_ZH + r")(?!呀|啊|的天)")

_OBJECT_EN = re.compile(
    r"\b(?:stopped(?!\s+(?:by|at|for|in|off|over|working)\b)|quit(?!\s+it\b)|gave\s+up(?:\s+on)?|"
    r"given\s+up(?:\s+on)?|got\s+rid\s+of|sold(?!\s+out\b)|no\s+longer|"
    r"(?<!'m\s)(?<!am\s)(?<!'re\s)(?<!are\s)(?<!is\s)(?<!'s\s)(?<!get\s)(?<!got\s)(?<!be\s)(?<!getting\s)(?<!been\s)"
    r"used\s+to|switched\s+from|moved\s+(?:out\s+of|away\s+from)|broke\s+up\s+with|cancel+ed|no\s+more(?!\s+than\b)|"
    r"(?:done|finished)\s+with|cut\s+out|dropped\s+out\s+of|(?:taking|took|taken)\s+a\s+break\s+from|paused|instead\s+of)"
    r"\s+(?P<x>[^,.;:!?()\n]{1,80})",
    re.IGNORECASE)
#: A pet or a thing given up for good ("we rehomed Biscuit", "gave away the piano"):
#: the object is one noun, a name or "the <noun>".
_GAVE_AWAY_EN = re.compile(r"\b(?:rehomed|re-homed|gave\s+away)\s+(?:our\s+|my\s+|the\s+|his\s+|her\s+)?(?P<x>[\w'-]+)", re.IGNORECASE)
#: A time that makes a substitution a one-off ("tea instead of coffee this morning"): no
#: ending.
_TEMPORARY_EN = re.compile(r"\b(?:today|tonight|this\s+(?:morning|afternoon|evening|week|weekend|time)|for\s+(?:now|a\s+(?:bit|while|few\s+\w+)|"
                           r"the\s+(?:day|week|weekend))|just\s+(?:once|for))\b", re.IGNORECASE)
#: A death said as a loss ("we lost Smudge in June", "lost our dog"): the lost one is a name
#: (capitalised) or a pet or person of the user's, never a thing ("we lost the match", "I
#: lost my keys"); the older memory must name them (``who``).
_LOST_EN = re.compile(r"\b(?:we|i|we've|i've)\s+(?:\w+\s+)?lost\s+(?:(?:our|my)\s+(?P<p>(?:old\s+)?(?:" + PETS_EN + "|"
                      + KIN_CLOSE_EN + r"))\b|(?P<n>(?-i:[A-Z][a-z]+))\b)", re.IGNORECASE)
_NOT_ANYMORE_EN = re.compile(
    r"\b(?:not|never|don't|dont|do\s+not|doesn't|does\s+not|didn't|can't|cannot|won't|isn't|aren't|i'm\s+not|am\s+not)"
    r"\s+(?P<x>(?:[\w'-]+\s+){0,4}?[\w'-]+)\s+(?:any\s?more|any\s+longer)\b",
    re.IGNORECASE)
_SUBJECT_EN = re.compile(
    r"(?:\b(?:my|our)\s+(?P<x>(?:[\w'-]+\s+){0,2}?[\w'-]+)|\b(?P<n>(?-i:[A-Z][a-z]+)))\s+"
    r"(?P<cue>moved\s+out|moved\s+away|passed\s+away|died|(?:is|are)\s+over)\b",
    re.IGNORECASE)
#: Capitalised words before "moved out" that name no one ("Finally moved out!": the user).
_NO_NAME = frozenset("i we he she they it finally just recently also so and but then now we've i've".split())
#: A Chinese phrase character: CJK, or a Latin letter or digit ("不用iPhone了").
_ZH = f"[{HAN_CLASS}A-Za-z0-9]"
_ENDED_ZH = re.compile(
    rf"(?:不再|已经不|再也不|没再|不想再)(?P<a>{_ZH}{{1,8}})"
    rf"|不(?P<b>{_ZH}{{1,6}}?)了"
    rf"|(?:戒了|卖了|退了|放弃了|停了|取消了)(?P<c>{_ZH}{{1,8}})"
    rf"|戒(?!指)掉?(?P<j>{_ZH}{{1,6}})"
    rf"|把(?P<d>{_ZH}{{1,8}}?)(?:戒|卖|退|停|放弃|取消)(?:掉)?了"
    rf"|以前(?P<e>{_ZH}{{1,8}})"
    rf"|从(?P<f>{_ZH}{{1,8}}?)(?:改成|换成|转成|换到|转到|改到)"
    rf"|(?P<g>{_ZH}{{1,6}}?)(?:改成|换成)"
    rf"|(?P<h>{_ZH}{{1,6}}?)(?:搬走|搬出去|搬出)了"
    rf"|(?P<i>{_ZH}{{1,6}}?)(?:已经)?(?:卖|戒|退|停)掉?了"
    rf"|(?P<k>{_ZH}{{1,6}}?)(?:先|暂时|就)?(?:放一放|放一下|放下了|搁置|搁下|暂停)了?"
)
#: A habit switched (Chinese): 改 / 换成 / 改成 / 现在只 / 现在都 + a verb of habit ("现在只喝红茶了",
#: "改骑车上班了"): what the user did with that verb before has ended, whatever its object
#: was. The older memory must state a habit with the same verb (:data:`_HABIT_ZH` a few
#: characters before it: "每天早上都要喝两杯美式"), so "我喜欢喝汤" is not retired.
_SWITCH_ZH = re.compile(r"(?:改成?|换成|转成|现在(?:只|都|就只|一般|基本)|如今只)(?P<v>[喝吃抽用骑开坐打练玩听看戴])")
_HABIT_ZH = r"(?:每天|天天|每周|每晚|每早|早上|晚上|平时|经常|常常|一直|总是|都要|都会|习惯|通常|一般)"
#: A habit switched to another of its kind (English and Chinese): "switched to green tea",
#: "took up swimming instead", "现在改游泳了", "换成茶了": a switch cue (*switch to*,
#: *instead*, 改 / 换成 / 改成 / 转成) with a member of a closed class of habits
#: (:data:`SWITCH_CLASSES`: what the user drinks, the exercise they do) says the habit of
#: that class the user had before has ended, whatever its member was (the grammar of
#: substitution: *instead* and *switch to* presuppose a replaced alternative of the same
#: kind; Swan, *Practical English Usage*, "instead"). The older memory must state a habit
#: (:data:`_HABIT_EN` / :data:`_HABIT_ZH`) with a member of the same class: "I drink 5
#: coffees a day", "每天下班去撸铁"; a liking ("I love tea") or a one-off is not retired.
SWITCH_CLASSES: tuple[tuple[str, str], ...] = (
    ("drink", r"\b(?:coffees?|espressos?|lattes?|cappuccinos?|americanos?|tea|teas|matcha|decaf|sodas?|colas?|coke|"
              r"energy\s+drinks?|beers?|wine|alcohol)\b|咖啡|美式|拿铁|奶茶|茶|可乐|啤酒|白酒|红酒"),
    ("exercise", r"\b(?:run|runs|running|jog|jogging|swim|swimming|gym|lifting|weightlifting|weights|yoga|pilates|cycling|"
                 r"spin|spinning|climbing|bouldering|boxing|crossfit|tennis|badminton|basketball|football|soccer|hiking|"
                 r"rowing|dancing|martial\s+arts|karate|judo)\b"
                 r"|跑步|慢跑|夜跑|跑[0-9一二三四五六七八九十几半]+(?:公里|千米|[kK])|游泳|健身|撸铁|举铁|瑜伽|普拉提|骑行|动感单车|攀岩|拳击|羽毛球|网球|"
                 r"篮球|足球|乒乓球|爬山|徒步|跳舞|广场舞|跳绳"),
    ("instrument", r"\b(?:piano|violin|viola|cello|guitar|drums|drum\s+kit|bass\s+guitar|keyboard|flute|clarinet|saxophone|sax|"
                   r"trumpet|trombone|ukulele|harp|oboe)\b|钢琴|小提琴|中提琴|大提琴|吉他|架子鼓|长笛|单簧管|萨克斯|小号|尤克里里|古筝|二胡|琵琶"),
)
_SWITCH_CUE_EN = r"(?:switched|switching|changed|moved|converted|gone|went|changing|swapped|swapping)\s+(?:over\s+)?to\s+(?:[\w'-]+\s+){0,2}?"
_SWITCH_CUE_ZH = r"(?:改成?了?|换成了?|转成了?|改为|换了?)(?:每天|每周|每晚|早上|晚上|周末|下班后?)*(?:去|练|做|喝|玩|打|学)?"
_SWITCH_CLASS_RE = tuple(
    (name, re.compile(rf"\b{_SWITCH_CUE_EN}(?P<m>{members})|(?P<n>{members})[^.;!?。；！？]{{0,30}}?\binstead\b"
                      rf"|\b(?:took|taken|taking)\s+up\s+(?:[\w'-]+\s+){{0,2}}?(?P<o>{members})[^.;!?。；！？]{{0,30}}?\binstead\b"
                      rf"|{_SWITCH_CUE_ZH}(?P<z>{members})", re.IGNORECASE))
    for name, members in SWITCH_CLASSES)
_SWITCH_MEMBERS = {name: re.compile(members, re.IGNORECASE) for name, members in SWITCH_CLASSES}
#: A habit said in English: a frequency ("a day", "every morning", "twice a week", "usually").
_HABIT_EN = (r"\b(?:every|each|daily|nightly|weekly|a\s+(?:day|week|night|morning)|per\s+(?:day|week)|usually|always|lessons|"
             r"most\s+(?:days|mornings|evenings|nights)|(?:once|twice|\w+\s+times)\s+a\s+week|"
             r"(?:i|we)\s+(?:\w+\s+)?(?:drink|do|go|play|run|swim|lift|train|practi[cs]e))\b")
_HABIT_EN_RE = re.compile(_HABIT_EN, re.IGNORECASE)
#: A Chinese habit cue a few characters before a class member ("每天下班去撸铁").
_HABIT_BEFORE_ZH = re.compile(_HABIT_ZH + r"[^，。,.!?！？；;]{0,8}?$")
#: A plan changed, said as such ("change of plans", "plans changed", 计划有变, 改计划):
#: what follows is the new plan, and an older plan of the user's (:data:`_PLAN_OLD`:
#: training for, going to, signed up, booked, 打算, 计划, 报了) that shares one of its
#: content terms (not a month or weekday: :data:`_PLAN_WORDS`) is the one it replaces
#: ("I'm training for the Chicago Marathon" / "change of plans: I got a spot in the
#: Berlin Marathon").
_PLAN_CHANGE = re.compile(r"\bchange\s+of\s+plans?\b|\bplans?\s+(?:have\s+|has\s+)?changed\b|\bchanged\s+(?:my|our)\s+plans?\b"
                          r"|计划(?:有变|变了|改了)|改(?:了)?计划", re.IGNORECASE)
_PLAN_OLD = re.compile(PLAN_CUES, re.IGNORECASE)
_PLAN_WORDS_EN = " ".join(("plan plans change changed now that that's trip", *MONTH_NAMES, *WEEKDAY_NAMES,
                           "week month year weekend")).lower()
#: Groups of :data:`_ENDED_ZH` whose phrase comes before the cue: only its part after
#: the last function character is the thing ("我上个月把车卖了": "车").
_BEFORE_ZH = frozenset("dfghik")
_CLAUSE_END = re.compile(r"[,.;:!?，。；：！？、\n]")
_USER_EN = re.compile(r"\b(?:i|i'm|im|i've|i'd|we|we're|we've|we'd|me|myself)\b", re.IGNORECASE)
#: Words that say where someone lives: what "moved out / 搬走了" ends.
_LIVING = re.compile(r"\b(?:live|lives|living|lived|stay|stays|staying|with\s+(?:us|me)|roommates?|flatmates?|"
                     r"housemates?)\b|住", re.IGNORECASE)


@dataclass(frozen=True)
class Ended:
    """One thing a statement says has ended: ``phrase`` as said, its content ``terms``
    (:func:`terms`), ``head``: the phrase's last term (the head of a verb's object comes
    last in English and in Chinese: "eat *dairy*", "喝*咖啡*"), ``living``: the older
    memory must say where someone lives (:data:`_LIVING`), ``who``: the terms of whoever
    the ending is about when that is not the user ("my sister moved out": ``sister``;
    "Maya doesn't eat dairy anymore": ``maya``), which the older memory must hold too;
    empty: the user's own ending, which never retires a memory about someone else;
    ``habit``: a switched habit (:data:`_SWITCH_ZH`), ``phrase`` its verb, which the older
    memory must state as a habit; ``plan``: a plan changed (:data:`_PLAN_CHANGE`);
    ``cancel``: the thing itself was called off (:data:`_CANCEL`: "cancelled the Lisbon
    trip", 取消了, 不去了), the only endings that retire an episode
    (:func:`gateway.memorization.neardup`)."""

    phrase: str
    terms: frozenset[str]
    head: str
    living: bool = False
    who: frozenset[str] = frozenset()
    habit: bool = False
    plan: bool = False
    cancel: bool = False


def _stem(word: str) -> str:
    """A crude English stem, the same for the forms a habit is said in: "running" /
    "runs" / "run" -> "run", "drives" / "driving" / "drive" -> "driv"."""
    word = word.strip("'-")
    if word.endswith("'s"):
        word = word[:-2]
    for suffix in ("ing", "ed", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            if suffix == "es" and not word[:-2].endswith(("s", "x", "z", "ch", "sh")):
                suffix = "s"
            if suffix == "s" and word.endswith("ss"):
                break
            word = word[:-len(suffix)]
            break
    if len(word) > 3 and word[-1] == word[-2] and word[-1] not in "lsz":
        word = word[:-1]
    if len(word) > 3 and word.endswith("e"):
        word = word[:-1]
    return word


#: :data:`_PLAN_WORDS_EN` as terms (stemmed): never what two plans share.
_PLAN_WORDS = frozenset(_stem(w) for w in _PLAN_WORDS_EN.split())


def ordered_terms(text: str) -> list[str]:
    """The content terms of ``text`` in the order they occur: lower-cased English words
    not in :data:`STOPWORDS_EN`, stemmed (:func:`_stem`), and the bigrams of each run of
    CJK characters that hold no :data:`FUNCTION_ZH` character (a character between two
    function characters is a term of its own: "把烟戒了": "烟"). Linear in ``len(text)``."""
    folded = text.casefold().replace("\u2019", "'")
    out: list[str] = []
    for match in _TERM.finditer(folded):
        token = match.group()
        if not _CJK_RUN.match(token):
            if token not in STOPWORDS_EN and len(token) > 1:
                out.append(_stem(token))
            continue
        content = [c not in FUNCTION_ZH for c in token]
        for i, char in enumerate(token):
            if not content[i]:
                continue
            if i + 1 < len(token) and content[i + 1]:
                out.append(token[i:i + 2])
            elif not (i > 0 and content[i - 1]):
                out.append(char)  # a lone content character
    return [t for t in out if t]


def terms(text: str) -> frozenset[str]:
    """:func:`ordered_terms` as a set."""
    return frozenset(ordered_terms(text))


def _phrase_en(raw: str) -> str:
    words = _STOP_AT.sub("", raw.strip()).split()
    return " ".join(words[:PHRASE_WORDS])


#: Chinese time words: never the thing that ended ("现在改成每天早上跑五公里": 现在 is when,
#: not what; the phrase before 改成 is then no ended thing), and the event times of
#: :data:`gateway.memorization.lexicon.PAST_TIME_ZH` (前几天, 上午, 周三).
_TIME_ZH = re.compile(r"现在|如今|目前|最近|今天|明天|昨天|今年|去年|明年|以前|之前|后来|平时|每天|早上|晚上|周末|[上下这]个?(?:周|月|星期)|"
                      + PAST_TIME_ZH)


#: A cue that calls the thing itself off (a trip, a booking, a class): "cancelled",
#: "called off", 取消, 退了 (a ticket returned), 不去 ... 了. What such a cue names is an
#: event, which it ends; a possession sold or a habit stopped ends no episode that
#: happened with it ("sold the boat" after "took the boat down the Madison").
_CANCEL = re.compile(r"^(?:cancel|call(?:ed)?\s+off)|^取消|^退了|^不去", re.IGNORECASE)


def _ended(phrase: str, living: bool = False, who: frozenset[str] = frozenset(), cancel: bool = False) -> Ended | None:
    found = ordered_terms(_TIME_ZH.sub(" ", phrase))
    return Ended(phrase, frozenset(found), found[-1], living, who, cancel=cancel) if found else None


def _subject(text: str, start: int) -> frozenset[str] | None:
    """Whose ending the cue at ``start`` states, from the words before it in its clause:
    the user (empty set) when they hold I / we / 我 (not 我<家人>, nor a clause led by a
    bare person word: 男朋友, 老公) or nothing that names anyone (a dropped subject: "Finally sold the car", "上个月不喝咖啡了"); else the
    terms naming the other one ("my husband", "Maya", 我老公); None for a bare pronoun
    (he / she / 他 / 她: whom it means is in another sentence)."""
    clause = _CLAUSE_END.split(text[max(0, start - LOOKBACK):start])[-1].strip()
    if _CJK_RUN.search(clause):
        if PRONOUN_ZH.search(clause):
            return None
        someone = MY_SOMEONE_ZH.search(clause) or _KIN_LED_ZH.match(clause)
        if someone:
            return frozenset({someone.group("who")})
        return frozenset()
    if _USER_EN.search(clause):
        return frozenset()
    if PRONOUN_EN.search(clause) or re.search(r"\b(?:he|she|they|it)\b", clause, re.IGNORECASE):
        return None
    return terms(clause)


def _tail(phrase: str) -> str:
    """``phrase`` after its last :data:`FUNCTION_ZH` character (all of it when that is
    its last character or it has none)."""
    cut = max((i for i, c in enumerate(phrase) if c in FUNCTION_ZH), default=-1)
    return phrase[cut + 1:] or phrase


def ended_of(text: str) -> tuple[Ended, ...]:
    """What ``text`` says has ended (module docstring), in order; empty when it says no
    ending or the ended phrase has no content term ("I quit, lol"). Linear in
    ``len(text)`` (each cue reads back at most :data:`LOOKBACK` characters)."""
    found: list[Ended | None] = []
    temporary = bool(_TEMPORARY_EN.search(text))
    for match in [*_OBJECT_EN.finditer(text), *_NOT_ANYMORE_EN.finditer(text), *_GAVE_AWAY_EN.finditer(text)]:
        who = _subject(text, match.start())
        if match.group().casefold().startswith("instead") and temporary:
            continue  # "tea instead of coffee this week": a one-off, nothing ended
        if who is not None:
            phrase = match.group("x")
            found.append(_ended(_phrase_en(phrase) if match.re is _OBJECT_EN else phrase, who=who,
                                cancel=bool(_CANCEL.match(match.group()))))
    for match in _LOST_EN.finditer(text):
        lost = match.group("p") or match.group("n")
        if lost.casefold() not in _NO_NAME:
            found.append(_ended(lost, who=terms(lost)))
    for match in _SUBJECT_EN.finditer(text):
        phrase = match.group("x") or match.group("n")
        if phrase.casefold() in _NO_NAME:
            continue
        found.append(_ended(phrase, living=match.group("cue").lower().startswith("moved"), who=terms(phrase)))
    for match in _ENDED_ZH.finditer(text):
        name = match.lastgroup or ""
        phrase = _tail(match.group(name)) if name in _BEFORE_ZH else match.group(name)
        if name == "h":  # X 搬走了: X is who moved
            found.append(_ended(phrase, living=True, who=terms(phrase)))
            continue
        who = _subject(text, match.start())
        if who is not None:
            found.append(_ended(phrase, who=who, cancel=bool(_CANCEL.match(match.group()))))
    for name, pattern in _SWITCH_CLASS_RE:
        for match in pattern.finditer(text):
            if temporary and not match.group("z"):
                continue  # "decaf instead of coffee this week": a one-off (English only: 今天 is not read)
            who = _subject(text, match.start())
            if who is not None:
                member = next(g for g in match.groups() if g)
                found.append(Ended(member, frozenset({f"class:{name}"}), f"class:{name}", who=who, habit=True))
    change = _PLAN_CHANGE.search(text)
    if change and _subject(text, change.start()) is not None:
        shared = frozenset(t for t in ordered_terms(text[change.end():]) if t not in _PLAN_WORDS
                           and not (_CJK_RUN.match(t) and (len(t) < 2 or set(t) & set("改去换"))))
        if shared:
            found.append(Ended(change.group(), shared, "plan", plan=True))
    for match in _SWITCH_ZH.finditer(text):
        who = _subject(text, match.start())
        if who is not None:
            verb = match.group("v")
            found.append(Ended(verb, frozenset({verb}), verb, who=who, habit=True))
    return tuple(e for e in found if e is not None)


def is_about(ended: Ended, older: str) -> bool:
    """``older`` (an earlier memory's text) is about ``ended``: it holds ``ended.head``
    and at least half (rounded up) of ``ended.terms`` (a lone CJK character counts when
    ``older`` holds it anywhere: "烟" in "抽烟"), every term of ``ended.who`` and, when
    ``ended.living``, says where someone lives. A switched habit of a class
    (``head`` ``class:<name>``, :data:`SWITCH_CLASSES`) is about ``older`` when ``older``
    names a member of the class as a habit (a frequency beside it). (Whether ``older`` is about someone else
    of the user's is the caller's test: :func:`gateway.memorization.neardup`.)"""
    held = terms(older)
    if ended.plan:
        return bool(_PLAN_OLD.search(older)) and bool(ended.terms & held)
    if ended.habit and ended.head.startswith("class:"):  # a habit of the class, with another or the same member
        members = _SWITCH_MEMBERS[ended.head[len("class:"):]]
        found = list(members.finditer(older))  # a habit cue just before a member (zh), or anywhere beside one (en)
        habitual = any(_HABIT_BEFORE_ZH.search(older[max(0, m.start() - 24):m.start()]) for m in found) or \
            (bool(found) and bool(_HABIT_EN_RE.search(older)))
        return habitual and (not ended.who or ended.who <= held)
    if ended.habit:
        said = re.search(_HABIT_ZH + r"[^，。,.!?！？；;]{0,6}?" + re.escape(ended.head), older)
        return bool(said) and (not ended.who or ended.who <= held)
    folded = older.casefold()
    shared = {t for t in ended.terms if t in held or (len(t) == 1 and _CJK_RUN.match(t) and t in folded)}
    if ended.head not in shared or len(shared) < (len(ended.terms) + 1) // 2:
        return False
    if ended.who and not ended.who <= held:
        return False
    return not ended.living or bool(_LIVING.search(older))
