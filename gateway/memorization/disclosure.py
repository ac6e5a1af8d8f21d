"""Self-disclosure: which parts of a user's turn are worth remembering, with no model.

Everyday assistant chats are mostly requests ("What should we eat tonight?"), with facts
about the user in passing ("I've been vegetarian since last year, what can I cook with
lentils?"). Storing whole turns stores the requests and serves them back as "what you
remember". This module splits a turn into clauses and keeps the clauses in which the
user tells something about themselves, their people, pets, health, diet, home, work,
plans, possessions, dates or lasting preferences (the kinds of user information seed
000 P3 / seed 002 §5 call the profile), in the user's own words.

Steps (:func:`analyse`), each linear in the text (compiled regular expressions with no
nested quantifiers, one pass over the clauses):

1. **Clauses** (:func:`clauses`): sentences end at ``. ! ? 。 ！ ？ ; ； … ～`` and line
   breaks ("Went vegan last month… any swap for my omelette?" is a statement, then a
   question; not a decimal point, "1.4"); a sentence is cut at commas and colons (``, ，、 :``;
   not a time of day, "8:15"), at a dash before a request
   ("head of platform now — can u help me..."), before "and" that starts a clause of
   its own (a noun phrase and a finite verb: "We live in Tucson and the grandkids are
   visiting"), at a space between two Chinese
   characters (typed instead of a comma: "车卖了 现在坐地铁") or after a Latin word glued to a
   Chinese character ("主要写java 老板想..."; not "我用 Python 写", spaced Latin words), and before "but / so / and
   then" (not after a copula or "feel": in "I'm so relieved" "so" is a degree adverb) and
   但是 / 所以 / 不过 / 可是. A clause remembers whether its sentence ended in a question mark
   (only the sentence's last clause is the question: "I'm vegetarian, what can I cook?").
2. **What each clause is** (:func:`clause_kind`), first match wins:
   ``small_talk`` (:func:`gateway.memorization.salience.is_small_talk`, plus "I see",
   "I think so", "我知道了"); a liking or standing instruction
   (:data:`gateway.memorization.salience.PREFERENCE_CUES`: "keep it short", "请回答简洁一点")
   is a ``disclosure``; ``request`` (checked before ``question``: "Can you write me a
   poem?" is a request): an imperative first word "give / tell
   / write / recommend", "can you", "please", "I'd like / I want / I need + a thing or
   you", "I'm looking for", "help me", 帮我 请 给我 推荐 我想要 我需要; ``question`` (the
   sentence's question mark, an interrogative or auxiliary first word, 吗/呢 at the end,
   a Chinese question word: 什么 怎么 哪 几 多少 能不能 ... outside "什么都" and "前几天",
   with the colloquial 啥 (什么) and 干嘛 outside "啥都"; a
   clause that starts with "any": "any easy swap for..."); ``meta`` (talk
   about the conversation: "I have a question", "I'll try that", "that sounds good",
   a reaction with its "I" dropped, "love it", and a judgement of the assistant's words,
   "你说得对", "说到我心坎里了", any Chinese clause led by 你 / 您: a statement about the
   other side is no fact about the user);
   a first-person statement after a mirative lead ("turns out", "just found out":
   :data:`_MIRATIVE_EN`) is a ``disclosure`` even with "??" at its end;
   ``disclosure`` (a first-person statement: the clause starts, after a discourse word
   such as "btw / also / since / because / as / 其实 / 因为 / 对了" or a fronted time
   ("last weekend", "yesterday"), with I / my / we /
   our / 我 / 我们 / 咱, or with a past tense whose "I" was dropped ("Ran my first 10k
   on Sunday", "Had knee surgery in March": :data:`_DROPPED_I_EN`; not after a statement
   with a subject of its own, not about the reply, "tried that"), or names "my <someone>",
   a bare "Mom" / "Grandpa" leading the clause, or 我<家人> anywhere, or "As a nurse"
   / 作为一名护士; a Chinese clause without a subject but with a durable cue, "在上海工作",
   "血压有点高", "闺女考上了" (the user's body, people, possessions, job), is the user's
   too: Chinese drops the subject); so is a Chinese clause with no subject that opens the
   turn (nothing but small talk before it: the zero subject is the speaker, Li & Thompson
   1981, ch. 24) and tells a change with the sentence-final 了 ("换平台了", "团团8个月了"), an
   ongoing activity with 在 ("还在喂母乳"), a trip planned for a coming time ("下个月去新加坡
   开会"), a trade ("跑外卖的") or a pseudo-cleft ("快递用的中通"), and any Chinese clause
   in a slot's own words ("二战考研") or naming a disease by its -炎 ("手腕腱鞘炎"); a bare
   number ("43") is ``other`` (an answer), 还是 before a negation is "still" ("还是没好"),
   not an alternative question, and an estimate with 吧 ("一百来个吧") asks nothing;
   anything else is ``other``. Asks and small talk are also told by their grammar (each
   rule cites its source where it is defined): degree questions 多 + adjective and 几 + a
   measure word, a clause-final V-没, a parallel A 还是 B (:func:`_alternative_zh`), a wish
   for something the assistant hands over (:data:`_ARTEFACT_ZH`), an object put first before
   帮我 / 给我, leave-taking as the turn's last clause (:data:`_LEAVE_ZH`), an exclamation
   judging a thing (:data:`_EVALUATIVE_ZH`), a 的 phrase after an ask (:data:`_SPEC_ZH`); in
   English a revision of the reply (:data:`_REVISION_EN`, :data:`_COMPARATIVE_EN`), a verbless
   query (:data:`_QUERY_NP_EN`), a reaction to the reply (:data:`_REACTION_EN`) and a noun
   phrase that is the topic or a constraint of an ask (:func:`_part_of_ask_en`).
3. **The memory** (:func:`analyse`): the disclosure clauses, and with them the turn's
   ``other`` clauses that are statements (a finite verb: "It felt welcoming; I want to
   study counseling next"), joined in their order with the separator they had. A clause that starts with he / she / they / 他 / 她 / 它 keeps
   the clause before it (its antecedent: "a gift for my wife, she loves gardening").
4. **Kind of memory** (seed 002 §3.2: the profile, seen by every friend of the user, is
   what holds about the user, their basic attributes and likes; events are episodes):
   a memory with a disclosure is *durable* (profile) unless it tells an episode
   (:func:`is_episode`): it names a one-off time (:data:`gateway.memorization.salience.EVENT_TIME`,
   :data:`ONE_OFF_TIME`: yesterday, last weekend, this morning, 昨天, 上周末, 今天早上), a
   one-off activity (:data:`ONE_OFF_ACTIVITY`: went to, watched, had a great dinner, 去了,
   吃了) or a passing feeling (:data:`MOMENT`: exhausted, 好累) and no state, habit or
   change (:data:`STATE`: now, since, anymore, every, 现在, 已经, 开始, 每天;
   :data:`CHANGE`: moved, started, quit, 搬到, 辞职): "I'm colorblind", "my son just got
   braces" and "I moved to Berlin last month" (keeping its date) are profile, "I went to
   a jazz concert yesterday" is an event. A memory that tells only how the user is at the
   moment, a task just finished or a remark about the listener
   (:func:`gateway.memorization.salience.is_passing`: 我这两天心里有点忐忑, 初稿写完了, "just
   clocked off, totally drained", "you're so patient with me": every piece of it is such) is
   an event too, unless it has a slot, names one of the user's people by name, tells a
   plan or is one of the lasting kinds below (a condition, a death, an ending). A statement about something else (no
   disclosure in the turn: :attr:`Analysis.statement`) is durable only when it names a lasting topic
   (:data:`DURABLE_EN` / :data:`DURABLE_ZH`) and is not anchored to a day unless it
   says the lasting thing changed.
   A lasting condition (:data:`_CONDITION`: an allergy, an intolerance, a diagnosis) is
   durable even when it was found out in an episode ("ate shrimp last weekend and
   found out I'm allergic").
   A death among the user's people or pets (:data:`_DEATH`: "we lost Biscuit on
   Saturday", "my grandpa passed away", 外婆去世了) is durable whatever its date: who
   their people and pets are has changed for good.
5. **Slot** (:func:`slot_of`): a statement about where the user lives, their work,
   studies, diet, relationship status, vehicle or commute, work shift, a child's school or a
   pregnancy has a slot (and is durable, whatever its date); a later statement in the
   same slot supersedes the earlier (:mod:`gateway.memorization.neardup`): the same
   attribute with a new value needs no change word ("we ended up buying a Mazda" after
   "my Honda Civic..."). Each slot's vocabulary is the attribute's own words (a job
   title, "internship", "promoted", 升主管, 全职妈妈; a home "in <Place>", a home bought
   somewhere, 在三亚买了套房; car makes; "bike to work", 通勤, 现在坐地铁; "switched
   schools", 转学, 考取; "seeing someone", "we split up"; 导师, 研二), and whose
   statement it is is read per clause (:func:`slot_of`: "our drummer moved to Calgary"
   is no move of the user's). A statement that something ended ("I stopped
   running", "我不喝咖啡了": :func:`gateway.memorization.changes.ended_of`), or that a
   habit switched within its class ("switched to green tea", "现在改游泳了":
   :data:`gateway.memorization.changes.SWITCH_CLASSES`), is durable
   too, whatever its date, and supersedes the older memory about the ended thing.

What this cannot do (README "What verbatim cannot catch"): facts stated only in the
third person without "my" ("Maya can't have peanuts" before Maya was introduced),
pronouns across turns, sarcasm and hypotheticals phrased as statements, changes that
name neither the fact's slot nor its words ("that's over now"), and facts that need the assistant's
words to be understood unless the turn answers the assistant's question (kept with it).
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from gateway.memorization.changes import MY_SOMEONE_ZH as _MY_SOMEONE_ZH
from gateway.memorization.changes import PRONOUN_EN as _PRONOUN_EN
from gateway.memorization.changes import PRONOUN_ZH as _PRONOUN_ZH
from gateway.memorization.changes import ended_of
from gateway.memorization.lexicon import (
    ADVISOR_EN,
    CAR_MAKES_EN,
    CHRONIC_EN,
    CHRONIC_ZH,
    COMPARATIVES_AFTER_MAKE_EN,
    COMPARATIVES_EN,
    COMPLAINTS_EN,
    COMPLAINTS_ZH,
    FEELINGS_EN,
    FEELINGS_TOLD_EN,
    FUTURE_TRIP_ZH,
    GRADE_EN,
    HOMEMAKER_EN,
    HOMEMAKER_ZH,
    KIN_BARE_EN,
    KIN_BARE_ZH,
    LANGUAGE_NAMES,
    MONTH_ABBR_EN,
    MONTH_NAMES,
    OCCUPATIONS_EN,
    OCCUPATIONS_ZH,
    OUT_OF_WORK_EN,
    PAST_TIME_ZH,
    PEOPLE_EN,
    PLAN_CUES,
    PROMOTED_EN,
    PROMOTED_ZH,
    RUN_ON_PEOPLE_EN,
    THE_HOUSEHOLD_EN,
    TITLES_ZH,
    VEHICLES_EN,
    WEEKDAY_ABBR_EN,
    WEEKDAY_EN,
    WEEKDAY_NAMES,
    WORK_LEFT_ZH,
    alternation,
)
from gateway.memorization.lexicon import PEOPLE_ZH as _PEOPLE_ZH
from gateway.memorization.salience import EVENT_TIME, PREFERENCE_CUES, is_passing, is_small_talk
from gateway.memory.records import MemoryType
from gateway.runtime.text import HAN_RE

__all__ = [
    "CHANGE", "CHRONIC", "DURABLE_EN", "DURABLE_ZH", "HEALTH", "MOMENT", "ONE_OFF_ACTIVITY", "ONE_OFF_TIME", "STATE", "Analysis", "Clause",
    "ClauseKind", "about_someone", "analyse", "clause_kind", "clauses", "elided_reply", "is_episode", "keeps_other_fact", "keeps_partner", "same_slot",
    "slot_of", "slots_of",
]

ClauseKind = Literal["disclosure", "question", "request", "small_talk", "meta", "other"]

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
#: are :data:`gateway.memorization.lexicon.RUN_ON_PEOPLE_EN`.
_CLAUSE_CUT = re.compile(r"\s*(?:[,，、：]|(?<!\d):|:(?!\d))\s*|\s+(?=and\s+(?:the|my|our|his|her|their)\s+(?:[\w'-]+\s+){0,2}?"
                         r"(?:is|are|was|were|has|have|had|will|keeps?|gets?)\b)|\s*[—–]\s*(?=(?:can|could|would|will|what|how|please|pls|any|anything|help|is\s+there)\b)|(?<=[\u3400-\u9fff])\s+(?=[\u3400-\u9fff])|(?P<mixed>(?<=[A-Za-z0-9])\s+(?=[\u3400-\u9fff]))|(?<!'m)(?<!\bim)(?<!\bam)(?<!\bis)(?<!'s)(?<!\bare)(?<!'re)(?<!\bwas)(?<!\bwere)(?<!\bfeel)(?<!\bfelt)(?<!\bbeen)(?<!\bfeeling)\s+(?=(?:but|so|and\s+then|and\s+(?:can|could|what|how|please|i'd\s+like))\b)"
                         r"|(?=但是|所以|不过|可是)"
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

#: A fronted time before the subject ("Last weekend I ate shrimp..."): skipped when
#: looking for the subject (a clause that is only a time, "last spring", stays an answer).
_TIME_LEAD_EN = re.compile(r"^(?:yesterday|today|tonight|(?:last|this|next)\s+(?:week|weekend|month|year|night|morning|summer|"
                           r"winter|spring|fall|autumn)|(?:this|that)\s+(?:morning|afternoon|evening))\b[\s,]+(?=\S)", re.IGNORECASE)
_FIRST_PERSON_EN = re.compile(r"^(?:i|i'm|im|i've|ive|i'd|i'll|my|we|we're|we've|we'd|our|me\s+and|mine)\b", re.IGNORECASE)
_PEOPLE_EN = PEOPLE_EN
#: Someone of the user's: "my / our <person>" anywhere, "the kids", "the wife", and a
#: parental or grandparental kin term with no determiner leading the clause ("Mom got
#: diagnosed with diabetes", "Grandpa's 90 on Friday"): used bare, such a term is a name for
#: the speaker's own relative (Dahl & Koptjevskaja-Tamm 2001 on kin terms as proper names).
_MY_SOMEONE_EN = re.compile(r"\b(?:my|our)\s+(?:\w+\s+){0,2}" + _PEOPLE_EN + r"\b"
                            r"|\bthe\s+" + THE_HOUSEHOLD_EN + r"\b"
                            r"|^" + KIN_BARE_EN + r"(?:'s)?\s+(?=\w)", re.IGNORECASE)
_AS_A_EN = re.compile(r"^as\s+an?\s+\w+", re.IGNORECASE)
#: English past-tense forms that are not "-ed" (the irregular verbs of everyday narration;
#: Quirk et al. 1985, 3.14 on irregular verbs). ``put``, ``read``, ``let``, ``set``, ``cut``
#: and ``hit`` are left out: their past is their base, an imperative ("put it in the oven").
_IRREGULAR_PAST_EN = (
    "ate|awoke|became|began|bit|blew|broke|brought|built|bought|came|caught|chose|dealt|did|drank|drew|drove|dug|"
    "fed|fell|felt|fought|found|flew|forgot|froze|gave|got|grew|had|heard|held|hid|hung|hurt|kept|knew|laid|led|left|"
    "lent|lost|made|meant|met|paid|quit|ran|rang|rode|rose|sang|sank|sat|saw|sent|shook|shot|shut|slept|sold|spent|"
    "split|spoke|stole|stood|stuck|swam|swore|took|taught|threw|told|tore|understood|was|went|woke|won|wore|wrote|"
    "been|broken|gotten|taken|seen|done|eaten|given|driven|written|spoken|chosen|stolen|thrown|worn|grown|known"
)
#: "-ed" words that are not past tenses, or whose past reading starts no narration
#: ("need", "indeed", "based on that", "compared to"): not read as a dropped "I".
_NOT_PAST_EN = ("need|needed|seed|feed|speed|bleed|breed|proceed|succeed|exceed|indeed|hundred|bed|red|shed|wed|ed|"
                "based|compared|assuming|supposed|related|given|interested|confused")
#: Words after an "-ed" form that make it read as an adjective or a passive ("stoked",
#: "fixed til next march", "tired of it", "married to a chef"): such an "-ed" form alone is no
#: past tense with a dropped "I"; a regular past counts only with an object or adverb after it.
_AFTER_PARTICIPLE_EN = "to|til|till|until|on|in|at|for|with|about|of|by|from|and|or|but|as|af|lol|tbh|now|rn|today|though"
#: A casual statement that drops its subject "I" ("Finally moved out!", "Got a new job",
#: "Just adopted a kitten", "Ran my first 10k on Sunday"): a past-tense verb first. English
#: diary and chat style drops the first-person subject of a declarative at the left edge
#: (Haegeman 1990 on diary drop; Weir 2012 on left-edge deletion); an imperative is a base
#: form, never a past tense, so a past tense first is a statement by the speaker. A past
#: tense whose object is the conversation ("tried that", "loved it", "read your answer")
#: is about the reply, not the user (:data:`_ABOUT_REPLY_EN`).
_DROPPED_I_EN = re.compile(
    r"^(?:(?:just|finally|recently|also|officially|only|actually|already|never|once|literally)\s+)?"
    r"(?:(?!(?:" + _NOT_PAST_EN + r")\b)[a-z]{2,}ed(?=\s+(?!(?:" + _AFTER_PARTICIPLE_EN + r")\b)[\w£$€#])|" + _IRREGULAR_PAST_EN
    + r"|started|moved|adopted|switched|signed|joined|"
    r"landed|passed|graduated|finished|booked|decided|turned|married|retired|proposed|enrolled|transferred|relocated)\b"
    r"|^(?:(?:just|finally|also|officially)\s+)?(?:going|heading|flying|moving|relocating)\s+(?!on\b|well\b|good\b|great\b|ok\b|crazy\b|nuts\b)"
    r"|^(?:(?:still|now)\s+)?(?:working|living|staying)\s+(?:at|in|with|from|as|nights|days|remotely|full-time|part-time)\b",
    re.IGNORECASE)
#: A self-description with "I'm" dropped, a bare role noun phrase with no verb ("arch
#: major at UT Austin", "sophomore", "night-shift nurse here"): read as :data:`_AS_A_EN`
#: ("As a nurse") is, the user's own role (:func:`clause_kind` checks there is no verb).
#: A past tense whose object is the reply or the conversation ("tried that", "loved it",
#: "read your answer", "did what you said"): meta talk, not a dropped "I" statement.
_ABOUT_REPLY_EN = re.compile(r"^(?:(?:just|finally|already|also|actually)\s+)?[a-z']+\s+(?:it|that|this|those|these|them|your|you|what\s+you)\b"
                             r"(?!\s+(?:is|was|are|were|to)\b)", re.IGNORECASE)
_ROLE_NP_EN = re.compile(r"^(?:an?\s+)?(?:[\w'-]+\s+){0,3}?(?:major|student|undergrad|grad\s+student|sophomore|freshman|"
                         r"postdoc|phd\s+candidate|resident|intern|retiree|dev|" + OCCUPATIONS_EN
                         + r")(?:\s+(?:at|in|from|for|with)\s+.{1,40}|\s+here)?$", re.IGNORECASE)
_FIRST_PERSON_ZH = re.compile(r"^(?:我|咱们|咱|俺)")
_AS_A_ZH = re.compile(r"^作为(?:一[名个位])?")
#: Someone of the user's introduced by name ("my husband Chris", "我女儿叫朵朵"): lasting.
_NAMED_PERSON = re.compile(r"\b(?:my|our)\s+(?:\w+\s+)?" + _PEOPLE_EN + r"(?:'s\s+name\s+is|\s+is\s+(?:called|named))?\s+(?-i:[A-Z][a-z]+)\b"
                           r"|\b(?:named|called)\s+(?-i:[A-Z][a-z]+)\b"
                           r"|我(?:的|家的?)?" + _PEOPLE_ZH + r"(?:的名字)?(?:叫|名叫)", re.IGNORECASE)

_QUESTION_START_EN = re.compile(
    r"^(?:what|what's|whats|why|how|how's|when|where|which|who|whom|whose|is|are|am|was|were|do|does|did|can|could|"
    r"would|will|should|shall|may|might|have|has|had|isn't|aren't|don't|doesn't|didn't|won't|wouldn't|shouldn't|"
    r"any|anything|is\s+there|are\s+there)\b",
    re.IGNORECASE,
)
#: A past auxiliary first ("had", "was", "did") with no question mark is a question only
#: when a subject follows it ("had you heard", "was it safe", "did my dad"): inversion is
#: what makes the question (Quirk et al. 1985, 11.5). Without one it is a statement with
#: its "I" dropped ("Had surgery on my knee in March", "Was at the vet all morning").
_PAST_AUX_EN = re.compile(r"^(?:had|was|were|did)\b", re.IGNORECASE)
_AUX_SUBJECT_EN = re.compile(r"^\w+\s+(?:i|you|u|he|she|it|we|they|there|this|that|these|those|your|my|his|her|their|our|"
                             r"the|anyone|anybody|someone|somebody|everyone|people)\b", re.IGNORECASE)
_QUESTION_IN_EN = re.compile(
    r"^i\s+(?:was\s+)?(?:wonder|wondering)\b|^i(?:'m|\s+am)\s+(?:not\s+sure|unsure|curious)\s+(?:how|what|whether|if|which|about|where|when|why)\b"
    r"|^i\s+(?:don't|do\s+not)\s+know\s+(?:how|what|whether|if|which|where|when|why)\b"
    r"|^(?:should|can|could|do|would)\s+i\b|^what\s+(?:should|can|could|do)\s+i\b"
    r"|^(?:just\s+)?wondering\b|^(?:not\s+sure|unsure|curious|no\s+idea|idk|dunno|i\s+dunno)\s+(?:how|what|whether|if|which|where|when|why)\b",
    re.IGNORECASE,
)
_REQUEST_EN = re.compile(
    r"^(?:please|pls|plz|kindly)\b|^(?:can|could|would|will)\s+(?:you|u)\b"
    r"|^(?:give|tell|show|write|make|suggest|recommend|list|explain|find|create|draft|plan|translate|summari[sz]e|check|"
    r"fix|compare|remind|help|send|book|order|describe|generate|calculate|convert|rewrite|edit|proofread|outline|"
    r"brainstorm|teach|walk\s+me|let\s+me\s+know|look\s+up|search|share|provide|recommend|name|pick|choose|design|"
    r"build|prepare|organi[sz]e|schedule|set|add|remove|update|turn|keep|include|use|try|go\s+ahead)\b"
    r"|^i(?:'d|\s+would)\s+(?:like|love|appreciate)\b(?!\s+to\s+(?:live|move|become|learn|visit|travel|retire)\b)"
    r"|^i\s+(?:want|need|require)\s+(?:you|a|an|some|the|your|help|ideas|advice|tips|suggestions|recommendations|"
    r"options|recipes?|something|anything|more|to\s+know|to\s+find|to\s+figure|to\s+get\s+(?:a|an|some|ideas|help)|"
    r"to\s+ask)\b"
    r"|^(?:need|want|looking\s+for)\s+(?:a|an|some|help|ideas|advice|tips|suggestions|recommendations|recipes?)\b"
    r"|^i(?:'m|\s+am)\s+(?:looking|searching)\s+for\b|^i(?:'m|\s+am)\s+trying\s+to\s+(?:figure|find|decide|choose|"
    r"work\s+out|understand|pick)\b|^help\s+me\b|^let's\b|^lets\b"
    r"|^(?:now|then)\s+(?:do|make|write|give|try|add|redo|translate)\b|^(?:do|redo)\s+(?:one|another|the\s+same|it\s+again)\b"
    r"|^(?:another|one\s+more|a\s+different|a\s+new)(?:\s+(?:one|version|option|idea|list|recipe))?\W*$"
    r"|^(?:now\s+|but\s+)?in\s+(?:" + "|".join(LANGUAGE_NAMES) + r"|"
    r"bullet\s+points|a\s+table|table\s+form|plain\s+english|simple\s+terms)\b|^(?:eli5|tldr|tl;dr)\b"
    r"|^(?:the\s+)?same(?:\s+thing|\s+one|\s+again)?\s+(?:but|for|with|without|in)\b",
    re.IGNORECASE,
)
_META_EN = re.compile(
    r"^i\s+have\s+(?:a|another|one\s+more|some)\s+(?:quick\s+)?(?:question|request|favou?r|idea|thought)s?\b"
    r"|^i(?:'ll|\s+will)\b(?!.*\b(?:next|tomorrow|tonight|on\s+" + WEEKDAY_EN + r"|in\s+" + MONTH_ABBR_EN + r"\w*)\b)"
    r"|^i\s+(?:think|guess|suppose|agree|disagree|see|understand|get\s+it|know|mean|bet|hope\s+so|appreciate)\b"
    r"|^i\s+hope\s+(?:i'm|i\s+am|i\s+did|this|that|it|you)\b"
    r"|^i(?:'m|\s+am)\s+(?:back|here|ready|done|confused|lost|sorry|glad|happy\s+to\s+hear|good|fine|ok|okay|not\s+sure)\s*$"
    r"|^(?:that|this|it)(?:'s|\s+is|\s+was|\s+sounds|\s+looks|\s+seems|\s+makes)\s+(?:so\s+|really\s+|very\s+|super\s+)?"
    r"(?:good|great|helpful|useful|perfect|fine|ok|okay|nice|awesome|amazing|interesting|cool|fair|true|right|sense|smart|"
    r"clever|brilliant|funny|hilarious|lovely|wonderful|exactly|a\s+(?:good|great|nice)\s+(?:idea|point|tip))\b"
    r"|^(?:sounds|looks)\s+(?:good|great|fine|nice|perfect)\b|^(?:good|nice|great|glad)\s+to\s+(?:know|hear)\b"
    r"|^makes\s+sense\b|^hope\s+(?:you're|you\s+are|all\s+is|you\s+had)\b|^wish\s+me\s+luck\b|^fingers\s+crossed\b"
    r"|^you(?:'re|\s+are)\s+(?:a|the|so)?\s*(?:lifesaver|star|legend|best|genius|amazing|awesome|great|helpful|right)\b"
    r"|^thank(?:s|\s+you)\b"
    r"|^(?:i\s+)?(?:like|love|hate)\s+(?:it|that|this|these|those|them|your|the\s+(?:idea|first|second|last|third))\b"
    r"|^my\s+(?:question|request|point|bad)\b"
    r"|^(?:a\s+|one\s+)?(?:quick|small|random|dumb|silly|stupid|another|weird|follow[\s-]?up)\s+(?:question|q)\b"
    r"|^(?:(?:this\s+is\s+)?my\s+)?first\s+time\s+(?:using|trying|on|here|asking|talking)\b"
    r"|^(?:i'?m\s+)?not\s+(?:sure|convinced)\s+about\s+(?:that|this|it|those|these)\b"
    r"|^i\s+(?:love|like|adore|hate)\s+(?:you|u)\b|^(?:that'?s|that\s+is|this\s+is|not)\s+(?:not\s+)?what\s+i\s+(?:meant|asked|wanted|said)\b"
    r"|^(?:nvm|never\s*mind)\b|^one\s+more\s+(?:thing|question|q)\b"
    r"|^(?:good|bad|nice)\s+(?:bot|call|point|one|catch)\b|^fair\s+(?:point|enough)\b|^(?:lifesaver|legend|appreciate\s+(?:you|u|it|that))\b"
    r"|^(?:it|that|this)\s+(?:still\s+)?(?:worked|works|helped|helps|did\s+(?:it|the\s+trick)|(?:doesn'?t|didn'?t|isn'?t|won'?t)\s+(?:work|help))\b"
    r"|^(?:still\s+)?(?:not|doesn'?t|didn'?t|isn'?t|won'?t)\s+(?:work|working|help|helping)\b",
    re.IGNORECASE,
)
#: A reaction to the reply that names nothing of the user's (:func:`clause_kind` checks):
#: thanks anywhere in the clause ("great ideas thank you", "thx these look good"); an
#: evaluation of the proposal with its subject dropped ("sounds like a plan"); a statement
#: about the listener, the second person as subject ("ur a lifesaver", "you rock", "u up?":
#: about the other side, as a Chinese clause led by 你); the speaker's next step with the
#: suggestion as its object ("gonna try that tonight", "will give it a go": the object is
#: the reply, as in "tried that"); leave-taking ("gotta go", "gonna go make dinner now":
#: a pre-closing, Schegloff & Sacks 1973).
_REACTION_EN = re.compile(
    r"\b(?:thanks|thank\s+(?:you|u)|thx|thnx|thanx|ty|tysm|tyvm)\b"
    r"|^(?:that\s+|this\s+|it\s+)?(?:sounds|looks|seems)\s+like\b"
    r"|^(?:you|u)(?:'re|re|\s+are|\s+r|\s+were|'ve\s+been|\s+have\s+been|\s+rock|\s+rule|\s+nailed|\s+saved|"
    r"\s+up|\s+there|\s+around|\s+awake|\s+busy|\s+(?:always|really|totally|literally)\s+\w+)\b|^ur\b|^youre\b"
    r"|^(?:(?:i'?m\s+|i\s+)?(?:gonna|going\s+to|will)|i'?ll|ill|gotta|got\s+to)\s+(?:\w+\s+)?"
    r"(?:try|give|do|use|make|test|check|read|look\s+into)\s+(?:it|that|this|those|these|them)\b"
    r"|^(?:(?:i'?m\s+|i\s+)?(?:gonna|going\s+to|gotta|got\s+to|have\s+to)\s+go(?:\s+(?!to\b)[a-z']+){0,3}"
    r"|(?:i'?m\s+)?off\s+to\s+(?:bed|sleep|work))\s*(?:now|rn)?\W*$",
    re.IGNORECASE,
)
#: "I love you": a liking whose object is the listener, a reaction, no preference.
_LOVE_YOU_EN = re.compile(r"\bi\s+(?:really\s+)?(?:love|like|adore)\s+(?:you|u)\b(?!\s*(?:r|'re|re)\b)", re.IGNORECASE)
#: A revision of the reply just given: "make it / keep this" + a comparative ("make it
#: shorter", "can you make that more formal"): the comparative's standard is the reply, a
#: one-off request, not a standing instruction ("keep answers short", "from now on ...").
_REVISION_EN = re.compile(
    r"^(?:(?:can|could|would|will)\s+(?:you|u)\s+)?(?:please\s+|pls\s+)?(?:make|keep)\s+(?:it|this|that|them|these|those)\s+"
    r"(?:a\s+(?:bit|little|lot)\s+|much\s+|way\s+|even\s+|slightly\s+)?"
    + alternation((*COMPARATIVES_EN, *COMPARATIVES_AFTER_MAKE_EN)) + r"\b(?!.*\b(?:from\s+now\s+on|always|in\s+(?:the\s+)?future|going\s+forward)\b)",
    re.IGNORECASE,
)
#: The same revision with "make it" dropped, a comparative leading a clause with no verb
#: ("shorter and with more emojis", "a bit longer maybe", "less formal pls").
_COMPARATIVE_EN = re.compile(
    r"^(?:(?:a\s+)?(?:bit|little|lot|tad|touch)\s+|much\s+|way\s+|even\s+|slightly\s+|maybe\s+|somewhat\s+)*"
    + alternation(COMPARATIVES_EN) + r"\b", re.IGNORECASE)
#: A verbless noun phrase typed as a query ("recipe for banana bread", "best way to clean a
#: cast iron pan", "cheap date ideas near downtown", "something quick for dinner"): a
#: non-clausal unit (Biber et al. 1999, 14.3) whose head is what is wanted, with a
#: postmodifier saying for what: an ask with "give me / what is" left out.
_QUERY_NP_EN = re.compile(
    r"^(?:[\w'$-]+\s+){0,4}?(?:ideas?|tips?|recipes?|suggestions?|recommendations?|advice|options?|alternatives?|"
    r"ways?|places?|things?|stuff|gifts?|books?|movies?|films?|shows?|songs?|podcasts?|games?|activities|exercises?|"
    r"snacks?|meals?|dinners?|lunch(?:es)?|breakfasts?|spots?|restaurants?|apps?|names?|quotes?|jokes?|examples?|"
    r"resources?|substitutes?|swaps?|dishes?|foods?|workouts?|stretches?|hikes?|trails?|destinations?|"
    r"versions?|lists?|menus?|schedules?|itinerar(?:y|ies)|checklists?|templates?|outlines?|summar(?:y|ies)|drafts?|"
    r"captions?|toasts?|speech|poems?|"
    r"something|anything)\s+(?:\w+\s+)?(?:for|to|that|like|near|under|with|without|about|in|on|from|which|other\s+than)\b"
    r"|^(?:(?!for\b|about\b|of\b|on\b)[\w'-]+\s+){0,2}(?:ideas|tips|recipes|suggestions|recommendations|recs|options|alternatives)\W*$"
    r"|^(?:something|anything)(?:\s+\w+){0,3}\W*$"
    r"|^(?:[\w'-]+\s+){0,4}(?:please|pls|plz)\W*$",
    re.IGNORECASE)
#: The user as I / me / we in a clause ("recipes for when I'm sick"): a verbless query that
#: says it is about the user; "my dad" alone (a query for someone, "gift ideas for my dad")
#: tells nothing unless it carries an attribute (:func:`_attributive`: "for my diabetic dad").
_FOR_MY_EN = re.compile(r"\bfor\s+(?:my|our)\b.*$", re.IGNORECASE)
_FIRST_PERSON_IN_EN = re.compile(r"\b(?:i|i'm|im|i've|ive|i'd|me|we|we're|us|mine)\b", re.IGNORECASE)
#: "no more eggs", "not more than...": a negated quantity, no comparative of the reply.
_NEGATED_EN = re.compile(r"^\W*(?:\w+\W+){0,2}?(?:no|not|any|nothing|never)\s+(?:more|less)\b", re.IGNORECASE)
_RELATIVE_TAIL_EN = re.compile(r"\b(?:that|which|who)\b.*$|\bto\s+\w+|\blike\b", re.IGNORECASE)
#: A statement whose subject is a demonstrative pointing back at the other side's words
#: ("that's a lot of sugar", "those look hard", 这个太贵了, 那也太难了吧): a reaction to the
#: reply, not about the user, unless it names the user ("this is my first marathon").
_DEICTIC_EN = re.compile(r"^(?:that|this|those|these)(?:'s|\s+is|\s+was|\s+are|\s+were|\s+sounds?|\s+looks?|\s+seems?|\s+would|"
                         r"\s+might|\s+could|\s+will)\b", re.IGNORECASE)
_DEICTIC_ZH = re.compile(r"^(?:这|那)(?:个|样|些|种)?(?:也|就|都|还|可)?(?:太|挺|真|好|有点|不|是|可以|应该|会|能|得|要)")
_NAMES_USER = re.compile(r"\b(?:i|i'm|i've|i'd|my|our|we|we're|me|mine)\b|我|咱|俺", re.IGNORECASE)

#: A sentence-final question particle (吗 呢 么 嘛 吧) or the negative half of a clause-final
#: A-not-A question with its second verb dropped ("正常不", "伤电池没": V(O)-不 / V(O)-没,
#: Li & Thompson 1981, 18.2): 没 after 还 / 都 / 也 / 并 is "not yet" / "not at all", an answer.
#: Punctuation, emoji and kaomoji after the particle change nothing ("还来得及吗😭").
_QUESTION_END_ZH = re.compile(r"(?:吗|呢|么|嘛|没有|不|吧|(?<![还都也并从])没)[^\u3400-\u9fffA-Za-z0-9]*$")
#: An estimate closed by 吧 ("一百来个吧", "两年多吧", "大概三次吧"): a numeral phrase (a
#: numeral, an approximation 来 / 多 / 左右, a measure word) with 吧, the particle that
#: softens an assertion and solicits agreement (Li & Thompson 1981, 7.2 on 吧): an uncertain
#: answer, not a question (吧 after a question word still asks: "几个吧" has none here).
_ESTIMATE_ZH = re.compile(r"^(?:大概|差不多|应该|可能|估计|也就|大约)?(?:[一二三四五六七八九十两百千万\d]+)(?:来|多)?"
                          r"[\u4e00-\u9fff]{0,2}?(?:多|左右)?吧[。！!～~…\s]*$")
#: Chinese question words. Besides the wh-words (with the colloquial 啥 and the northern
#: 嘛 for 什么 before a noun, "有嘛坐垫推荐") and the A-not-A forms (能不能, 有没有..., and any
#: X不X of a verb or adjective or of its first syllable, "疼不疼", "严不严重", Li & Thompson
#: 1981, 18.2; not the adverbs 动不动 "at every turn" and 时不时 "now and then"):
#: 几 before a measure word ("喝几杯", "煮几分钟"; not 前几天 / 好几个, nor 几 after the
#: perfective 了, "喝了几杯", where it is the indefinite "a few"), and 多 before a one-syllable
#: adjective of degree, the question of extent ("多大", "多久", "多长时间", "多远": 多 + adjective
#: asks how much, Li & Thompson 1981, 18.4 on question words; not after a degree or
#: negation word, "差不多大", "没多久", nor 多 after a numeral, "三十多岁"; with 都 / 也 after
#: it a question word is "no matter how", no question: "多大都不爱吃菜", 18.6).
_QUESTION_WORD_ZH = re.compile(r"什么(?!都|也)|(?<![没])啥(?!都|也|的)|干[嘛吗]|有嘛(?=[\u4e00-\u9fff])|怎么|怎样|咋|如何|哪|为什么|为啥|"
                               r"(?<![前这那好十了])几(?:[个点天岁号次种本杯遍年周顿趟斤步双件块片粒瓶碗勺]|分钟|小时|公斤|个月|星期)(?![都也])|"
                               r"(?<![差很好许太更最诸没不再一二三四五六七八九十百千万两\d])多(?:大|久|长|远|高|重|厚|深|贵|宽|快|早|晚)(?![都也])|"
                               r"多少|能不能|可不可以|可以不可以|"
                               r"有没有|是不是|要不要|该不该|好不好|行不行|会不会|用不用|需不需要|是否|"
                               r"(?P<a>[\u4e00-\u9fff])(?<![动时])不(?P=a)")
#: What an assistant hands over when asked for "一份 / 一个 ..." (a text, a plan, a list, a
#: pointer to a tool): the heads that make a wish with an indefinite object a request.
_ARTEFACT_ZH = (r"(?:清单|计划|方案|模板|模版|菜谱|食谱|菜单|攻略|建议|推荐|列表|例子|示例|代码|文案|名字|书单|歌单|片单|文章|总结|"
                r"大纲|提纲|表格|脚本|邮件|祝福|标题|口号|介绍|教程|方法|办法|思路|答案|故事|笑话|段子|话术|回复|开场白|演讲稿|"
                r"行程|路线|配方|做法|安排|时间表|作息表|app|APP|软件|工具|网站|资料|范文|草稿|说明|步骤|流程|问题|题目|练习)")
#: A Chinese request: a clause opening with a polite or imperative lead or a verb of the
#: ask ("写个", "查一下", "列个清单"). 写 / 列 / 讲 / 来 / 查 followed by the perfective 了 or
#: the experiential 过, and 查 followed by its result complement (查出, 查到), tell
#: something that happened (Li & Thompson 1981, ch. 6: 了 marks a bounded, realized event;
#: an imperative is unrealized): "查出来有猫癣" (it was found to have ringworm) is no ask.
#: (算了, "forget it", and 出了…, an episode, stay where they were.) A verb of the ask that
#: is the first morpheme of a word is no ask: a noun with a nominal suffix (设计师, 分析师,
#: 算法岗: -师 -员 -岗 -法 -力 -术 make nouns, Li & Thompson 1981, 3.2 on compounds), the
#: copula 算是 ("counts as") and 算来 / 算下来 ("all told"); 出 asks only with the
#: quantified object of something to produce ("出个题", "出一套卷子"; 出了 as before), not as
#: the first morpheme of 出差 / 出租 / 出国 (a statement: "出差去了杭州"). Also an ask with the
#: wish or need put first, its 我 optional: a modal of wanting (想 / 想要 / 需要 / 希望) before
#: 让你 / 请你 (the listener is to act), or before an indefinite object (a measure word, Li &
#: Thompson 1981, 4.2 on indefinite objects of unrealized events) whose head is something
#: the other side produces (:data:`_ARTEFACT_ZH`: "我想要一份减脂餐的菜谱", "需要一个搬家清单";
#: "我想要个孩子" and "我想换工作了" stay the user's wish and plan), or 想 + a verb of consuming
#: + 点 / 个 ("想看点轻松的", "想听个故事", something unspecified to pick); "再说一遍" (a repeat);
#: a subjectless 把 clause with a verb of making and no 了 ("把上面的翻译成英文": the disposal
#: construction as a command, Li & Thompson 1981, ch. 15); and a request whose object is put
#: first as its topic (Li & Thompson 1981, ch. 4: "周报模板帮我写一个", "开场白给我一个模板"):
#: 帮我 / 给我 / 替我 after a topic that is no person, then a measure word, the delimitative
#: 一下 or a reduplicated verb ("帮我看看"), with no 了 / 过 after (an imperative is unrealized).
_REQUEST_ZH = re.compile(r"^(?:请|求(?!婚|职|学|医)|麻烦|帮我|帮忙|给我|替我|你能|你可以|你帮|能不能|可以帮|可不可以|告诉我|推荐|建议|"
                         r"写(?![了过])|列(?![了过])|讲(?![了过])|说说|"
                         r"(?:介绍|解释|翻译|总结|算|比较|分析|设计|规划|安排|整理)(?!师|员|岗|法|力|术|是|来|下来)|查(?![出到了过])|来(?![了过])|出(?=[个一两几些道套份张题了])|"
                         r"做个|做一|生成|说(?:一下|下|详细|具体|清楚|简单|说)|用[\u4e00-\u9fffA-Za-z0-9]{1,6}?(?:解释|说|写|讲|回答|翻译|列|表示|概括)|"
                         r"分(?:点|条|步)(?:说|列|讲|写)|简单(?:说|讲|介绍|解释)|(?:再|稍微)?(?:详细|具体|简单|通俗)(?:点|一点|些)(?:说|讲|解释)?$)"
                         r"|^我(?:想|要|希望|需要)(?:你|您|问|请|知道|了解|找|看看|听听|学学|咨询|一个|一份|一些|点|个|些|几个|"
                         r"推荐|建议|帮|得到|做个|做一)"
                         r"|^我(?:该|应该|能|可以|要不要)"
                         r"|^我?(?:想|希望|需要)要?(?:让|请|麻烦)(?:你|您)"
                         r"|^我?(?:想|想要|需要|要|想找|想求)(?:一|几|两)?(?:个|份|篇|首|封|套|些|款|张|段|本|点)"
                         r"[\u4e00-\u9fffA-Za-z0-9]{0,12}?" + _ARTEFACT_ZH +
                         r"|^我?想(?:看|听|吃|喝|玩|读)(?:一)?[点个部首本]"
                         r"|(?:再|重新)(?:说|讲|解释|写|来|发|列|做)(?:一)?(?:遍|次|下)"
                         r"|^把(?![我咱俺])[\u4e00-\u9fffA-Za-z0-9]{1,10}?(?:翻译|改|写|整理|总结|列|变|换|做|转|缩短|扩写|润色)(?![^了过]*[了过])"
                         )
#: The request with its object first (:data:`_REQUEST_ZH`'s docstring): matched from the
#: start, and no 了 / 过 may follow the match (:func:`_request_zh` checks, one scan).
_FRONTED_REQUEST_ZH = re.compile(r"^(?!我|咱|俺|他|她|它|" + _PEOPLE_ZH + r")[\u4e00-\u9fffA-Za-z0-9]{2,}?(?:帮我|给我|替我|帮忙)"
                                 r"(?:[\u4e00-\u9fff]{0,2}?(?:一个|一份|一下|几个|一些|一篇|一封|一张|一段|个|份|下|点)|([\u4e00-\u9fff])\1)")
_REALIZED_ZH = re.compile(r"[了过]")


def _request_zh(core: str) -> bool:
    """``core`` (a Chinese clause, its lead words gone) is a request (:data:`_REQUEST_ZH`,
    :data:`_FRONTED_REQUEST_ZH`). Linear in ``len(core)``."""
    if _REQUEST_ZH.search(core):
        return True
    fronted = _FRONTED_REQUEST_ZH.match(core)
    return fronted is not None and not _REALIZED_ZH.search(core, fronted.end())
#: What a reply does to the speaker, their reaction or their thanks: a clause led by 你 / 您,
#: a judgement of what was said, an objectless 试了 / 用了 (the zero object is the other side's
#: suggestion, Li & Thompson 1981, ch. 24), and an exclamation of degree with no subject, a
#: degree adverb (好 太 真 挺 超) and an adjective that judges a thing ("好可爱", "太贴心了",
#: "挺好用的": the exclamative, Li & Thompson 1981, 7.1 / 11.1; a feeling of the speaker's,
#: "好累", is no judgement of a thing and stays).
_EVALUATIVE_ZH = (r"(?:可爱|好用|实用|有用|厉害|贴心|棒|好看|好吃|有意思|有趣|方便|详细|清楚|专业|靠谱|周到|神奇|牛|强|赞|"
                  r"好玩|好听|暖心|温柔|聪明|全面|到位|及时|给力|管用|酷|妙|香|精彩|完美|有道理|合理|懂事|机智|细心|用心|"
                  r"有帮助|好懂|易懂|简单|清晰|准)")
_META_ZH = re.compile(r"^我(?:有个|有一个|还有个|还有一个)(?:问题|想法|请求)|^我(?:试试|看看|想想|考虑一下|知道了|明白了|懂了|觉得可以|觉得不错)"
                      r"|^我?(?:也|刚)?(?:试了|试过了|用了|做了)(?:一下|下)?了?$"
                      r"|^我?(?:就|也|先|再|回头|明天|晚上|今晚|等会|待会|这就|改天)*(?:试试|试一下|试试看|想想|看看|研究研究|琢磨琢磨|"
                      r"考虑考虑|考虑一下|等等|观察观察|记下了|记住了|收藏了|存下了|照做|照着做)"
                      r"|^(?:那)?我?(?:就|先)?(?:按|照)(?:你说的|你的|这个|这样|这些|着)[\u4e00-\u9fff]{0,4}$"
                      r"|^我?又?(?:回来了|来了)$|^又是我|^(?:我)?(?:还)?有(?:个|一个)(?:小)?(?:问题|事)(?:想)?(?:请教|问)"
                      r"|^(?:想)?(?:请教|问你)(?:一下|个|一个)|^被你|^我(?:就知道|服了|真是服了|真服了|佩服)"
                      r"|^我?(?:再|还)(?:想|要)?问(?:一个|一下|个|你|问)?$|^我(?:问的|说的|的意思)(?:是|不是|其实)"
                      r"|^(?:说得|讲得|写得|总结得|解释得|回答得)(?:太|真|很|挺|好|非常|超)?(?:对|好|棒|清楚|明白|到位|有道理|详细|透彻)"
                      r"|^(?:真是|也太|好|太|真|挺|超|蛮|很|特别|非常|这么|那么)" + _EVALUATIVE_ZH + r"(?:了|啊|呀|吧|哦|呢|的|啦|哈|耶|嘛)*$"
                      r"|^(?:这个|那个|这|那|听起来|看起来)(?:不错|挺好|很好|可以|好|太好了|有道理)"
                      r"|^(?:你|您)(?!们)|^(?:说得|讲得)(?:对|好|是|有道理|太对)|^说到\S{0,3}心坎|^(?:有道理|太对了|确实是)")

#: Lasting topics (English): a disclosure naming one is a profile fact unless anchored to a day.
DURABLE_EN = re.compile(
    _PEOPLE_EN + r"s?\b"
    r"|\b(?:allerg\w*|intoleran\w*|celiac|coeliac|diabet\w*|asthma\w*|epilep\w*|migraines?|adhd|autis\w*|dyslex\w*|"
    r"anxiety|depression|pregnan\w*|diagnos\w*|condition|medication|surgery|injur\w*|disabilit\w*|wheelchair|"
    r"blood\s+pressure|cholesterol|insomnia|arthritis|knee|back\s+pain|hearing|vision|glasses|"
    r"vegetarian|vegan|pescatarian|gluten|dairy|lactose|keto|halal|kosher|meat|pork|beef|fish|seafood|shellfish|"
    r"peanuts?|nuts?|eggs?|sugar|spicy|caffeine|coffee|tea|alcohol|sober|drink|smoke|smoking|"
    r"live|living|lives|moved|moving|relocat\w*|apartment|flat|house|home|neighbou?rhood|city|town|country|"
    r"born|grew\s+up|hometown|from|based|"
    r"work|works|working|job|career|company|office|remote|boss|colleague|coworker|shift|shifts|engineer|developer|"
    r"teacher|nurse|doctor|manager|designer|lawyer|student|freelanc\w*|self-employed|startup|retired|promot\w*|"
    r"hired|fired|laid\s+off|quit|resign\w*|employer|business|study|studying|major|degree|university|college|"
    r"school|grade|class|phd|master's|"
    r"name|called|named|years?\s+old|birthday|anniversary|married|wedding|divorc\w*|engaged|single|dating|"
    r"car|bike|motorcycle|drive|own|bought|laptop|iphone|android|mac|pc|piano|guitar|camera|garden|"
    r"like|likes|love|loves|prefer|prefers|hate|hates|dislike|favou?rite|enjoy|enjoys|fan|into|can't\s+stand|"
    r"afraid|scared|speak|speaks|language|native|fluent|learning|hobby|play|plays|training|marathon|"
    r"always|never|usually|often|sometimes|rarely|most\s+(?:days|mornings|evenings|nights|weekends|weeks)|"
    r"every\s+(?:day|morning|evening|night|week|weekend)|panic|leave|maternity|paternity|sabbatical)\b",
    re.IGNORECASE,
)
#: Lasting topics (Chinese).
DURABLE_ZH = re.compile(
    _PEOPLE_ZH + r"|炎(?!热)|过敏|不耐受|糖尿病|哮喘|高血压|血压|血糖|血脂|胆固醇|痛风|颈椎|腰椎|腰|膝盖|腿|肩|脖子|嗓子|胃|牙|矫正|视力|体重|湿疹|鼻炎|失眠|抑郁|焦虑|怀孕|确诊|诊断|病|药|手术|受伤|近视|眼镜|"
    r"怀上|素|吃肉|不吃|不能吃|不喝|戒|忌口|清真|辣|咖啡|茶|酒|烟|海鲜|花生|坚果|鸡蛋|牛奶|乳糖|麸质|"
    r"住|搬|老家|家乡|出生|长大|城市|小区|房子|公寓|租|宿舍|"
    r"工作|上班|公司|职业|工程师|程序员|老师|护士|医生|经理|设计师|律师|会计|销售|客服|厨师|司机|编辑|记者|公务员|"
    r"前端|后端|运营|学生|在\S{1,8}(?:做|当|干)(?!饭|菜)|自由职业|创业|退休|升职|辞职|离职|跳槽|入职|"
    r"失业|夜班|加班|同事|专业|大学|学校|读书|年级|博士|硕士|上学|毕业|"
    r"叫|名字|岁|生日|纪念日|结婚|离婚|订婚|单身|恋爱|"
    r"车|自行车|电动车|开车|电脑|手机|房|钢琴|吉他|相机|"
    r"喜欢|爱|讨厌|偏好|最爱|受不了|热爱|怕|说|语|学|爱好|练|跑步|马拉松|健身|"
    r"每天|每周|平时|一直|从来|经常|总是|习惯"
)
#: A lasting thing that changed: durable even when dated ("I moved to Berlin last month").
CHANGE = re.compile(
    r"\b(?:moved|relocated|started|starting|quit|left|joined|adopted|got\s+(?:married|engaged|divorced|a\s+new|a\s+job|"
    r"promoted|hired|fired|laid\s+off)|had\s+a\s+baby|was\s+(?:born|diagnosed|promoted|hired|fired)|diagnosed|"
    r"retired|graduated|became|switched|gave\s+up|no\s+longer|anymore|any\s+more|not\s+\w+\s+anymore|"
    r"bought|sold|broke\s+up)\b"
    r"|搬|换了|辞职|离职|跳槽|入职|养了|结婚|离婚|分手|生了|确诊|退休|毕业|开始|不再|戒了|买了|卖了"
    r"|升(?:职|任)|升了?(?:为|成)?\S{0,2}?" + TITLES_ZH + r"|转学|考(?:上|进|取|起)了?|换导师",
    re.IGNORECASE,
)
#: A one-off moment (seed 002 §3.2: events are episodes, the profile is what holds): a
#: day or part of one named as when it happened, beyond :data:`EVENT_TIME` ("the other
#: day", "last weekend", 上周末, 今天早上, 前几天).
ONE_OFF_TIME = re.compile(
    r"\b(?:the\s+other\s+day|earlier\s+today|this\s+past\s+(?:week|weekend)|over\s+the\s+weekend|"
    r"at\s+the\s+weekend|on\s+" + WEEKDAY_EN + r"(?!s|\s+(?:nights|mornings|evenings|afternoons)))\b"
    r"|今早|今天早上|前几天|那天|上次",
    re.IGNORECASE,
)
#: Something that holds rather than happens: a state or a change of one ("now", "since",
#: "anymore", 现在, 已经, 开始) or a habit ("every", "usually", 一直, 每天, 平时).
STATE = re.compile(
    r"\b(?:now|since|anymore|any\s+more|no\s+longer|currently|these\s+days|nowadays|still|for\s+good|"
    r"from\s+(?:now|here)\s+on(?:\s+out)?|"
    r"always|usually|normally|generally|often|never|every|most\s+(?:days|mornings|evenings|nights|weekends)|"
    r"lately|recently|for\s+(?:(?:\d+|a\s+few|a\s+couple\s+of|two|three|four|five|six|many|several)\s+)?"
    r"(?:days|weeks|months|years|ages))\b"
    r"|现在|已经|开始|目前|如今|一直|不再|从此|以后|每天|每周|每个|经常|总是|平时|一般|老是|最近|这几年|多年|好几年",
    re.IGNORECASE,
)
#: A one-off activity told in the past ("I went to a jazz concert", "we watched Dune",
#: "had a rough day at work", 去看了一场电影, 吃了火锅): an episode whatever its date.
ONE_OFF_ACTIVITY = re.compile(
    r"\b(?:went\s+(?:to|out|for|on|hiking|shopping|camping|swimming|skiing|running)|visited|watched|attended|"
    r"saw\s+(?:a|an|the)|ate|tried\s+(?:a|an|the|out)|cooked|baked|hosted|celebrated|threw\s+a|"
    r"caught\s+(?:a|the)|ran\s+into|had\s+(?:a|an)\s+(?:\w+\s+){0,2}(?:day|time|night|evening|morning|"
    r"afternoon|weekend|meeting|party|dinner|lunch|breakfast|date|call|chat|fight|argument|talk))\b"
    r"|去了|看了|吃了|参加了|见了|玩了|逛了|聚餐|聚了|爬了|喝了",
    re.IGNORECASE,
)
#: How the user feels right now ("I'm exhausted", "feeling stressed", 好累, 有点烦): an
#: episode unless :data:`STATE` says it lasts.
MOMENT = re.compile(
    r"\b(?:feel|feeling|felt|" + FEELINGS_EN + r")\b"
    r"|好累|很累|太累|累死|累了|好困|犯困|困了|饿了|好饿|好烦|很烦|烦死|心烦|烦躁|紧张|激动|开心|难过|郁闷|心情|无聊|崩溃",
    re.IGNORECASE,
)
_CJK = HAN_RE
#: A trip or move planned for a coming time, with no subject ("下个月去新加坡开会", "月底回
#: 老家"): Chinese has no tense; a future time word before a bare verb of motion states a
#: scheduled event (Li & Thompson 1981, 6.1 on time words and aspect), the speaker's in an
#: opening clause (ch. 24). A plan (:data:`_PLAN`): durable until it happens.
_FUTURE_TRIP_ZH = FUTURE_TRIP_ZH
#: A plan of the user's ("We're going to Japan in April", "报了十月份的全马"): it holds
#: until it happens, so every friend should know it (profile), with its date.
_PLAN = re.compile(PLAN_CUES, re.IGNORECASE)
#: A lasting condition of the body (seed 002 §3.2 counts health among the user's basic
#: attributes): an allergy, an intolerance, a diagnosis. Found out on a day ("ate mango
#: the other day and found out I'm allergic", "前几天吃了芒果才知道自己芒果过敏") it still
#: holds afterwards, so it is durable whatever its date or the episode around it.
_CONDITION = re.compile(r"\b(?:allergic|allergy|allergies|intolerant|intolerance|celiac|coeliac|diagnosed\s+with|"
                        r"(?:pre)?diabetic|asthmatic|epileptic)\b|过敏|不耐受|确诊|查出|诊断出", re.IGNORECASE)
#: A death among the user's people or pets ("my grandpa passed away", "we lost Biscuit
#: last tuesday", "had to put our dog down", 外婆去世了): it tells an episode with a day,
#: yet who the user's people and pets are (seed 002 §3.2: family, pets) has changed for
#: good, and a later "should we get another dog?" or "plans for the holidays" needs it; so
#: it is durable whatever its date. "lost" counts only with a name or one of the user's
#: people or pets ("lost my keys" is not a death).
_DEATH = re.compile(r"\b(?:passed\s+away|passed\s+on|died|put\s+(?:\w+\s+){0,3}(?:down|to\s+sleep)|"
                    r"lost\s+(?:(?:my|our)\s+(?:\w+\s+)?" + _PEOPLE_EN + r"|(?-i:[A-Z][a-z]+)))\b"
                    r"|去世|过世|离世|病逝", re.IGNORECASE)
#: The health of the user or their people (seed 002 §3.2 counts it among the basic
#: attributes; "my daughter is allergic to peanuts" decides dinner too): a condition
#: (:data:`_CONDITION`), a chronic complaint or a body part that limits them ("bad knees",
#: "blood pressure", 膝盖, 血压, 痛风, 腰). A lasting fact naming one is marked
#: ``attribute: health`` so the profile pick keeps a place for it
#: (:func:`plugins.auto_recall.pick_profile`): "any hikes nearby?" needs the knees, "what
#: should I order?" the allergy, and neither shares a word with the request.
HEALTH = re.compile(r"\b(?:" + CHRONIC_EN + "|" + COMPLAINTS_EN + r")\b|" + COMPLAINTS_ZH + "|" + CHRONIC_ZH, re.IGNORECASE)
#: A diagnosed or chronic condition among :data:`HEALTH` (an allergy, diabetes, high blood
#: pressure, gout, 过敏, 高血压, 痛风): ``attribute: condition``, which the profile pick
#: prefers to a passing complaint ("my knee aches after dancing").
CHRONIC = re.compile(r"\b" + CHRONIC_EN + r"\b|" + CHRONIC_ZH, re.IGNORECASE)
#: A mirative lead (the speaker's own surprise at new information: "turns out", "apparently",
#: "found out", 原来, 才知道; e.g. DeLancey 1997 on mirativity): what follows is a statement
#: even when the sentence ends in "??" ("turns out im allergic to cats??").
_MIRATIVE_EN = re.compile(r"^(?:(?:also|and|so|oh|btw|well)\s+)*(?:(?:it\s+)?turns\s+out|apparently|(?:i\s+)?(?:just\s+)?"
                          r"found\s+out|(?:i\s+)?(?:just\s+)?learned|(?:i\s+)?(?:just\s+)?realized|guess\s+what)\b[\s,:]*(?:that\s+)?",
                          re.IGNORECASE)
_LATIN_WORD = re.compile(r"[A-Za-z0-9']+")
#: A bare number ("43", "3.5"): a quantity, which answers a how-many question.
_NUMERAL = re.compile(r"\d+(?:[.,]\d+)?")
_VERB_EN = re.compile(r"\b(?:is|are|was|were|be|been|being|has|have|had|does|did|do|feels?|felt|looks?|seems?|got|gets|went|goes|"
                      r"made|makes|said|says|loves?|likes?|hates?|wants?|needs?|works?|lives?|can|could|will|would|"
                      r"\w+ed|\w+'s|\w+'re)\b", re.IGNORECASE)

#: An ``other`` clause of at least this many Latin words (or :data:`STATEMENT_CJK` CJK
#: characters) is a statement worth an episode ("Rex loves the beach"); a shorter one
#: ("twice a week") only makes sense with the question it answers.
STATEMENT_WORDS = 4
STATEMENT_CJK = 8

#: Slots whose newer statement replaces the older (same subject, the user or "we"),
#: the first that matches wins (work before residence: "a sound engineer at a studio in
#: Collingwood" is about work):
#: where the user lives, their work (employer or occupation), what they study, their
#: diet, their relationship status, the vehicle they drive, a pregnancy (from trying to
#: conceive to the birth) and the shift they work (nights, days, 夜班: the work schedule
#: is its own attribute, seed 002 §3.2). Each pattern
#: names the slot's own words only, so "I work night shifts" fills ``shift``, not
#: ``work``, and cannot retire "I work at Acme".
_OCCUPATIONS = OCCUPATIONS_EN
#: Chinese job titles for the work slot after 我是 / 当 / 做 ("我是一名护士", "当上销售经理",
#: "在车企做销售"): the title says the job, like :data:`_OCCUPATIONS` in English.
_OCCUPATIONS_ZH = OCCUPATIONS_ZH
#: A child's school stage (the class, the school level, an entrance exam passed): "女儿上初二",
#: "朵朵考上市一中了", "my son starts high school". A statement about someone else of the
#: user's ("my son", 我女儿), or a Chinese one with no subject (the child named: "朵朵上高一了"),
#: that says one fills the ``school`` slot (:func:`slot_of`); the user's own ("我考上研究生了")
#: is not theirs. 初一 / 初三 after 年 / 月 are days, 高一点 is "a bit higher".
_SCHOOL = re.compile(r"[上读]了?(?:小学|初中|高中|大学|幼儿园|托班)|(?<![年月最起提])[初高][一二三](?![十百点些倍截头])|"
                     r"[一二三四五六]年级|考上|考进|考取|考起|升(?:初中|高中|大学|入)|小升初|转学|"
                     r"\b(?:switched|changed|transferred|moved)\s+schools\b|\bnew\s+school\b|\b(?:primary|secondary|grade)\s+school\b|"
                     r"\bat\s+(?:[\w']+\s+){1,3}(?:primary|elementary|academy)\b|"
                     r"\b(?:kindergarten|preschool|pre-k|daycare|elementary|middle\s+school|high\s+school|junior\s+high|"
                     + GRADE_EN + r"|freshman|sophomore|got\s+into)\b", re.IGNORECASE)
#: A class the user teaches ("带五年级一个班", "教初二数学", "I teach 5th grade"): the teacher's
#: work, no child's school stage; :func:`slot_of` reads the school stage without it.
_TAUGHT_CLASS = re.compile(r"(?:带|教)(?:了|着)?(?:[一两二三四五六]个)?(?:[一二三四五六]年级|[初高][一二三])"
                           r"|\bteach(?:es|ing)?\s+(?:\w+\s+)?(?:" + GRADE_EN + r"|year\s+\d{1,2})",
                           re.IGNORECASE)
#: A school named as an institution ("转学去了实验小学", "在二小上学", "at Oakwood Primary",
#: "changed schools"), not a stage ("上小学", "四年级", "5th grade"): read by
#: :func:`keeps_other_fact` (a new grade keeps the school).
_SCHOOL_NAMED = re.compile(r"转学|(?<![上读升进考念初高])(?:[\u4e00-\u9fff]{1,5}(?:小学|中学|学校|幼儿园|附小|附中)|[一二三四五六七八九十]{1,2}[小中])"
                           r"|\b(?:switched|changed|transferred|moved)\s+schools\b|\bnew\s+school\b"
                           r"|\b(?:at|to)\s+(?-i:[A-Z])[\w'-]+(?:\s+(?-i:[A-Z])[\w'-]+){0,2}\s+(?i:primary|elementary|academy|school|high)\b",
                           re.IGNORECASE)
#: Whose school stage it is, when the sentence says: son / daughter / grandchild (the
#: ``school`` slot's key: "school:daughter"); a name or "孩子" leaves it unkeyed, and an
#: unkeyed school slot meets any keyed one (:func:`same_slot`).
_SCHOOL_WHO = (("daughter", re.compile(r"女儿|闺女|\b(?:daughter|girl)\b", re.IGNORECASE)),
               ("son", re.compile(r"儿子|\b(?:son|boy)\b", re.IGNORECASE)),
               ("granddaughter", re.compile(r"孙女|\bgranddaughter\b", re.IGNORECASE)),
               ("grandson", re.compile(r"孙子|\bgrandson\b", re.IGNORECASE)))
#: Two characters before 人 that name no place: "我们年轻人", "我们打工人" are no locals.
#: "我们成都人" / "我们东北人" (we <place> people: the locals, where the speaker lives) fill
#: the residence slot.
_NOT_PLACE_ZH = (r"年轻|老年|中年|成年|外地|本地|当地|普通|打工|上班|工薪|有钱|没钱|这些|那些|这种|那种|两个|三个|几个|"
                 r"一家|家里|自己|大家|女的|男的|读书|病|老|大|小|男|女|穷|好|坏|一|两|几")
_SLOTS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("work", re.compile(
        r"\b(?:work|working|works)\s+(?:\w+\s+){0,2}(?:at|for|as)\b|\bjob\s+(?:at|as)\b|\bjoined\b|"
        r"\b(?:left|quit)\s+(?:my\s+job|my\s+position|the\s+company|(?-i:[A-Z])\w+)|\blaid\s+off\b|\bnew\s+job\b|"
        r"\b(?:left|quit)\s+(?:my|the|that)\s+(?:\w+\s+){0,2}(?:job|position|gig)\b|"
        r"\b(?:took|accepted|got|landed|started)\s+(?:a|an|the)\s+(?:\w+\s+){0,2}(?:job|position|role|offer)\b|\bnew\s+(?:role|position)\b|"
        r"转行|自由职业|创业|拿到了?\S{0,6}offer|offer拿到|(?:去|到)\S{2,6}报到|\bwent\s+freelance\b|\bfreelancing\b|\bself-employed\b|\b(?:got|landed|started|starting|doing|my|an?)\s+(?:\w+\s+){0,3}internship\b|\b(?:got\s+)?promoted\b|"
        + PROMOTED_EN + r"|\b" + HOMEMAKER_EN + r"\b|" + PROMOTED_ZH + r"|"
        r"\bstarted\s+(?:at|working)\b|\b" + OUT_OF_WORK_EN + r"\b|"
        r"\b(?:i|we)\s+(?:run|own|opened|started)\s+(?:a|an|my|our)\s+(?:\w+\s+){0,2}(?:business|shop|store|bakery|"
        r"restaurant|cafe|café|bar|salon|studio|company|startup|clinic|practice|farm|agency)\b|"
        r"开了(?:一)?家|开(?:了)?(?:一)?(?:家|个)\S{0,6}(?:店|馆|公司|餐厅|工作室)|"
        r"\b(?:i'm|i\s+am)\s+(?:now\s+)?(?:an?\s+)?(?:\w+\s+)?" + _OCCUPATIONS + r"\b|"
        r"^(?:\w+\s+){0,2}?as\s+an?\s+(?:[\w-]+\s+)?" + _OCCUPATIONS + r"\b|"
        r"(?<![现正实好存])在\S{0,12}(?:工作|上班|公司|单位|集团|医院|银行|工厂)|" + WORK_LEFT_ZH + r"|跳槽|入职(?!体检|手续|培训|材料|资料)|换了?(?:份|个)?工作|新工作|"
        r"辞(?:了|掉)(?:工作|职)?|升职|升任|转正|当上|(?:找|换)(?:到)?了?(?:一)?(?:份|个)\S{0,10}工作|"
        r"我是做\S{1,8}?的|(?:我(?:现在|目前|如今)?是|我当|我做|当了?|做了?)(?:一名|一个|个)?\S{0,8}?" + _OCCUPATIONS_ZH + r"(?!\S{0,2}(?:朋友|同学|家|说))",
        re.IGNORECASE)),
    ("residence", re.compile(
        r"\b(?:live|living|lives|moved|moving|relocated|relocating|based)\s+(?!up\b|forward\b|back\s+to\s+(?:the\s+)?\d)"
        r"(?:\w+\s+)?(?:in|into|to|at|near|by)\b(?!\s+(?:" + MONTH_ABBR_EN + "|" + WEEKDAY_ABBR_EN + r")\w*\s*\d)"
        r"|\b(?:our|my)\s+(?:new\s+|own\s+)?(?:place|home|apartment|flat|house|studio)\s+(?:is\s+)?(?:in|near)\b"
        r"|\b(?:apartment|flat|house|studio|condo|bungalow|cottage)\s+(?:in|near)\s+(?-i:[A-Z])|\bclosed\s+on\s+a\s+(?:house|home|condo|flat)\b"
        r"|\b(?:got|get|getting|picked\s+up|collected)\s+(?:the\s+)?keys\s+to\s+(?:the\s+|our\s+|my\s+)?(?:new\s+)?"
        r"(?:place|house|home|flat|apartment|bungalow|cottage|condo|townhouse)\b"
        r"|\b(?:our|my)\s+(?:new\s+|own\s+)?(?:place|home|apartment|flat|house|studio|condo|townhouse)\b[^.!?;]{0,40}?\b(?:in|near)\s+(?-i:[A-Z])"
        r"|\bbought\s+(?:a|an|our|my)\s+(?:\w+\s+)?(?:house|home|condo|flat|apartment|place)\s+(?:in|near)\b"
        r"|在\S{1,8}?买了?(?:个|套|一套|一个|间)?\S{0,3}房|在\S{1,6}养老|回(?:到)?老家|安家|落户|\bsettled\s+in\b"
        r"|宿舍|合租|租了?(?:个|一个|一间|一套)?(?:房|单间|公寓)|\b(?:dorm|dorms|dormitory|halls\s+of\s+residence)\b"
        r"|\b(?:i'm|i\s+am|we're|we\s+are)\s+in\s+(?-i:[A-Z][a-z]+(?:\s+[A-Z][a-z]+)?)\s*(?:$|[,.!]|and\b)"
        r"|住(?!院|宿|酒店|了一晚)|搬(?:到|去|家|来)|定居|现居"
        r"|我们(?!" + _NOT_PLACE_ZH + r")[\u4e00-\u9fff]{2}人(?!家|员|士|物|类|口|群|民|生|工)",
        re.IGNORECASE)),
    ("study", re.compile(r"\b(?:student|studying|majoring|major\s+in|degree\s+in|enrolled|phd\s+in|sophomore|freshman|undergrad|"
                         r"[\w-]+\s+major(?=\s+(?:at|in|from)\b|\s*[,.;!?]|\s*$)|"
                         r"master'?s\s+in|(?:switched|changed|dropped|taking|doing|my)\s+(?:\w+\s+)?courses?|courses?\s+(?:in|at)|"
                         + ADVISOR_EN + r"|thesis\s+(?:topic|is\s+on))\b"
                         r"|读(?:研|博|大学|本科|大[一二三四]|高[一二三]|初[一二三])|专业|在读|上大学|转专业|考上|考研(?!公寓|资料|书|群|机构|宿舍|自习室)|研究生"
                         r"|(?:(?<![\u4e00-\u9fff])|(?<=[我读是]))(?:研|博)[一二三四五](?![\u4e00-\u9fff]{0,1}[点些])|导师|研究方向|课题",
                         re.IGNORECASE)),
    ("diet", re.compile(r"\b(?:vegetarian|vegan|pescatarian|plant-based|keto|carnivore)\b|"
                        r"\beat(?:ing|s)?\s+(?:meat|fish|chicken|pork|beef)\b|"
                        r"素食|吃素|吃肉|不吃肉|开荤|吃(?:鱼|鸡|猪|牛|羊)|鸡肉|猪肉|牛肉", re.IGNORECASE)),
    ("relationship", re.compile(r"\b(?:married|divorced|single|engaged|fianc[ée]e?|separated|widowed|broke\s+up|"
                                r"dating|together\s+(?:for\s+)?\d+\s+years)\b|\bmy\s+(?:girlfriend|boyfriend)\b|"
                                r"\b(?:we|i)\s+(?:\w+\s+)?split\s+up\b|\b(?:we're|we\s+are|and\s+i\s+are)\s+(?:done|over|through|finished)\b|\bsplit\s+up\s+with\b|\b(?:the|our|my)\s+relationship(?:'s|\s+is)\s+over\b|"
                                r"\b(?:i'm|i\s+am|i've\s+been)\s+seeing\s+someone\b|\bmy\s+new\s+(?:partner|boyfriend|girlfriend)\b|"
                                r"结婚|离婚|单身|订婚|分手|恋爱|脱单|男朋友|女朋友|领证|复合", re.IGNORECASE)),
    ("vehicle", re.compile(r"\b(?:my|our)\s+(?:\w+\s+){0,2}" + VEHICLES_EN + r"\b"
                           r"|\b(?:i|we)\s+(?:drive|ride)\s+(?:a|an)\b"
                           r"|\b(?:went\s+with|ended\s+up\s+(?:with|buying|getting|going\s+with))\s+(?:a|an|the)\s+(?:new\s+|used\s+)?(?:\w+\s+)?"
                           r"(?:" + VEHICLES_EN + "|" + CAR_MAKES_EN + r")\b|\b(?:got|bought|leased)\s+(?:a|an)\s+(?:new\s+|used\s+)?"
                           r"(?:\w+\s+)?" + VEHICLES_EN + r"\b"
                           r"|\b(?:my|our)\s+(?:\w+\s+){0,2}" + CAR_MAKES_EN + r"\b"
                           r"|\b(?:commute|commuting|get\s+to\s+work|ride\s+to\s+work|drive\s+to\s+work|bike\s+to\s+work|"
                           r"walk\s+to\s+work|(?:take|catch)\s+the\s+(?:bus|train|subway|metro|tube|tram)\s+to\s+work)\b"
                           r"|(?:我|我们|我家)的?(?:那|这)?辆|车换了|换了?(?:辆|台)?车|开的是|电动车|新车|卖了?车|车卖了"
                           r"|(?:比亚迪|特斯拉|丰田|本田|大众|宝马|奔驰|奥迪|理想|蔚来|小鹏)(?!股)"
                           r"|通勤|(?:开车|骑车|坐地铁|坐公交|挤地铁|打车)(?:上下班|上班)|现在\S{0,4}?(?:共享单车|地铁|公交|骑车|步行|打车)",
                           re.IGNORECASE)),
    ("pregnancy", re.compile(r"\b(?:pregnant|expecting\s+(?:a|our|twins)|due\s+in|was\s+born|were\s+born|gave\s+birth|"
                             r"trying\s+(?:to\s+conceive|for\s+a\s+baby)|ttc|ivf|"
                             r"(?:she|he|baby|they)(?:'s|'re|\s+is|\s+are)\s+here)\b|怀孕|怀上|备孕|试管|预产期|出生|生了|宝宝出生", re.IGNORECASE)),
    ("shift", re.compile(r"\b(?:work(?:ing|s)?\s+(?:nights|days|evenings|overnights|the\s+night\s+shift|the\s+day\s+shift)|"
                         r"(?:night|day|evening|early|late|graveyard|overnight|swing)\s+(?:shifts?|rotation)|graveyard|"
                         r"on\s+(?:nights|days|earlies|lates)|(?:nights|days)\s+(?:now|starting)|\d{1,2}\s*[ap]m?\s*-\s*\d{1,2}\s*[ap]m?\b(?=\s+(?:days|nights|shifts?)))\b"
                         r"|夜班|白班|倒班|三班倒|早班|晚班|大夜|小夜", re.IGNORECASE)),
)
#: A relationship going on (engaged, married, 领证, 结婚, 订婚), not ending: it retires
#: what was said about the partner only when it names the partner again
#: (:func:`keeps_partner`), so a change of status never loses who the partner is.
_PROGRESSION = re.compile(r"\b(?:engaged|married|marrying|wedding|proposed|fianc[ée]e?)\b|领证|结婚|订婚|求婚|婚礼",
                          re.IGNORECASE)
_ENDED_RELATIONSHIP = re.compile(r"\b(?:divorc\w*|separated|broke\s+up|split\s+up|single|over|ex|seeing\s+someone)\b"
                                 r"|离婚|分手|单身|前任|前夫|前妻", re.IGNORECASE)
_NAME_EN = re.compile(r"(?<!^)(?<![.!?]\s)\b(?-i:[A-Z][a-z]+)\b")
_NAME_ZH = re.compile(_PEOPLE_ZH + r"(?:叫)?(?P<n>[\u4e00-\u9fff]{2})")


def keeps_partner(new: str, older: str) -> bool:
    """``older`` (about someone of the user's: "我男朋友阿杰是个游戏迷") stays live beside a
    newer ``relationship`` statement ``new`` that says the relationship goes on
    (:data:`_PROGRESSION`: "我们十月份领证") without naming the partner again: retiring
    it would lose who the partner is. A statement that ends a relationship, or that
    names the partner ("I proposed to Zoe"), retires it as any slot statement does."""
    if not _PROGRESSION.search(new) or _ENDED_RELATIONSHIP.search(new):
        return False
    names = {m.group() for m in _NAME_EN.finditer(older) if m.group() not in ("I", "My", "Our")}
    names |= {m.group("n") for m in _NAME_ZH.finditer(older)}
    return bool(names) and not any(name in new for name in names)


#: A place the user is at, named in a statement: English "in / near / from / outside
#: <Capitalised word>" (not a month, a weekday or a language: "in April", "in Spanish"),
#: a Chinese place before what the user does there ("我在武汉读大三", "在深圳一家电商公司
#: 做后端": 在 + two or three characters + a verb or a measure word; not 在 + a verb,
#: the progressive "在备孕"), a destination ("去深圳报到", "moving to Seattle"), a name with
#: an administrative suffix (高新区, 郑州市, 南山区) or "<place>这边 / 那边" (郑州这边), and a
#: commute's route (:data:`_ROUTE`). Read by :func:`keeps_other_fact`.
_PLACE = re.compile(
    r"\b(?:in|near|from|outside)\s+(?!(?-i:" + "|".join((*MONTH_NAMES, *WEEKDAY_NAMES, "Christmas", "Easter", *LANGUAGE_NAMES))
    + r")\b)(?-i:[A-Z][a-z]+)"
    r"|在(?!一|这|那|哪|家|读|做|学|想|上班|上学|上课|外|线|网|公司|学校|医院|单位|附近|本地|当地|老家)"
    r"(?P<zh>[\u4e00-\u9fff]{2,3}?)(?=一家|一所|的|读|上学|上班|工作|做|当|开|住|买|租|打工|生活|这边|那边)"
    r"|[\u4e00-\u9fff]{1,4}(?:市|省|区|县|镇)(?![长委政])|[\u4e00-\u9fff]{2}(?:这边|那边)"
    r"|(?:去|来|回|调到|派到|\bbase\s*)(?!一|这|那|哪|家|公司|学校|医院|单位)[\u4e00-\u9fff]{2,3}?(?=报到|上班|工作|发展|读书|上学|定居|生活)"
    r"|\bbase\s*[\u4e00-\u9fff]{2,3}|(?:搬到|搬去|换到|迁到|落户)(?!一|这|那|哪)[\u4e00-\u9fff]{2,3}"
    r"|\b(?:to|into)\s+(?-i:[A-Z][a-z]+)(?=\s*(?:$|[,.;!]|for\b|next\b|this\b|in\s+(?-i:[A-Z])))",
    re.IGNORECASE)
#: A commute's route, "from <A> to <B>" / "A到B" in a statement about the commute: where
#: the user lives and works, which a new way to get there does not change.
_ROUTE = re.compile(r"(?:\bfrom\s+(?-i:[A-Z])\w+\s+to\s+(?-i:[A-Z])|[\u4e00-\u9fff]{2}到[\u4e00-\u9fff]{2})", re.IGNORECASE)
_COMMUTE = re.compile(r"\bcommut\w*|通勤|上下班", re.IGNORECASE)
#: A promotion: a new title at the same employer ("got promoted", "they made me team
#: lead", 升组长, 当上主管, 转正): it changes the title, not where the user works.
_PROMOTION = re.compile(r"\bpromoted\b|" + PROMOTED_EN + "|" + PROMOTED_ZH + r"|升职|当上|转正", re.IGNORECASE)
#: A new workplace named in a work statement ("在西门子医疗入职了", "跳槽到字节了", "joined
#: Siemens"): an older "在博世做销售" names its workplace in the same frame, so the place
#: rule of :func:`keeps_other_fact` (which cannot tell a company from a city) keeps nothing.
#: Not "一家 / 这家 ..." (a workplace not named: the city of the older statement stays).
_NEW_WORKPLACE = re.compile(r"在(?!一|这|那|家)[\u4e00-\u9fffA-Za-z]{2,8}?(?:入职|报到)|(?:入职了|跳槽到|跳到|加入了?)(?!一|这|那)[\u4e00-\u9fffA-Za-z]{2,8}"
                            r"|\b(?:joined|started\s+at)\s+(?-i:[A-Z])", re.IGNORECASE)
#: A place said as the city around the workplace ("在深圳一家电商公司", "at Acme in Leeds"),
#: not as the workplace itself: a new workplace named does not replace it.
_CITY_OF_WORK = re.compile(r"在[\u4e00-\u9fff]{2,3}?(?:一家|一所|的一家|这边|那边)|\b(?:in|near)\s+(?-i:[A-Z])", re.IGNORECASE)
#: An occupation named, English or Chinese (:data:`_OCCUPATIONS`, :data:`_OCCUPATIONS_ZH`, a
#: trade said with 的: "开出租的"), read by :func:`keeps_other_fact`.
_OCCUPATION_ANY = re.compile(r"\b" + _OCCUPATIONS + r"s?\b|" + _OCCUPATIONS_ZH
                             + r"|(?:跑|干|开|卖|送|修)[\u4e00-\u9fff]{1,4}?的(?![\u4e00-\u9fff])", re.IGNORECASE)
#: Work that ended or changed in kind (quit, laid off, retired, a career change, 辞职, 转行):
#: the occupation of an older statement does not hold beside it.
_WORK_ENDED = re.compile(r"\b(?:quit|left|resigned|laid\s+off|fired|let\s+go|retiring|" + OUT_OF_WORK_EN + "|"
                         r"career\s+change|changed\s+careers?|stay-at-home|stay\s+at\s+home|" + HOMEMAKER_EN + r")\b"
                         r"|" + WORK_LEFT_ZH + r"|辞了|转行|改行|" + HOMEMAKER_ZH, re.IGNORECASE)
#: A university or school named in a study statement ("at Edinburgh", "at King's College",
#: "在华科读研", "浙大", "北邮"): read by :func:`keeps_other_fact`.
_INSTITUTION = re.compile(r"\b(?:at|from)\s+(?-i:[A-Z])[\w'-]+|\b(?:university|college)\s+of\b|\b\w+\s+(?:university|college)\b"
                          r"|[\u4e00-\u9fff]{1,6}大学|[\u4e00-\u9fff]{1,4}学院|华科|浙大|北大|清华|复旦|交大|北邮|同济|武大|南大|中大|川大|厦大|人大|北航|哈工大",
                          re.IGNORECASE)
#: A study left or finished ("dropped out", "graduated", 毕业, 退学, 不读了): the university
#: of an older statement does not hold beside it.
_LEFT_STUDY = re.compile(r"\b(?:dropped\s+out|graduated|transferred|withdrew|left\s+(?:uni|university|college|school))\b"
                         r"|毕业|退学|不读了|转学|考上|考进", re.IGNORECASE)
#: Retirement from work, said as a state or an event ("I'm retired", "since I retired", 退休了).
_RETIRED = re.compile(r"\bretired\b|\bretirement\b|退休", re.IGNORECASE)
#: Back to work after retiring ("came out of retirement", "went back to work", 返聘, 退休后又): a change.
_UNRETIRED = re.compile(r"\bout\s+of\s+retirement\b|\bback\s+to\s+work\b|\bunretired?\b|返聘|又(?:出来)?(?:上班|工作)",
                        re.IGNORECASE)
#: The move itself, not where to ("搬家全靠我一个人", "the move was brutal", "moving day"):
#: a residence statement saying only this names no new home.
_THE_MOVE = re.compile(r"搬家|\b(?:the|our|my)\s+move\b|\bmoving\s+(?:day|boxes|house|truck|van)\b|\bunpacking\b", re.IGNORECASE)


def keeps_other_fact(new: str, new_slots: tuple[str, ...], older: str) -> bool:
    """``older`` (a live memory in the same slot as the newer statement ``new``, whose
    slots are ``new_slots``) still holds a fact ``new`` does not change, so ``new`` does
    not retire it (one memory can hold two facts; a change of one attribute keeps the
    other: the slot is one attribute, seed 002 §3.2 lists home, work, family... as
    separate attributes):

    - ``older`` names where the user is (:data:`_PLACE` in a clause not about someone
      else of the user's: :func:`about_someone`; or a commute's route:
      :data:`_ROUTE`) and ``new`` neither fills ``residence`` nor names a place: "我在深圳
      一家电商公司做后端" stays beside "我跳槽了，现在在一家游戏公司做服务端" (the job
      changed, the city did not), unless ``new`` names its new workplace (:data:`_NEW_WORKPLACE`)
      and ``older`` names no city around its own (:data:`_CITY_OF_WORK`: "在博世做销售");
      "I live in Lisbon" is retired by "we relocated to Berlin";
    - ``new`` is a promotion (:data:`_PROMOTION`) and ``older`` a work statement that is
      no promotion: the employer stays;
    - ``older`` says the user retired and ``new`` says it again ("our first proper holiday
      since I retired" after "I'm a retired primary teacher": :data:`_RETIRED`), not that they
      went back to work (:data:`_UNRETIRED`): nothing changed;
    - ``new`` states a child's grade or stage and names no school, and ``older`` names the
      school (:data:`_SCHOOL_NAMED`: "四年级了" keeps "转学去了实验小学"): the school stays;
    - ``new`` says who the advisor is now and nothing else of the studies (:func:`_advisor_only`),
      and ``older`` states the programme (degree, year, major) besides: the programme stays;
    - ``new`` is a study statement naming no university (:data:`_INSTITUTION`: "switched
      courses, doing history now") and not a leaving (:data:`_LEFT_STUDY`), and ``older``
      names one ("a law student at Edinburgh"): the university stays;
    - ``new`` is a work statement naming no occupation (:data:`_OCCUPATION_ANY`: a new
      employer, a transfer) and no end of work (:data:`_WORK_ENDED`), and ``older`` names
      the occupation and no retirement ("I'm a data scientist at a fintech startup", "在西安做医疗器械销售"):
      the occupation stays;
    - ``new`` changes the shift only and ``older`` states the job ("我开出租的，白班"): the job stays;
    - ``new`` fills ``residence`` only by talking about the move itself
      (:data:`_THE_MOVE`: "搬家全靠我一个人"): it names no new home.

    Linear in the texts' length."""
    if "residence" in new_slots and not _PLACE.search(new) and "residence" not in slots_of(_THE_MOVE.sub(" ", new)):
        return True
    if "work" in new_slots and _PROMOTION.search(new) and not _PROMOTION.search(older):
        return True
    if "work" in new_slots and _RETIRED.search(older) and _RETIRED.search(new) and not _UNRETIRED.search(new):
        return True
    if any(n.startswith("school") for n in new_slots) and _SCHOOL_NAMED.search(older) and not _SCHOOL_NAMED.search(new):
        return True
    if "study" in new_slots and _advisor_only(new) and "study" in slots_of(_ADVISOR.sub(" ", older)):
        return True
    if "study" in new_slots and _INSTITUTION.search(older) and not _INSTITUTION.search(new) and not _LEFT_STUDY.search(new):
        return True
    if "work" in new_slots and _OCCUPATION_ANY.search(older) and not _OCCUPATION_ANY.search(new) and \
            not _WORK_ENDED.search(new) and not _RETIRED.search(older):
        return True
    if "shift" in new_slots and "work" not in new_slots and ("work" in slots_of(older) or _OCCUPATION_ANY.search(older)):
        return True
    if "residence" in new_slots or _PLACE.search(new) or \
            ("work" in new_slots and _NEW_WORKPLACE.search(new) and not _CITY_OF_WORK.search(older)):
        return False
    own = [piece for piece in _SLOT_PIECE.split(older) if piece.strip() and not about_someone(piece)]
    return any(_PLACE.search(piece) for piece in own) or bool(_COMMUTE.search(older) and _ROUTE.search(older))


#: Slots a sentence about someone else of the user's can still fill: "my girlfriend
#: Zoe..." says the user is in a relationship; "she was born on May 3rd" ends a pregnancy.
_SHARED_SLOTS = ("relationship", "pregnancy")


@dataclass(frozen=True)
class Clause:
    """One clause of a turn: its text, the separator that followed it in the turn,
    whether its sentence's question mark belongs to it (the sentence's last clause), and
    the index of its sentence in the turn."""

    text: str
    sep: str
    asked: bool
    sentence: int = 0


@dataclass(frozen=True)
class Formed:
    """One memory a turn forms: its text (the user's words), whether it is a lasting
    fact (profile scope), its type (``preference`` / ``semantic`` when lasting, else
    ``episodic``), its supersede slot (:func:`slot_of`) or None, and ``attribute``:
    ``condition`` (:data:`CHRONIC`) or ``health`` (:data:`HEALTH`) for a lasting fact
    about the health of the user or their people with no slot, else None."""

    text: str
    durable: bool
    type: MemoryType
    slot: str | None
    attribute: str | None = None


@dataclass(frozen=True)
class Analysis:
    """What a user turn yields.

    Attributes:
        memories: the memories formed, in the turn's order: the disclosure clauses, one
            memory per slot statement and one for the rest ("我在深圳做后端，腰椎间盘突出
            又犯了": the job and the back pain, so a new job retires only the first).
        kinds: the kind of each clause (:data:`ClauseKind`), in order.
        dropped: why nothing was kept, when ``memories`` is empty (the commonest clause
            kind of the turn: ``request``, ``question``, ``small_talk``, ``meta``, ``other``).
        statement: when ``memories`` is empty, the turn's ``other`` clauses that say enough
            (:data:`STATEMENT_WORDS` Latin words or :data:`STATEMENT_CJK` CJK characters)
            in a turn that asks nothing: a statement about something else ("Ivy was born
            on August 21st"), kept when nothing better (an answer to the other side's
            question) is found.
    """

    memories: tuple[Formed, ...]
    kinds: tuple[ClauseKind, ...]
    dropped: str = ""
    statement: Formed | None = None

    @property
    def text(self) -> str:
        """All formed memories' texts, joined (tests and the inspector)."""
        return " ".join(m.text for m in self.memories)


def clauses(text: str) -> list[Clause]:
    """The clauses of ``text`` (step 1 of the module docstring). Linear in ``len(text)``."""
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


def _core_en(text: str) -> str:
    return _LEAD_EN.sub("", text.strip()).strip()


def _core_zh(text: str) -> str:
    return _LEAD_ZH.sub("", text.strip()).strip()


#: The user's age or the age of someone of theirs ("my 7 year old", "turning 50", "三岁了").
_AGE = re.compile(r"\b\d{1,3}[\s-]*(?:years?|yrs?|months?|mos?|weeks?)[\s-]*old\b|\bturn(?:s|ing|ed)\s+\d{1,3}\b"
                  r"|\b(?:aged?)\s+\d{1,3}\b|[一二三四五六七八九十两\d]{1,3}(?:岁|个月大)", re.IGNORECASE)
_MY_AGED_EN = re.compile(r"\b(?:my|our)\s+\d{1,2}[\s-]*(?:years?|yrs?|months?|mos?)[\s-]*old\b", re.IGNORECASE)
#: A hypothetical, not a fact: "what if I were allergic", 如果我过敏.
_HYPOTHETICAL = re.compile(r"\b(?:if|whether|suppose|supposing|imagine|hypothetically)\b|如果|要是|假如|万一", re.IGNORECASE)
#: Diet words a verbless fragment describes the user by ("vegan now", "pescatarian remember").
_DIET_WORD = re.compile(r"\b(?:vegetarian|vegan|pescatarian|plant-based|keto|gluten-free|dairy-free|lactose[\s-]intolerant|"
                        r"halal|kosher|sober|teetotal)\b", re.IGNORECASE)


def _attributive(core: str) -> bool:
    """An ask (a request or a question) that carries a fact about the user or their people
    as an attribute of the person it names (the attributive use of a state: Quirk et al.,
    *A Comprehensive Grammar of the English Language*, 1985, 7.34 on attributive and
    predicative adjectives; in Chinese the topic-comment clause before the question,
    Li & Thompson 1981, ch. 4): "can my diabetic dad eat mango", "what do I get my
    7 year old", "for my twins Mateo and Lucia", "我家娃对鸡蛋过敏能吃啥", "我孙女三岁了不爱
    吃青菜咋办". The person must be the user's (:data:`_MY_SOMEONE_EN` / :data:`_MY_SOMEONE_ZH`,
    a bare Chinese kin term leading the clause with a lasting condition, :data:`_KIN_LEAD_ZH`:
    "弟弟不是蛋白过敏嘛", or I / 我) and the attribute lasting: a condition (:data:`HEALTH`;
    for the user themselves an allergy, a diagnosis or, as the comment of 我, a chronic
    condition, :data:`_I_CHRONIC_ZH`: "我痛风能吃吗", not a passing symptom, "我头疼怎么办", nor one supposed with 的话), a diet
    (:data:`_DIET_WORD`), an age (:data:`_AGE`) or a name (:data:`_NAMED_PERSON`); a
    hypothetical ("what if I were allergic": :data:`_HYPOTHETICAL`) is none."""
    if _HYPOTHETICAL.search(core):
        return False
    kin = _KIN_LEAD_ZH.match(core)
    if kin and (_CONDITION.search(core, kin.end()) or _names_chronic_condition(core[kin.end():])):
        return True  # 妈糖尿病能吃西瓜吗: a bare kin term is the speaker's own relative
    if not (_MY_SOMEONE_EN.search(core) or _MY_SOMEONE_ZH.search(core) or _NAMES_USER.search(core)
            or _MY_AGED_EN.search(core)):
        return False
    if _MY_AGED_EN.search(core):
        return True  # "my 7 year old": the person named by their age
    person = bool(_MY_SOMEONE_EN.search(core) or _MY_SOMEONE_ZH.search(core))
    if _NAMED_PERSON.search(core) or (person and _AGE.search(core)):
        return True
    if _CONDITIONAL_ZH.search(core):
        return False  # 我痛风的话能吃吗: "if I had gout", no statement
    return bool((HEALTH.search(core) and (person or _CONDITION.search(core) or _I_CHRONIC_ZH.match(core)))
                or _DIET_WORD.search(core))


#: A Chinese clause led by a bare kin term ("妈糖尿病...", "弟弟不是蛋白过敏嘛", "老婆乳糖
#: 不耐受..."): used bare, a kin term names the speaker's own relative, as "Mom" does in
#: English (Dahl & Koptjevskaja-Tamm 2001 on kin terms as proper names; in Chinese the bare
#: kin term in topic position is definite, Li & Thompson 1981, 4.2). Generic people
#: (孩子, 宝宝, 老人) are not among them: "孩子过敏怎么办" may ask about children at large.
_KIN_LEAD_ZH = re.compile(r"^" + KIN_BARE_ZH + r"(?![们子妹弟姐哥妈爸夫嫂])")
#: The speaker with a chronic condition as the comment of the topic 我 (the double-subject
#: construction, Li & Thompson 1981, 4.1: "我痛风能吃海鲜吗", "我高血压能喝咖啡吗"): the
#: question presupposes the condition. A passing symptom ("我头疼怎么办") is none.
_I_CHRONIC_ZH = re.compile(r"^(?:我|俺)(?:本身|本来|自己|一直|也|还|有|是)*(?:高血压|高血脂|高血糖|糖尿病|痛风|哮喘|湿疹|鼻炎|贫血|"
                           r"胆固醇高|血压高|血脂高|血糖高|尿酸高)")
#: The conditional 的话 ("if", Li & Thompson 1981, 23.2): "我痛风的话能吃吗" supposes.
_CONDITIONAL_ZH = re.compile(r"的话")


#: The speaker's own affair named with its possessive dropped, as the subject
#: ("Surgery got moved up to July 14", "Appointment is at 3", "Lease ends in May":
#: situational ellipsis of the determiner, Biber et al. 1999, 3.7).
_OWN_AFFAIR_EN = re.compile(r"^(?:surgery|operation|appointment|appt|procedure|biopsy|scan|mri|chemo|physio|therapy|treatment|"
                            r"interview|lease|rent|mortgage|commute|shift|due\s+date|visa|wedding)\s+(?:is|was|got|has|had|"
                            r"ends?|starts?|moved|went|will|keeps?|\w+ed)\b", re.IGNORECASE)
#: A reminder ("remember my blood sugar", "don't forget I'm vegan", 别忘了我..., 记得我...):
#: the imperative of remembering restates a fact the other side was told (a directive
#: whose content is an assertion: Searle 1976 on indirect assertives), so the clause is
#: a disclosure when what follows names the user or their people.
_REMINDER_EN = re.compile(r"^(?:remember|don't\s+forget|dont\s+forget|do\s+not\s+forget|keep\s+in\s+mind|bear\s+in\s+mind)\b"
                          r"(?:\s+that)?", re.IGNORECASE)
_REMINDER_ZH = re.compile(r"^(?:别忘了|不要忘了|记得|记住)")
#: "<Name> and I" / "my wife and I" as the subject: the user is part of it.
_WITH_ME_EN = re.compile(r"^(?:(?:my|our)\s+)?[\w'-]+\s+and\s+(?:i|me)\b"
                         r"|^guess\s+who(?:'s|\s+is|\s+just|\s+finally|\s+got)\b", re.IGNORECASE)  # "guess who's off nights": the speaker
#: The user as the object of a statement ("Doc took me off the old pill", "they moved me
#: to days"): what happened to the user is about the user.
_ME_EN = re.compile(r"\b(?:me|myself)\b", re.IGNORECASE)
#: A verbless fragment that starts "on <something>" ("on glipizide", "on night shifts this
#: month", "on days now"): "I'm on ..." with the subject and copula dropped.
_ON_EN = re.compile(r"^on\s+(?!it\b|(?:my|the|your)\s+way\b|top\b|second\b|(?:a|the)\s+(?:phone|call)\b)[\w-]+", re.IGNORECASE)
_WH_EN = re.compile(r"\b(?:what|whats|what's|why|how|when|where|which|who)\b", re.IGNORECASE)


def _self_description(core: str) -> bool:
    """A verbless English fragment that describes the user with "I'm" dropped (conversational
    ellipsis of subject and copula, Biber et al., *Longman Grammar of Spoken and Written
    English*, 1999, 3.7 on situational ellipsis; Quirk et al. 1985, 12.47): a condition
    ("Type 2 diabetic", "allergic to shellfish btw": :data:`HEALTH`), a diet ("vegan now":
    :data:`_DIET_WORD`), "on <something>" (:data:`_ON_EN`), or a noun phrase with a state
    word ("Metformin now", "bank fishing from here on out": :data:`STATE`) of at most eight
    words. No question word ("now what")."""
    words = _LATIN_WORD.findall(core)
    if not words or len(words) > 8 or _WH_EN.search(core):
        return False
    if HEALTH.search(core) or _DIET_WORD.search(core) or _ON_EN.match(core):
        return True
    rest = _LATIN_WORD.findall(STATE.sub(" ", core))
    return len(rest) < len(words) and len(rest) >= 1 and bool(_FROM_NOW_ON.search(core) or _NOW_END.search(core))


#: "from now on", "from here on (out)", "for good": a lasting change of state.
_FROM_NOW_ON = re.compile(r"\bfrom\s+(?:now|here)\s+on(?:\s+out)?\b|\bfor\s+good\b", re.IGNORECASE)
#: "<something> now" at the end of a fragment: the new state ("Metformin now", "days now").
_NOW_END = re.compile(r"\b(?:now|these\s+days|nowadays)\W*$", re.IGNORECASE)
#: A Chinese clause with no subject whose verb takes an indefinite object with 个 / 一个 /
#: 一套 ... and no 了 ("南山区租个一室一厅", "买个二手车"): an unrealized event (V个N marks an
#: indefinite, not yet had object; Li & Thompson 1981, 4.2 and 6.1 on 了 and realized
#: events) that sets up the question after it, not a fact about the user.
_INDEFINITE_ZH = re.compile(r"^[\u4e00-\u9fff]{0,6}?(?:租|买|找|换|报|学|办|弄|养|搞|开|装|请)(?:个|一个|一套|一辆|一只|一份|一间|点)")
#: A Chinese clause that opens, after its time words (昨天, 上个月, 前两天...) and an adverb
#: (刚, 已经, 终于...), with a one- or two-character verb and the perfective 了 / experiential
#: 过, and goes on to an object ("前两天拔了智齿", "最近胖了十斤", "上个月考过了科目三"): a
#: realized event with no subject of its own. A Chinese zero subject in the first clause of
#: a turn refers to the speaker unless context names someone else (Li & Thompson 1981,
#: ch. 24 on zero pronouns; Li & Thompson 1981, 6.1 on 了 and realized events), so it is
#: the user's episode. The verb-了 must not end the clause ("试了": a reaction) and the
#: clause must not name the other side (你 / 您).
_TIME_ZH = PAST_TIME_ZH
_PERFECTIVE_ZH = re.compile(r"^" + _TIME_ZH + r"*(?:刚刚|刚|才|已经|终于|又|也|还)?[一-鿿]{1,2}(?:了|过)(?:了)?(?=[一-鿿\d])"
                            r"(?!.*[你您])")
#: Subjectless impersonal verbs (weather, 下雨了): no one's event.
_IMPERSONAL_ZH = re.compile(r"雨|雪|风|雾|雷|天气|降温|升温|停电|停水|堵车|天黑|天亮|天冷|天热|变天|过年|春节")
#: A change of state told with the sentence-final 了 and no subject ("换平台了", "断奶成功了",
#: "N3过了", "团团8个月了"): sentence-final 了 marks a currently relevant state, something
#: that has come to hold (Li & Thompson 1981, ch. 9), and the zero subject of a turn's
#: opening clause is the speaker or what the speaker names as the topic (Li & Thompson
#: 1981, ch. 24 on zero pronouns; ch. 4 on topic-comment). At least three characters before
#: 了 ("吃饱了", "到家了" and "试了" are replies of the moment, not news); not the
#: exclamative 太…了 ("太好了"), not an impersonal or calendar predicate (:data:`_IMPERSONAL_ZH`:
#: "快过年了"), not naming the other side (你 / 您: "辛苦你了"), and not a choice among the
#: options talked about, a demonstrative (这家 / 那个) or a decision with 就 ("就这家了"); not
#: 快 / 要…了, the imminent "about to" (Li & Thompson 1981, 6.1: "快到周末了" has not happened).
_CHANGED_ZH = re.compile(r"^(?!就|快|要)(?!.*[你您])(?!.*[这那](?:个|家|款|种|样|么|些))(?!.*太[\u4e00-\u9fff]{1,3}了)[\u4e00-\u9fffA-Za-z0-9]{3,}了[啊呀啦哈!！~～\u2600-\u27bf\U0001f300-\U0001faff]*$")
#: An opening clause with no subject led by 在 ("在减肥", "还在喂母乳", "一直在吃药", "在杭州
#: 上班"): 在 before a verb is the durative aspect, an ongoing activity (Li & Thompson 1981,
#: 7.2), before a place it locates the subject; either way the zero subject of a turn's
#: opening clause is the speaker's (ch. 24). Not "在吗" / "在不在" (greetings) nor a
#: demonstrative or question word after 在.
_ONGOING_ZH = re.compile(r"^(?:还|正|一直|也|都)?在(?!吗|嘛|不在|哪|这|那)[\u4e00-\u9fff]{2}")
_PLANNED_ZH = re.compile(r"^" + _FUTURE_TRIP_ZH)
#: A trade named by a verb-object phrase with 的 and no copula or subject ("跑美团外卖的",
#: "干装修的", "开出租的", "卖保险的"): the 的 construction names a class of people by what
#: they do (Zhu Dexi 1961 on 的 nominalizations; Li & Thompson 1981, 20.3), "(我是)跑外卖的",
#: the speaker's occupation in an opening clause (ch. 24). The verbs are those of a trade:
#: run (a route), do, drive, sell, deliver, teach, repair.
_TRADE_ZH = re.compile(r"^(?:跑|干|做|开|卖|送|教|修)(?!得)[\u4e00-\u9fffA-Za-z0-9]{1,8}?的$")
#: A pseudo-cleft with no subject ("快递用的中通", "开的是比亚迪", "养的是布偶"): "what (I)
#: use / drive / keep is X", the 的 nominalization of a verb of use or keeping as the
#: topic and the thing as the comment (Li & Thompson 1981, 20.3 on nominalizations; ch. 4
#: on topic-comment): the speaker's habit or possession in an opening clause (ch. 24).
_CLEFT_ZH = re.compile(r"^[\u4e00-\u9fff]{0,4}?(?:用|开|骑|住|养|穿|喝|抽|戴)的(?:是)?(?![什哪啥谁])[\u4e00-\u9fffA-Za-z0-9]{2,}")
#: A Chinese alternative question (选择问句: "早上量好还是晚上量好", Li & Thompson 1981,
#: 18.3): "A 还是 B" ending in a judgement. 还是 before a negation is no disjunction but the
#: adverb "still" ("腱鞘炎还是没好": still not better) or "had better" ("还是不去好").
_ALTERNATIVE_ZH = re.compile(r"还是(?![不没])\S{0,12}?(?:好|对|行|合适|划算|呢)[。！!～~…\s]*$")
_PARTICLES_ZH = "。！!～~…啊呀呢吧嘛哈 "


def _alternative_zh(core: str) -> bool:
    """``core`` is a Chinese alternative question with no final particle, "A 还是 B" whose two
    halves are parallel predicates, sharing their first or last character ("饭前吃还是饭后吃",
    "去爬山还是去看展": 选择问句, Li & Thompson 1981, 18.3). The adverb 还是 ("still", "after
    all": "我还是喜欢猫", "最后还是去了北京") follows a subject or a time word and is no
    disjunction of parallel halves; before a negation it is "still" (:data:`_ALTERNATIVE_ZH`)."""
    at = core.find("还是")
    if at < 2:
        return False
    before, after = core[:at], core[at + 2:].rstrip(_PARTICLES_ZH)
    if not after or after[0] in "不没":
        return False
    return after[0] in before[-4:] or after[-1] == before[-1]


#: Leave-taking: the speaker goes off to do something now ("我先去做饭了", "那我这就去买",
#: "我去忙了"): 先 / 这就 / 马上 + 去 + a short verb phrase, closing the conversation
#: (a pre-closing, Schegloff & Sacks 1973 "Opening up closings"). Only the turn's last
#: clause that says something is read so ("我先去医院复查了，医生说恢复得不错" tells more).
_LEAVE_ZH = re.compile(r"^我?(?:就|也)?(?:先|这就|马上|现在就|赶紧|得|该)去[\u4e00-\u9fffA-Za-z0-9]{1,6}?(?:了|啦|咯|喽)?[啊呀哈~～!！]*$"
                       r"|^我?(?:就|也)?去(?:忙|睡|睡觉|吃饭|做饭|洗澡|上课|上班|开会|试试|试一下|看看)(?:了|啦|咯|喽)?[啊呀哈~～!！]*$")
#: A 的 phrase with no head that says what the thing asked for must be able to do ("骑车能戴的",
#: "适合老人用的"): a headless relative clause (Li & Thompson 1981, 20.3) modifying the
#: object of the ask before it, not a statement about the speaker.
_SPEC_ZH = re.compile(r"^(?!.*[我咱俺])[\u4e00-\u9fffA-Za-z0-9]{0,6}(?:能|可以|适合|方便|好)[\u4e00-\u9fffA-Za-z0-9]{1,6}的$")


def clause_kind(clause: Clause, first: bool = False, after_statement: bool = False,
                opening: bool | None = None) -> ClauseKind:
    """The kind of one clause (step 2 of the module docstring); ``first``: the turn's
    first clause (a pronoun there has no antecedent in the turn: "他下夜班白天睡不好"
    is about someone named earlier, so it is ``other``); ``after_statement``: the clause
    before it in its sentence is a statement with a subject of its own that is not the
    user ("pickle hated the car ride, yowled the whole way"): a subject-less clause after
    it shares that subject (coordination ellipsis, Quirk et al. 1985, 13.2), so a past
    tense first is no dropped "I"; ``opening``: no clause before it in the turn says
    anything (only small talk or talk about the conversation: "在吗 跑外卖的"), default
    ``first``: a Chinese zero subject there is the speaker (Li & Thompson 1981, ch. 24)."""
    text = clause.text.strip()
    opening = first if opening is None else opening
    if _NUMERAL.fullmatch(text):
        return "other"  # "43": a quantity, the answer to a how-many question, no small talk
    if not text or is_small_talk(text):
        return "small_talk"
    if not _CJK.search(text) and _REVISION_EN.match(_core_en(text)):
        return "request"  # "make it shorter": a revision of the reply, no standing instruction
    if PREFERENCE_CUES.search(text) and not _LOVE_YOU_EN.search(text):
        return "disclosure"  # a liking or a standing instruction: "请回答简洁一点", "keep it short"
    if not (_core_zh(_core_en(text)) if _CJK.search(text) else _core_en(text)).strip(" !.~…"):
        return "meta"  # only a discourse word: "跟你说一下", "heads up"
    if _CJK.search(text):
        core = _core_zh(text) or text
        # "说一下红烧肉的做法": a lead word (说一下, "let me say") that is the ask's verb when no subject follows it
        request = _request_zh(core) or bool(core != text and _REQUEST_ZH.match(text) and not _NAMES_USER.search(core))
        asks = request or clause.asked or bool(
            (_QUESTION_END_ZH.search(core) and not _ESTIMATE_ZH.match(core)) or _QUESTION_WORD_ZH.search(core))
        if asks and _attributive(core):
            return "disclosure"  # 我家娃对鸡蛋过敏能吃啥: the ask carries a fact about the user's people
        if _REMINDER_ZH.match(core) and (_FIRST_PERSON_ZH.search(core[2:].lstrip("了")) or _MY_SOMEONE_ZH.search(core)):
            return "disclosure"  # 别忘了我对花生过敏: a reminder restates a fact
        if request:
            return "request"
        if asks or _ALTERNATIVE_ZH.search(core) or _alternative_zh(core):
            return "question"
        if _DEICTIC_ZH.search(core) and not _NAMES_USER.search(core):
            return "meta"  # 这个太贵了: about the reply
        if _META_ZH.search(core) or is_small_talk(core):
            return "meta" if core != text or not is_small_talk(core) else "small_talk"
        if _FIRST_PERSON_ZH.search(core) or _MY_SOMEONE_ZH.search(core) or _AS_A_ZH.search(core):
            return "disclosure"
        if _PRONOUN_ZH.search(core):
            return "other" if first else "disclosure"
        if _PERFECTIVE_ZH.match(core) and not _IMPERSONAL_ZH.search(core) and not after_statement:
            return "disclosure"  # 前两天拔了智齿: a realized event with its subject dropped is the speaker's
        if _INDEFINITE_ZH.match(core) and "了" not in core:
            return "other"  # 南山区租个一室一厅: something not yet done, the topic of an ask
        if opening and not after_statement and not _IMPERSONAL_ZH.search(core) and (
                _CHANGED_ZH.match(core) or _ONGOING_ZH.match(core) or _PLANNED_ZH.match(core) or _TRADE_ZH.match(core)
                or _CLEFT_ZH.match(core)):
            return "disclosure"  # 换平台了 / 还在喂母乳 / 下个月去新加坡开会 / 跑外卖的: the speaker, subject dropped
        if slots_of(core, first=True):
            return "disclosure"  # 二战考研: an attribute of the user's (a slot's own words), subject dropped
        if (DURABLE_ZH.search(core) or CHANGE.search(core)) and not _request_zh(core):
            return "disclosure"  # Chinese drops the subject: "在上海工作" is the user's
        return "other"
    core = _core_en(text) or text
    surprise = _MIRATIVE_EN.match(text)
    if surprise and surprise.end() < len(text):
        told = _core_en(text[surprise.end():])
        if _FIRST_PERSON_EN.search(told) or _MY_SOMEONE_EN.search(told):
            return "disclosure"  # "turns out im allergic to cats??": news, not a question
    request = bool(_REQUEST_EN.search(core))
    unmarked = bool(_QUESTION_START_EN.search(core)) and not (_PAST_AUX_EN.match(core) and not _AUX_SUBJECT_EN.match(core))
    asks = request or bool(_QUESTION_IN_EN.search(core) or clause.asked or unmarked)
    if asks and _attributive(core):
        return "disclosure"  # "can my diabetic dad eat mango": the ask carries a fact about the user's people
    if _REMINDER_EN.match(core) and (_NAMES_USER.search(core[8:]) or _MY_SOMEONE_EN.search(core)):
        return "disclosure"  # "Remember my blood sugar though": a reminder restates a fact
    if request:
        return "request"
    if asks:
        return "question"
    names_user = bool(_NAMES_USER.search(core) or _MY_SOMEONE_EN.search(core))
    if not names_user and _REACTION_EN.search(core):
        return "meta"  # "thx these look good", "ur a lifesaver", "gonna try that tonight"
    verbless = not _VERB_EN.search(_RELATIVE_TAIL_EN.sub(" ", core))
    before_for = _FOR_MY_EN.sub("", core)  # "gift ideas for my dad": whom the thing asked for is for
    if verbless and not _FIRST_PERSON_IN_EN.search(core) and not _attributive(core) and not _NAMES_USER.search(before_for) \
            and not _MY_SOMEONE_EN.search(before_for) and (
            _QUERY_NP_EN.match(core) or (_COMPARATIVE_EN.match(core) and not _NEGATED_EN.match(text))):
        return "request"  # "recipe for banana bread", "gift ideas for my dad", "shorter and with more emojis"
    if _META_EN.search(core) or (_DEICTIC_EN.search(core) and not _NAMES_USER.search(core)):
        return "meta"
    subject = _TIME_LEAD_EN.sub("", core)
    dropped_i = bool(_DROPPED_I_EN.search(subject)) and not _ABOUT_REPLY_EN.match(subject) and not after_statement
    if _FIRST_PERSON_EN.search(subject) or _MY_SOMEONE_EN.search(core) or _AS_A_EN.search(core) or dropped_i \
            or _WITH_ME_EN.match(subject) or _OWN_AFFAIR_EN.match(subject):
        return "disclosure"
    verb = _VERB_EN.search(core)
    if _ROLE_NP_EN.match(core) and not verb:
        return "disclosure"  # "arch major at UT Austin": "I'm" dropped
    if not verb and _self_description(core):
        return "disclosure"  # "allergic to shellfish btw", "on night shifts this month", "vegan now": "I'm" dropped
    if len(_LATIN_WORD.findall(core)) >= 3 and _ME_EN.search(core, 1):
        return "disclosure"  # "Doc took me off the old pill": the user is the object
    if _PRONOUN_EN.search(core) and not first:
        return "disclosure"  # "..., she loves gardening": its antecedent is kept with it
    if _DROPPED_I_EN.search(subject) and _ABOUT_REPLY_EN.match(subject) and not names_user:
        return "meta"  # "figured it out", "got it working", "tried that": what the reply's suggestion did
    return "other"


#: A Chinese clause that names who or what it is about at its start: the speaker, the other
#: side, a pronoun or someone of the user's.
_NAMES_ITS_SUBJECT_ZH = re.compile(r"^(?:我|咱|俺|你|您|他|她|它)|^" + _PEOPLE_ZH)


def elided_reply(text: str) -> bool:
    """``text`` is a Chinese reply whose first clause that says something (not small talk nor
    talk about the conversation) names no subject of its own ("基本不吃
    或者一个面包", "雅迪的 跑了两年了"): what it is about is what the other side just asked
    ("你平时早饭一般吃什么？"), left out because the question supplies it (a zero pronoun
    takes its referent from the discourse before it, Li & Thompson 1981, ch. 24), so the
    reply needs the question to be understood. Linear in ``len(text)``."""
    found = analyse(text)
    said = [c for c, k in zip(clauses(text), found.kinds, strict=True) if k not in ("small_talk", "meta")]
    if not said or not _CJK.search(said[0].text):
        return False
    core = _core_zh(said[0].text) or said[0].text
    return not (_NAMES_ITS_SUBJECT_ZH.search(core) or _MY_SOMEONE_ZH.search(core) or _NAMED_PERSON.search(core))


def slot_of(text: str) -> str | None:
    """The supersede slot a durable statement fills (``residence``, ``work``, ``study``,
    ``diet``, ``relationship``, ``vehicle``, ``pregnancy``, ``shift``), or None. Read clause by clause
    (:data:`_SLOT_PIECE`), the first slot found wins; a clause led by "my
    <someone>" / 我<家人> or a pronoun (or, with no subject of its own, following such a
    clause) is about that person, unless the user is the object ("they made me
    manager": :data:`_ME_OBJECT`): it fills only
    :data:`_SHARED_SLOTS`, or ``school`` / ``school:<son|daughter|grandson|granddaughter>``
    when it says a child's school stage (:data:`_SCHOOL`: "我女儿上初二" -> ``school:daughter``,
    "朵朵考上一中了" -> ``school``; compare two slots with :func:`same_slot`)."""
    someone = about_someone(text)
    if _SCHOOL.search(_TAUGHT_CLASS.sub(" ", text)) and (someone or (bool(_CJK.search(text)) and not _FIRST_PERSON_ZH.search(_core_zh(text)))):
        who = [key for key, pattern in _SCHOOL_WHO if pattern.search(text)]
        return f"school:{who[0]}" if len(who) == 1 else "school"
    found = slots_of(text, first=True)
    return found[0] if found else None


@lru_cache(maxsize=4096)
def slots_of(text: str, first: bool = False) -> tuple[str, ...]:
    """Every slot of :data:`_SLOTS` a statement fills, in order (:func:`slot_of` reads the
    first; ``first``: stop there). A transfer by the employer to a place
    (:data:`_TRANSFER`: "公司把我调到重庆了", "I got transferred to Denver") fills
    ``work`` and ``residence``: it changes where the user works and lives; one to a
    department ("调去门诊") neither (the occupation and the home stay). Linear in ``len(text)``;
    cached (a pure function of the text, asked for the same clause and memory several
    times while a turn is analysed)."""
    out: list[str] = []
    led = False  # the clause before was led by someone of the user's
    for piece in _SLOT_PIECE.split(text):
        piece = _ORG_MOVE.sub(" ", piece)
        core = _core_zh(_core_en(piece))
        if not core:
            continue
        own = _OWN_SUBJECT.match(core)
        if own:
            led = about_someone(piece) and not _EXPLETIVE.match(core) and not _ME_OBJECT.search(piece)
        mine = not led  # a clause with no subject of its own has the one before ("my sister got a job, now works at Globex")
        if _FORMER.search(piece):
            continue  # "I used to live in Paris": a former value, no current one
        for name, pattern in _SLOTS:
            if (mine or name in _SHARED_SLOTS) and name not in out and pattern.search(piece):
                if name == "study" and _advisor_only(piece) and not _ADVISOR_NAMED.search(piece):
                    continue  # "my supervisor gave me till June": the advisor is mentioned, not said
                out.append(name)
                if first:
                    return tuple(out)
        if mine:
            transfer = _TRANSFER.search(piece)
            if transfer:
                if not (transfer.group("unit") or transfer.group("dept")):  # to a department: the job and home stay
                    out.extend(n for n in ("work", "residence") if n not in out)
    return tuple(out)


#: A move of the place the user works or studies at, not of their home ("学院搬到东校区以后",
#: "the office moved to Leeds"): the organisation is the subject of the verb of moving, so
#: the sentence names no home of the user's; :func:`slots_of` reads the clause without it.
_ORG_MOVE = re.compile(r"(?:学院|学校|校区|公司|单位|办公室|部门|工厂|门店|总部|工作室|实验室|研究所|科室|医院|店里|店)"
                       r"(?:也|已经|都|又|整体|整个)?(?:搬|迁)(?:到|去|来|走)了?(?:[\u4e00-\u9fff]{1,6}?(?:以后|之后|后|了))?"
                       r"|\b(?:the|our|my)\s+(?:office|company|firm|school|lab|department|team|shop|store|clinic|campus|college|"
                       r"faculty|headquarters|hq|studio|practice)\s+(?:has\s+|is\s+|just\s+)?(?:moved|relocated|moving|relocating)"
                       r"(?:\s+(?:to|into)\s+(?:the\s+)?[\w'-]+(?:\s+(?-i:[A-Z])[\w'-]+)?)?", re.IGNORECASE)
#: The advisor, a study attribute of its own (seed 002 §3.2 lists attributes apart): who
#: supervises the user's degree, apart from the programme (degree, year, major,
#: university) a statement may say beside it.
_ADVISOR = re.compile(r"\b" + ADVISOR_EN + r"\b|导师", re.IGNORECASE)
#: A statement that says who the advisor is or that they changed ("my supervisor is Dr
#: Okafor", "switched supervisors", "换导师了", "新导师做推荐系统", "转到王老师名下"): only
#: such an advisor statement fills ``study`` (:func:`slots_of`); a mention ("my
#: supervisor gave me till June", "导师让我改论文") states no value of the slot.
_ADVISOR_NAMED = re.compile(r"\b(?:advisor|adviser|supervisor)\s+(?:is|was|will\s+be|now\s+is)\b|\bnew\s+(?:advisor|adviser|supervisor)\b"
                            r"|\b(?:switched|changed|swapped)\s+(?:my\s+)?(?:advisors?|advisers?|supervisors?)\b"
                            r"|换了?(?:个|一个)?导师|新导师|导师(?:是|叫|换)|名下", re.IGNORECASE)


_STUDY = dict(_SLOTS)["study"]


def _advisor_only(text: str) -> bool:
    """``text`` fills ``study`` by an advisor word alone (:data:`_ADVISOR`): without it, no
    study word is left. Linear in ``len(text)``."""
    return bool(_ADVISOR.search(text)) and not _STUDY.search(_ADVISOR.sub(" ", text))


#: A former state ("used to live in Paris", "I used to be a nurse"): "used to" says it
#: held once and no longer does (Quirk et al. 1985, 4.23), so it names no current value of
#: a slot and retires none.
_FORMER = re.compile(r"\bused\s+to\b", re.IGNORECASE)
#: A transfer by the employer (Chinese 调到 / 调去 / 派到, English "transferred to"),
#: ``unit``: to a unit of the organisation (科 部 门诊 组 岗 处 室 中心 分行 ...: a
#: department, not a place).
_TRANSFER = re.compile(r"(?:调|派|外派|调动)(?:到|去|往)(?:了)?(?P<unit>\S{0,6}?(?:科|部|门诊|组|岗|处|室|中心|分行|支行|病房|车间|项目))?"
                       r"|\b(?:got\s+|been\s+|was\s+)?transferred\s+to\b(?P<dept>\s+(?:the\s+)?\w+\s+(?:team|department|dept|unit|ward|desk))?",
                       re.IGNORECASE)


#: Where :func:`slot_of` cuts a statement into clauses, each with its own subject ("our
#: drummer moved to Calgary" is not the user's move; in "Well, it's done — our new condo
#: is near our daughter in Portland" the home is).
_SLOT_PIECE = re.compile(r"[,.;:!?，。；：！？\n]+|\s+[—–-]{1,2}\s+|—")
#: A clause that names its own subject: the user, someone of the user's (a bare Chinese
#: person word too: :data:`_KIN_LED_ZH`), a pronoun or a name.
_OWN_SUBJECT = re.compile(r"(?:i|i'm|im|i've|i'd|we|we're|we've|my|our|me|he|she|they|he's|she's|they're|his|her|their|"
                          r"it|it's)\b|(?-i:[A-Z][a-z]+)\s|我|咱|俺|他|她|它|" + _PEOPLE_ZH, re.IGNORECASE)
#: The user as the object of what someone did to their work or home ("they made me
#: finance manager", "公司把我调到重庆了"): the slot is still the user's.
_ME_OBJECT = re.compile(r"\b(?:made|hired|promoted|fired|moved|transferred|offered|gave|let)\s+me\b|把我", re.IGNORECASE)
#: "it's" / "it" with no one behind it ("Well, it's done"): no person leads the clause.
_EXPLETIVE = re.compile(r"(?:it|it's|its)\b", re.IGNORECASE)


def same_slot(a: str | None, b: str | None) -> bool:
    """Two memories' slots (:func:`slot_of`) are one: equal, or both ``school`` and one of
    them not keyed by whose school it is ("朵朵考上一中了" and "我女儿上初二")."""
    if not a or not b:
        return False
    if a == b:
        return True
    base_a, _, who_a = a.partition(":")
    base_b, _, who_b = b.partition(":")
    return base_a == base_b == "school" and not (who_a and who_b)


#: A Chinese clause led by a person word with no 我 before it ("男朋友阿杰在北邮读研",
#: "老公下个月调去成都"): Chinese drops the possessor of kin when the speaker's own is
#: meant (Li & Thompson 1981, 4.2.1 on the possessive with kin terms), so the clause is
#: about that person, as "mom's ..." is in English. Not an exclamation (妈呀).
_KIN_LED_ZH = re.compile(r"^" + _PEOPLE_ZH + r"(?!呀|啊|的天)")


def about_someone(text: str) -> bool:
    """``text`` is led by "my <someone>" / 我<家人>, a bare Chinese person word
    (:data:`_KIN_LED_ZH`: "男朋友阿杰在北邮读研") or a pronoun (he, she, 他, 她...): it is
    about that person, not the user."""
    core = _core_zh(_core_en(text))
    return bool(_MY_SOMEONE_EN.match(core) or _MY_SOMEONE_ZH.match(core) or _PRONOUN_EN.match(core)
                or _PRONOUN_ZH.match(core) or _KIN_LED_ZH.match(core)
                or (re.match(r"^(?:my|our)\s", core, re.IGNORECASE) and _MY_SOMEONE_EN.search(core[:40])))


def analyse(text: str, promote: Collection[int] = ()) -> Analysis:
    """The memories a user turn forms (module docstring). Linear in ``len(text)``.
    ``promote``: indices of clauses (:func:`clauses`) to read as disclosures whatever the
    rules say (a learned classifier's picks: :mod:`gateway.memorization.clause_classifier`).
    Memoized (the result is immutable): the classifier's candidates and the memorization
    plan read the same turn."""
    return _analyse(text, frozenset(promote))


@lru_cache(maxsize=1024)
def _analyse(text: str, promote: frozenset[int]) -> Analysis:
    parts = clauses(text)
    found: list[ClauseKind] = []
    opening = True  # nothing but small talk or talk about the conversation so far in the turn
    last = max((i for i, c in enumerate(parts) if not is_small_talk(c.text)), default=-1)
    for i, c in enumerate(parts):
        after = i > 0 and parts[i - 1].sentence == c.sentence and found[-1] == "other" and _third_person_statement(parts[i - 1].text)
        kind = "disclosure" if i in promote else clause_kind(c, i == 0, after, opening)
        if kind != "meta" and i not in promote and _CJK.search(c.text):
            core = _core_zh(c.text)
            if i == last and _LEAVE_ZH.match(core):
                kind = "meta"  # 我先去做饭了: leave-taking closes the turn
            elif kind == "disclosure" and i > 0 and found[-1] in ("request", "question") and _SPEC_ZH.match(core):
                kind = "other"  # 有啥护腰推荐 骑车能戴的: what the thing asked for must do
        found.append(kind)
        opening = opening and found[-1] in ("small_talk", "meta")
    for i, c in enumerate(parts):  # "my granddaughter set this app up for me": the conversation's medium
        if found[i] in ("disclosure", "other") and i not in promote and _ABOUT_THE_APP.search(c.text):
            found[i] = "meta"
    for i in range(len(parts) - 1):  # 最近膝盖有点疼，要不要紧: the passing state is what is asked about
        if found[i] in ("disclosure", "other") and i not in promote and _state_asked(parts, found, i):
            found[i] = "question"
    for i in range(len(parts)):  # "tulips and watering cans, what colours go together": the ask's topic
        if found[i] == "other" and i not in promote and _part_of_ask_en(parts, found, i):
            found[i] = "request"
    kinds = tuple(found)
    kept: list[int] = []
    told = "disclosure" in kinds
    for i, (clause, clause_type) in enumerate(zip(parts, kinds, strict=True)):
        if clause_type == "other" and ((told and _is_statement(clause.text)) or _continues(parts, kept, i)
                                       or _afterthought(parts, kept, i)):
            kept.append(i)  # "It felt welcoming; I want to study counseling next."; "I moved, to Braga"
            continue
        if clause_type != "disclosure":
            continue
        core = _core_zh(_core_en(clause.text))
        if i > 0 and (_PRONOUN_EN.search(core) or _PRONOUN_ZH.search(core)) and (not kept or kept[-1] != i - 1):
            kept.append(i - 1)  # the antecedent: "a gift for my wife, she loves gardening"
        kept.append(i)
    if kept:  # an "other" clause of a kept clause's sentence belongs to it ("Delivery 4: the courier brought...")
        sentences = {parts[i].sentence for i in kept}
        kept = sorted({*kept, *(i for i, k in enumerate(kinds) if k == "other" and parts[i].sentence in sentences)})
    kept = [i for i in kept if not _label(parts, i)]  # "Quick heads up before my question: ..." announces the fact
    if not kept:
        counted: list[str] = [k for k in kinds if k != "other"] or list(kinds) or ["small_talk"]
        dropped = max(("request", "question", "small_talk", "meta", "other"), key=counted.count)
        said: list[int] = []
        if "request" not in kinds and "question" not in kinds:  # else it only sets up the request
            for i, k in enumerate(kinds):
                if k == "other" and (_says_enough(parts[i].text) or _continues(parts, said, i)):
                    said.append(i)
            sentences = {parts[i].sentence for i in said}
            said = [i for i, k in enumerate(kinds) if k == "other" and parts[i].sentence in sentences]
        return Analysis((), kinds, dropped, _formed(_joined(parts, said), told=False) if said else None)
    groups = _groups(parts, kinds, kept)
    merged: list[list[int]] = []
    for group in groups:  # a fragment joins the memory after it ("Work's been rough. I'm a barista...")
        if merged and not _says_enough(_joined(parts, merged[-1])):
            merged[-1] = merged[-1] + group
        else:
            merged.append(group)
    if len(merged) > 1 and not _says_enough(_joined(parts, merged[-1])):
        merged[-2:] = [merged[-2] + merged[-1]]
    return Analysis(tuple(_formed(_joined(parts, group)) for group in merged), kinds)  # all told with a disclosure


#: A capitalised word after the clause's first (a name: "the Y", "Theo"), or a clause led
#: by an -ing participle ("lifeguarding all summer": "I'm" dropped, Biber et al. 1999, 3.7).
_NAMED_OR_DOING_EN = re.compile(r"(?<=\s)[A-Z]|^\W*(?:[A-Z]\w*\s*(?:,|$)|\w+ing\b)")


def _part_of_ask_en(parts: list[Clause], kinds: list[ClauseKind], i: int) -> bool:
    """Clause ``i`` is an English noun phrase with no verb that names neither the user nor
    anyone, of one of two shapes: the alternatives a wh-question right after it asks about
    (X and / or / + Y: "tulips and vintage watering cans, what colours go together",
    "maple+soy milk or aquafaba, which browns better"), or a measure or a "-friendly"
    constraint right after an ask ("need a quick dinner, 20 min max, toddler friendly"): the
    topic of the ask put before it (left dislocation) or a constraint added after it (right
    dislocation; Quirk et al. 1985, 18.37-18.38; Biber et al. 1999, 14.3 on prefaces and
    tags), part of the ask, not a statement. A "no X" constraint ("no sesame obvs") may
    restate a fact and stays as it was."""
    text = parts[i].text
    if _CJK.search(text) or _VERB_EN.search(text) or _NAMES_USER.search(text) or _MY_SOMEONE_EN.search(text):
        return False
    if _NAMED_OR_DOING_EN.search(text) or not _LATIN_WORD.search(text) or _IRREGULAR_PAST_RE.search(text):
        return False  # a name ("Theo, 7, ideas for his party?"), "lifeguarding at the Y", "pills ran out": the user's
    nxt, prev = i + 1, i - 1
    if (nxt < len(parts) and parts[nxt].sentence == parts[i].sentence and kinds[nxt] == "question"
            and _WH_EN.match(_core_en(parts[nxt].text)) and _ALTERNATIVES_EN.search(text)):
        return True
    return (prev >= 0 and parts[prev].sentence == parts[i].sentence and kinds[prev] in ("request", "question")
            and bool(_CONSTRAINT_EN.match(text)))


#: Alternatives joined in a noun phrase: "A and B", "A or B", "A+B", "A vs B".
_ALTERNATIVES_EN = re.compile(r"\s(?:and|or|vs\.?|versus)\s|\+", re.IGNORECASE)
#: A constraint on what is asked for: a measure ("20 min max", "under $50", "for 6 people")
#: or an "X-friendly" / "X-safe" suitability.
_CONSTRAINT_EN = re.compile(r"^(?:(?:under|over|less\s+than|max|at\s+most|up\s+to|around|about|for)\s+)?[$£€]?\d[\w$£€.,]*\s*"
                            r"(?:[a-z]+\s*){0,2}(?:max|tops|or\s+less|or\s+so)?\W*$"
                            r"|^[\w'-]+[\s-](?:friendly|safe|proof)\W*$", re.IGNORECASE)
_IRREGULAR_PAST_RE = re.compile(r"\b(?:" + _IRREGULAR_PAST_EN + r"|gone)\b", re.IGNORECASE)


def _third_person_statement(text: str) -> bool:
    """An English clause with a finite verb whose subject is not dropped: its first word
    is no verb form (:data:`_DROPPED_I_EN`) and a verb follows ("pickle hated the car ride")."""
    core = _core_en(text)
    return not _CJK.search(core) and not _DROPPED_I_EN.search(core) and bool(_VERB_EN.search(core, 1))


def _groups(parts: list[Clause], kinds: tuple[ClauseKind, ...], kept: list[int]) -> list[list[int]]:
    """``kept`` cut into memories: a clause that fills a slot starts its own memory,
    which its continuations (``other`` clauses) and further clauses of the same slot
    join ("I'm not vegetarian anymore, I eat fish now"), and so does a clause without a
    slot led by a pronoun or a Chinese demonstrative (its antecedent is in the group: "my boy
    switched schools, he's at Westdene now", 换了台海豹 原来那台卖了), or led by a conjunction
    of result or reason (:data:`_LINKED`) or ending in "instead" (:data:`_REPLACIVE_EN`), or a Chinese judgement (:func:`_judges_zh`), a
    feeling (:data:`_FEELING`) or a parenthesis right after a clause of the group; a clause after one that ends in a colon is what the colon
    announces ("Big news at work: they made me manager"), one memory with it. The next
    other disclosure starts another."""
    groups: list[list[int]] = []
    current: str | None = None  # the slot of the last group
    for i in kept:
        own = slot_of(parts[i].text) if kinds[i] == "disclosure" else None
        core = _core_zh(_core_en(parts[i].text))
        anaphor = own is None and bool(_PRONOUN_EN.match(core) or _PRONOUN_ZH.match(core) or _DEMONSTRATIVE_ZH.match(core))
        announced = bool(groups) and groups[-1][-1] == i - 1 and parts[i - 1].sep.strip()[:1] in (":", "：")
        if announced:
            groups[-1].append(i)
            current = own or current
            continue
        after = bool(groups) and groups[-1][-1] == i - 1 and parts[i - 1].sentence == parts[i].sentence
        if after and own is None and (_LINKED.match(parts[i].text.strip()) or _REPLACIVE_EN.search(parts[i].text)
                                      or _judges_zh(core) or _FEELING.search(core)):
            groups[-1].append(i)  # "promoted me to head nurse, so I run the ward now"; 搬到闵行了 离我爸妈家近多了
            continue
        if after and _open_parenthesis(parts, groups[-1]):
            groups[-1].append(i)  # "made head of platform (same company, we're 30 now)": an aside to the clause
            continue
        if groups and (own == current or anaphor or (own is None and (current is None or kinds[i] != "disclosure"))):
            groups[-1].append(i)  # same slot, a continuation, or more of the unslotted rest
            continue
        if groups and all(kinds[j] == "other" and parts[j].sentence == parts[i].sentence for j in groups[-1]):
            groups[-1].append(i)  # a lead-in of the clause's own sentence: "some good news, found a flat in Leeds"
            current = own
            continue
        groups.append([i])
        current = own
    return groups


#: A clause about the app the user is talking through ("my granddaughter set this app up
#: for me", "my grandson said I should try this thing", 我孙女给我装的这个软件): the
#: deictic "this" points at the conversation's own medium (Levinson 1983, 2.2.1 on
#: deixis), so it is talk about the conversation, as :data:`_META_EN` is, not a fact.
_ABOUT_THE_APP = re.compile(r"\bthis\s+(?:app|chat\s*bot|chatbot|bot|ai|assistant|chat)\b|\b(?:try|use|using|trying)\s+this\s+thing\b"
                            r"|这个(?:app|APP|软件|应用|小程序|AI|ai|机器人|聊天机器人)", re.IGNORECASE)
#: A clause led by a conjunction of result or reason ("so I run the whole ward now",
#: "because my cholesterol was high", 所以 / 因为 / 因此 / 于是): an adverbial of the clause
#: before it (Quirk et al. 1985, 15.45-15.49 on reason and result clauses; Li & Thompson
#: 1981, ch. 23 on linked clauses), which says why or with what result that clause holds and
#: says nothing without it.
_LINKED = re.compile(r"^(?:so|because|cause|cuz|coz|since|which\s+means|that'?s\s+why)\b|^(?:所以|因为|因此|于是|因而)",
                     re.IGNORECASE)
#: A clause that ends in the replacive "instead" ("I'm doing history now instead"): what it
#: tells replaces what the clause before it named or implied (Quirk et al. 1985, 8.137 on
#: "instead" as a conjunct), so it is the other half of that statement.
_REPLACIVE_EN = re.compile(r"\binstead\W*$", re.IGNORECASE)
#: A Chinese clause led by a demonstrative and a classifier that points back at a thing
#: the clause before named (原来那台卖了, 这家店离我家很近): demonstrative reference
#: (Halliday & Hasan 1976, 2.4), an anaphor as a pronoun is. 个 counts only after 原来 /
#: 以前 / 之前 / 旧 / 老 ("这个周末" is a time, no thing named before).
_DEMONSTRATIVE_ZH = re.compile(r"^(?:原来|以前|之前|旧|老)的?[那这](?:台|辆|个|家|只|套|间|部|款|份|条|位)"
                               r"|^[那这](?:台|辆|家|只|套|间|部|款)(?![周月年天])")
#: A Chinese judgement of the thing the clause before named, with no subject of its own: its
#: distance from somewhere (离公司很近, 离我爸妈家近多了; not 离婚 / 离职 / 离开) or a comparative
#: degree complement (舒服多了, 方便得多: Li & Thompson 1981, ch. 19 on comparison): an
#: adjectival predicate whose zero subject is the topic of the clause before (ch. 24).
_JUDGEMENT_ZH = re.compile(r"^(?:离|距离)(?!婚|职|开|异|世|家出走)[\u4e00-\u9fffA-Za-z0-9]{1,10}?(?:很|挺|特别|非常|比较|更|太|也|都|还|超)*(?:近|远)"
                           r"|(?:多了|得多)[了啊呀啦哈!！~～。\u2600-\u27bf\U0001f300-\U0001faff]*$")


#: A clause that only says how the speaker feels about what the clause before told ("I'm
#: so relieved", 我这当妈的比他还紧张, 一个人带娃快崩了): the evaluation of a narrative
#: (Labov 1972, ch. 9: what the events mean to the teller), which tells nothing without
#: them: the feeling ends the clause, nothing follows it ("I'm nervous about my surgery
#: next week" names its own matter). At most twelve CJK characters in Chinese.
_FEELING = re.compile(
    r"^(?:(?:and|but)\s+)?(?:i'?m|i\s+am|i\s+feel|feeling|i\s+was|i'?ve\s+been)\s+(?:(?:so|really|very|super|pretty|kinda|"
    r"a\s+bit|totally|completely|honestly|just|beyond)\s+)*(?:" + FEELINGS_EN + "|" + FEELINGS_TOLD_EN + ")"
    r"[\s!.~\u2600-\u27bf\U0001f300-\U0001faff]*$"
    r"|^[\u4e00-\u9fff，,]{0,10}?(?:紧张|崩了|崩溃了?|累死了?|累坏了|心累|好累|太累了|烦死了?|头大|压力山大|压力(?:好|很|太|特别|超)?大|"
    r"开心|高兴|难过|郁闷|焦虑|激动)[了啊呀啦哈!！~～。\s\u2600-\u27bf\U0001f300-\U0001faff]*$", re.IGNORECASE)


def _judges_zh(core: str) -> bool:
    """``core`` is a Chinese clause with no subject of its own that judges what the clause
    before named (:data:`_JUDGEMENT_ZH`) and names no condition of health (:data:`HEALTH`:
    "膝盖好多了" is the user's knee)."""
    return (bool(_CJK.search(core)) and not _NAMES_ITS_SUBJECT_ZH.search(core) and not _MY_SOMEONE_ZH.match(core)
            and not HEALTH.search(core) and bool(_JUDGEMENT_ZH.search(core)))


#: A bare question whether something matters, with no subject or object of its own but a
#: deictic one ("is that normal?", "should I be worried?", 要不要紧, 正常不, 严重吗): its zero
#: or deictic subject is the clause before it (Li & Thompson 1981, ch. 24; Halliday & Hasan
#: 1976, 2.4 on reference to a preceding clause).
_ASKS_IF_IT_MATTERS = re.compile(
    r"^(?:(?:is|isn't|was|could)\s+(?:that|this|it)\s+(?:be\s+)?(?:normal|ok|okay|bad|serious|dangerous|concerning|"
    r"a\s+(?:bad\s+)?sign|something\s+to\s+worry\s+about)|should\s+i\s+(?:be\s+)?(?:worried|worry|concerned)|"
    r"do\s+i\s+need\s+to\s+worry)\W*$"
    r"|^(?:这样|这|那样|那)?(?:正常|要紧|严重|有事|没事|有问题|危险|碍事)(?:吗|不|么|嘛|吧|没)?[啊呀。？?~～]*$"
    r"|^(?:要不要紧|正不正常|严不严重|危不危险|碍不碍事|有没有事|有没有问题)[啊呀。？?~～]*$", re.IGNORECASE)


def _state_asked(parts: list[Clause], kinds: list[ClauseKind], i: int) -> bool:
    """Clause ``i`` is the state a bare question right after it in its sentence asks about
    (:data:`_ASKS_IF_IT_MATTERS`: "my knee hurts after running, is that normal?", 最近爬完楼梯
    膝盖有点疼，要不要紧？): the topic of the ask, part of it, not a fact the user tells. A
    lasting condition (:data:`CHRONIC`, :data:`_CONDITION`: "I have asthma") or a slot
    statement holds whatever is asked about it and stays, and so does a clause that names
    someone of the user's ("我家猫咪咪最近老吐毛球，要紧吗": the user has a cat)."""
    nxt = parts[i + 1]
    if nxt.sentence != parts[i].sentence or kinds[i + 1] != "question":
        return False
    if not _ASKS_IF_IT_MATTERS.match(_core_zh(_core_en(nxt.text))):
        return False
    text = parts[i].text
    core = _core_zh(_core_en(text))
    if _MY_SOMEONE_EN.search(core) or _MY_SOMEONE_ZH.search(core) or re.match(_PEOPLE_ZH, core):
        return False  # 我家猫咪咪最近老吐毛球: who the user's people and pets are holds
    return not (CHRONIC.search(text) or _CONDITION.search(text) or slot_of(text))


#: A label before a colon announcing what follows ("Quick heads up before my question:",
#: "Reminder for later:", "context:", 提醒一下：): a preface (Biber et al. 1999, 14.3.1) that
#: names the kind of message, no topic ("Allergies:", "Update on the car saga:" name one).
#: "Update:" and "change of plans:" are left in: they say that what follows replaces
#: something (:mod:`gateway.memorization.changes` reads "change of plans").
_LABEL = re.compile(r"^(?:(?:also|oh|and|so|btw|ok|okay|ps|one|a|quick|small|little|big|huge|good|bad|sad|fun|some|important|"
                    r"random|another)\s+)*(?:heads[\s-]?up|news|reminder|context|background|fyi|"
                    r"note|psa|confession|info|disclaimer)(?:\s+(?:before|for|first)\b[^:：]*)?$"
                    r"|^(?:跟你)?(?:说个事|说件事|提醒一下|提个醒|补充一下|背景|背景信息|好消息|坏消息|先说一下|先说明一下|交代一下|说明一下)$",
                    re.IGNORECASE)


def _label(parts: list[Clause], i: int) -> bool:
    """Clause ``i`` opens its sentence, ends in a colon and is a label (:data:`_LABEL`)."""
    clause = parts[i]
    opens = i == 0 or parts[i - 1].sentence != clause.sentence
    return opens and clause.sep.strip()[:1] in (":", "：") and bool(_LABEL.match(clause.text.strip()))


def _open_parenthesis(parts: list[Clause], group: list[int]) -> bool:
    """The clauses of ``group`` leave a parenthesis open ("head of platform (same company"):
    the clause after them is inside it, an aside to the clause it interrupts (Quirk et al.
    1985, 15.54 on parenthetical clauses). Linear in the group's text."""
    text = "".join(parts[j].text for j in group)
    return text.count("(") + text.count("（") > text.count(")") + text.count("）")


def _formed(memory: str, told: bool = True) -> Formed:
    durable = _durable(memory, told)
    slot = slot_of(memory) if durable else None
    kind = MemoryType.EPISODIC
    if durable:
        kind = MemoryType.PREFERENCE if PREFERENCE_CUES.search(memory) and not slot else MemoryType.SEMANTIC
    attribute = None
    if durable and not slot and HEALTH.search(memory):
        attribute = "condition" if CHRONIC.search(memory) else "health"
    return Formed(memory, durable, kind, slot, attribute)


def _joined(parts: list[Clause], kept: list[int]) -> str:
    """The clauses ``kept`` (indices into ``parts``, ascending) as one text: adjacent
    clauses with the separator they had, others as sentences; the last keeps its full
    stop or exclamation mark."""
    if not kept:
        return ""
    pieces: list[str] = []
    for n, i in enumerate(kept):
        pieces.append(parts[i].text)
        if n + 1 < len(kept):
            pieces.append(_joiner(parts[i], kept[n + 1] == i + 1))
    end = parts[kept[-1]].sep.strip()
    if end and end[0] in ".!。！" and "?" not in end and "？" not in end:
        pieces.append(end)
    return "".join(pieces).strip()


def _joiner(clause: Clause, adjacent: bool) -> str:
    sep = clause.sep
    if _CJK.search(clause.text):
        return sep.strip() or "，" if adjacent else "。"
    if adjacent:
        stripped = sep.strip()
        return f"{stripped} " if stripped else " "
    return ". "


def _afterthought(parts: list[Clause], kept: list[int], i: int) -> bool:
    """Clause ``i`` is a verbless fragment of its own sentence right after a kept clause
    ("so dan and I are done. 3 years.", "闺女考上了！南开！"): an afterthought that adds to
    the statement before it (a right-dislocated or appended fragment, Biber et al. 1999,
    3.7 / 14.3.3 on non-clausal units in conversation): at most three Latin words or four
    CJK characters, no verb, no question mark."""
    if not kept or kept[-1] != i - 1 or parts[i].asked or parts[i].sentence != parts[i - 1].sentence + 1:
        return False
    text = parts[i].text
    if _CJK.search(text):
        return len(_CJK.findall(text)) <= 4 and not CHANGE.search(text)
    return 0 < len(_LATIN_WORD.findall(text)) <= 3 and not _VERB_EN.search(text)


def _continues(parts: list[Clause], kept: list[int], i: int) -> bool:
    """Clause ``i`` continues a kept clause of its sentence ("I moved again, to Braga")."""
    return bool(kept) and parts[kept[-1]].sentence == parts[i].sentence


def _is_statement(text: str) -> bool:
    """A clause that says something (a finite verb, or four CJK characters), not a bare
    phrase ("Recipe for lentils")."""
    if _CJK.search(text):
        return len(_CJK.findall(text)) >= 4
    return bool(_VERB_EN.search(text))


def _says_enough(text: str) -> bool:
    if _CJK.search(text):
        return len(_CJK.findall(text)) >= STATEMENT_CJK
    return len(_LATIN_WORD.findall(text)) >= STATEMENT_WORDS


def _durable(memory: str, told: bool = True) -> bool:
    """Step 4 of the module docstring: ``told``: ``memory`` holds a disclosure (the user
    about themselves or their people), else it is a statement about something else."""
    if slot_of(memory) or _NAMED_PERSON.search(memory) or _PLAN.search(memory):
        return True  # where the user lives, works, studies, what they eat, who their people are: lasting whatever the date
    if (_CONDITION.search(memory) or _names_chronic_condition(memory)) and (told or _FIRST_PERSON_ZH.search(_core_zh(memory))):
        return True  # an allergy, a diagnosis or a chronic condition holds after the day it was found out
    if _DEATH.search(memory):
        return True  # the user's people or pets changed for good (:data:`_DEATH`)
    if ended_of(memory):
        return True  # something lasting ended ("I stopped running", "我不喝咖啡了"): lasting whatever the date
    if is_passing(memory):
        return False  # how the user is right now, a task just finished, the listener: 累瘫了, "just clocked off"
    if told:
        return not is_episode(memory)
    topical = bool(DURABLE_EN.search(memory) or DURABLE_ZH.search(memory))
    if not topical:
        return False
    return not EVENT_TIME.search(memory) or bool(CHANGE.search(memory))


def _names_chronic_condition(text: str) -> bool:
    """``text`` names a chronic condition (:data:`CHRONIC`: "high blood pressure", 痛风),
    not only taking medicine or a pregnancy (those have a slot or change): "went to the
    doctor yesterday, turns out I have high blood pressure" holds after that day."""
    return any(m.group().lower() not in _NOT_A_CONDITION and not m.group().lower().startswith("pregnan")
               for m in CHRONIC.finditer(text))


_NOT_A_CONDITION = frozenset({"medication", "吃药", "服药", "怀孕"})


def is_episode(text: str) -> bool:
    """A disclosure that tells an episode, not something that holds (seed 002 §3.2: the
    profile is the user's stable attributes and likes, events are what happened): it
    names a one-off time (:data:`EVENT_TIME`, :data:`ONE_OFF_TIME`), a one-off activity
    (:data:`ONE_OFF_ACTIVITY`) or a passing feeling (:data:`MOMENT`), and no state, habit
    or change (:data:`STATE`, :data:`CHANGE`). Linear in ``len(text)``."""
    if STATE.search(text) or CHANGE.search(text):
        return False
    return bool(EVENT_TIME.search(text) or ONE_OFF_TIME.search(text) or ONE_OFF_ACTIVITY.search(text)
                or MOMENT.search(text))
