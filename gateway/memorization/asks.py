"""What asks and what talks about the conversation: the request, question and meta words
:func:`gateway.memorization.kinds.clause_kind` reads (step 2 of
:mod:`gateway.memorization.disclosure`).

English: a request (:data:`REQUEST_EN`: an imperative first word, "can you", "please",
"I'd like / I want / I need + a thing or you", "I'm looking for", "help me"), a question
(:data:`QUESTION_START_EN`, :data:`QUESTION_IN_EN`; a past auxiliary first is one only with
a subject after it: :data:`PAST_AUX_EN`, :data:`AUX_SUBJECT_EN`, and not "had" + object + participle,
:data:`HAVE_DONE_EN`), talk about the
conversation (:data:`META_EN`), a revision of the reply (:data:`REVISION_EN`, :data:`REVISION_ZH`,
:data:`COMPARATIVE_EN`), a verbless query (:data:`QUERY_NP_EN`), a reaction to the reply
(:data:`REACTION_EN`) and a statement about the reply (:data:`DEICTIC_EN`). Chinese: a
request (:func:`request_zh`: 帮我 请 给我 推荐 我想要 我需要, a wish for something the
assistant hands over, :data:`_ARTEFACT_ZH`, an object put first before 帮我 / 给我), a
question (:data:`QUESTION_END_ZH`, not the speaker's own statement closed by 嘛, :data:`OBVIOUS_MA_ZH`; :data:`QUESTION_WORD_ZH`: degree questions 多 + adjective
and 几 + a measure word, a clause-final V-没; a parallel A 还是 B, :func:`alternative_zh`;
an estimate with 吧 asks nothing, :data:`ESTIMATE_ZH`, nor does a statement softened by 吧,
:data:`SOFTENED_BA_ZH`, a situation that goes on closed by 呢, :data:`DURATIVE_NE_ZH`, or a
bare negative reply, :data:`BARE_NO_ZH`), talk about the conversation
(:data:`META_ZH`: an exclamation judging a thing, :data:`_EVALUATIVE_ZH`), leave-taking as
the turn's last clause (:data:`LEAVE_ZH`) and a 的 phrase after an ask (:data:`SPEC_ZH`).
Either language: a bare question whether the state before it matters
(:data:`ASKS_IF_IT_MATTERS`: "is that normal?", 要不要紧), the alternatives or a constraint
of an English ask (:data:`ALTERNATIVES_EN`, :data:`CONSTRAINT_EN`; :data:`WH_EN`, a
question word) and talk about the app the user talks through (:data:`ABOUT_THE_APP`).
Each rule cites its source where it is defined. Patterns only, with no nested quantifiers:
each is linear in the clause.
"""

from __future__ import annotations

import re

from gateway.memorization.lexicon import (
    COMPARATIVES_AFTER_MAKE_EN,
    COMPARATIVES_EN,
    LANGUAGE_NAMES,
    MONTH_ABBR_EN,
    WEEKDAY_EN,
    alternation,
)
from gateway.memorization.lexicon import PEOPLE_ZH as _PEOPLE_ZH

#: A question's first word: an interrogative or an auxiliary (inversion, Quirk et al. 1985,
#: 11.5); chat drops the apostrophe and the question mark ("hows mileage tracked for taxes in
#: canada", "wheres the nearest...", "wat"), which asks as "how's" does; an approximator or a
#: stance adverb may come before an interrogative ("roughly what do guys charge for that").
QUESTION_START_EN = re.compile(
    r"^(?:(?:roughly|approximately|approx|realistically|honestly|generally|basically)\s+(?=(?:what|how|when|where|which|who|why)\b))?"
    r"(?:what|what's|whats|wat|why|whys|how|how's|hows|when|whens|where|wheres|which|who|whos|whom|whose|is|are|am|was|were|do|does|did|can|could|"
    r"would|will|should|shall|may|might|have|has|had|isn't|aren't|don't|doesn't|didn't|won't|wouldn't|shouldn't|"
    r"any|anything|is\s+there|are\s+there)\b",
    re.IGNORECASE,
)
#: A past auxiliary first ("had", "was", "did") with no question mark is a question only
#: when a subject follows it ("had you heard", "was it safe", "did my dad"): inversion is
#: what makes the question (Quirk et al. 1985, 11.5). Without one it is a statement with
#: its "I" dropped ("Had surgery on my knee in March", "Was at the vet all morning").
PAST_AUX_EN = re.compile(r"^(?:had|was|were|did)\b", re.IGNORECASE)
#: "had" + a noun phrase + an "-ed" participle ("had the left one replaced in 2019", "had my
#: wisdom teeth pulled"): the causative / experiential *have* with its object and participle
#: (Quirk et al. 1985 on complex-transitive *have*), a past statement with its "I" dropped, not an
#: inverted past perfect; read so only without a question mark (:func:`gateway.memorization.kinds.clause_kind`).
HAVE_DONE_EN = re.compile(r"^had\s+(?:the|my|our|his|her|their|this|that|both|one|some|an?)\s+(?:[\w'-]+\s+){0,3}?"
                          r"(?!(?:need|seed|feed|speed|bleed|breed|hundred)\b)[a-z]{3,}ed\b", re.IGNORECASE)
AUX_SUBJECT_EN = re.compile(r"^\w+\s+(?:i|you|u|he|she|it|we|they|there|this|that|these|those|your|my|his|her|their|our|"
                            r"the|anyone|anybody|someone|somebody|everyone|people)\b", re.IGNORECASE)
QUESTION_IN_EN = re.compile(
    r"^i\s+(?:was\s+)?(?:wonder|wondering)\b|^i(?:'m|\s+am)\s+(?:just\s+|really\s+|also\s+|kinda\s+)?(?:not\s+sure|unsure|curious)\s+(?:how|what|whether|if|which|about|where|when|why)\b"
    r"|^i\s+(?:don't|do\s+not)\s+know\s+(?:how|what|whether|if|which|where|when|why)\b"
    r"|^(?:should|can|could|do|would)\s+i\b|^what\s+(?:should|can|could|do)\s+i\b"
    r"|^(?:just\s+)?wondering\b|^(?:not\s+sure|unsure|curious|no\s+idea|idk|dunno|i\s+dunno)\s+(?:how|what|whether|if|which|where|when|why)\b",
    re.IGNORECASE,
)
REQUEST_EN = re.compile(
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
META_EN = re.compile(
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
#: A reaction to the reply that names nothing of the user's
#: (:func:`gateway.memorization.kinds.clause_kind` checks):
#: thanks anywhere in the clause ("great ideas thank you", "thx these look good"); an
#: evaluation of the proposal with its subject dropped ("sounds like a plan"); a statement
#: about the listener, the second person as subject ("ur a lifesaver", "you rock", "u up?":
#: about the other side, as a Chinese clause led by 你); the speaker's next step with the
#: suggestion as its object ("gonna try that tonight", "will give it a go": the object is
#: the reply, as in "tried that"); leave-taking ("gotta go", "gonna go make dinner now":
#: a pre-closing, Schegloff & Sacks 1973); a greeting passed on ("jess says hi", "mum sends her love").
REACTION_EN = re.compile(
    r"\b(?:thanks|thank\s+(?:you|u)|thx|thnx|thanx|ty|tysm|tyvm)\b"
    r"|\b(?:says?|said|sends?|sent)\s+(?:hi|hello|hey|hiya|(?:her|his|their)\s+(?:love|regards|best))\b"
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
LOVE_YOU_EN = re.compile(r"\bi\s+(?:really\s+)?(?:love|like|adore)\s+(?:you|u)\b(?!\s*(?:r|'re|re)\b)", re.IGNORECASE)
#: A revision of the reply just given: "make it / keep this" + a comparative ("make it
#: shorter", "can you make that more formal", "make it a touch shorter"): the comparative's
#: standard is the reply, a one-off request, not a standing instruction ("keep answers short",
#: "from now on ...", "always reply in Chinese"). Also the reply's words moved or cut: "put that
#: in a table" (a verb of placing whose object is the reply, a deictic: Levinson 1983, 2.2.1),
#: "drop 'unfortunately'", "cut the last line" (a quoted word or a part of the text as the object).
REVISION_EN = re.compile(
    r"^(?:(?:can|could|would|will)\s+(?:you|u)\s+)?(?:please\s+|pls\s+)?(?:make|keep)\s+(?:it|this|that|them|these|those)\s+"
    r"(?:a\s+(?:bit|little|lot|touch|tad|smidge)\s+|much\s+|way\s+|even\s+|slightly\s+)?"
    + alternation((*COMPARATIVES_EN, *COMPARATIVES_AFTER_MAKE_EN)) + r"\b(?!.*\b(?:from\s+now\s+on|always|in\s+(?:the\s+)?future|going\s+forward)\b)"
    r"|^(?:(?:can|could|would|will)\s+(?:you|u)\s+)?(?:please\s+|pls\s+)?(?:now\s+)?put\s+(?:it|that|this|them|these|those|"
    r"everything|all\s+(?:of\s+)?(?:it|that|this))\s+(?:in|into|as)\s+(?:a\s+|an\s+|the\s+)?(?:table|list|bullet|bullets|"
    r"points|columns?|rows?|paragraphs?|order|steps|one\s+line|email|text|markdown|json|csv)\b"
    r"|^(?:(?:can|could|would|will)\s+(?:you|u)\s+)?(?:please\s+|pls\s+)?(?:drop|cut|lose|remove|delete|ditch|take\s+out|"
    r"swap\s+out|replace|change)\s+(?:['\"\u2018\u201c]|the\s+(?:word|words|line|bit|part|phrase|sentence|paragraph|"
    r"emojis?|hashtags?|(?:first|last|second|third)\s+(?:line|bit|part|sentence|paragraph|one|point))\b)",
    re.IGNORECASE,
)
#: The same revision with "make it" dropped, a comparative leading a clause with no verb
#: ("shorter and with more emojis", "a bit longer maybe", "less formal pls").
COMPARATIVE_EN = re.compile(
    r"^(?:(?:a\s+)?(?:bit|little|lot|tad|touch)\s+|much\s+|way\s+|even\s+|slightly\s+|maybe\s+|somewhat\s+)*"
    + alternation(COMPARATIVES_EN) + r"\b", re.IGNORECASE)
#: A verbless noun phrase typed as a query ("recipe for banana bread", "best way to clean a
#: cast iron pan", "cheap date ideas near downtown", "something quick for dinner"): a
#: non-clausal unit (Biber et al. 1999, 14.3) whose head is what is wanted, with a
#: postmodifier saying for what: an ask with "give me / what is" left out.
QUERY_NP_EN = re.compile(
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
#: tells nothing unless it carries an attribute (:func:`gateway.memorization.kinds._attributive`: "for my diabetic dad").
FOR_MY_EN = re.compile(r"\bfor\s+(?:my|our)\b.*$", re.IGNORECASE)
FIRST_PERSON_IN_EN = re.compile(r"\b(?:i|i'm|im|i've|ive|i'd|me|we|we're|us|mine)\b", re.IGNORECASE)
#: "no more eggs", "not more than...": a negated quantity, no comparative of the reply.
NEGATED_EN = re.compile(r"^\W*(?:\w+\W+){0,2}?(?:no|not|any|nothing|never)\s+(?:more|less)\b", re.IGNORECASE)
RELATIVE_TAIL_EN = re.compile(r"\b(?:that|which|who)\b.*$|\bto\s+\w+|\blike\b", re.IGNORECASE)
#: A statement whose subject is a demonstrative pointing back at the other side's words
#: ("that's a lot of sugar", "those look hard", 这个太贵了, 那也太难了吧): a reaction to the
#: reply, not about the user, unless it names the user ("this is my first marathon").
DEICTIC_EN = re.compile(r"^(?:that|this|those|these)(?:'s|\s+is|\s+was|\s+are|\s+were|\s+sounds?|\s+looks?|\s+seems?|\s+would|"
                        r"\s+might|\s+could|\s+will)\b", re.IGNORECASE)
DEICTIC_ZH = re.compile(r"^(?:这|那)(?:个|样|些|种)?(?:也|就|都|还|可)?(?:太|挺|真|好|有点|不|是|可以|应该|会|能|得|要)")

#: A sentence-final question particle (吗 呢 么 嘛 吧) or the negative half of a clause-final
#: A-not-A question with its second verb dropped ("正常不", "伤电池没": V(O)-不 / V(O)-没,
#: Li & Thompson 1981, 18.2): 没 after 还 / 都 / 也 / 并 is "not yet" / "not at all", an answer.
#: The dropped negative may itself take one modal particle (哦 喔 啊 呀: "还有人吃这套不哦",
#: "去不啊", the northern "能吃不咧"), as any sentence-final particle may follow another (Li & Thompson 1981, 7.1 / 7.6);
#: the Cantonese 冇 is 没 ("能再省钱一点冇": Matthews & Yip 2011, 17.2).
#: Punctuation, emoji and kaomoji after the particle change nothing ("还来得及吗😭").
QUESTION_END_ZH = re.compile(r"(?:吗|呢|么|嘛|(?:没有|不)[哦喔啊呀咧]?|吧|(?<![还都也并从])[没冇])[^\u3400-\u9fffA-Za-z0-9]*$")
#: A statement by the speaker closed by 嘛 ("我自己也在练嘛", "我本来就是夜猫子嘛"): final 嘛
#: marks what is said as obvious, a reason the listener should grant (Chao 1968 on the
#: particle of the obvious), not a question; led by 我 / 咱 / 俺 with no modal verb after it
#: (我能吃嘛, 我可以去嘛 still ask leave, 嘛 standing for 吗 in chat writing). A question word or a
#: question mark still makes the clause ask (:func:`gateway.memorization.kinds.clause_kind`).
OBVIOUS_MA_ZH = re.compile(r"^(?:我|咱|俺)(?![\u4e00-\u9fff]{0,6}?(?:能|可以|可不可以|会|该|要|用|行|得|敢|配|是不是))"
                           r"[\u4e00-\u9fffA-Za-z0-9]*嘛[^\u3400-\u9fffA-Za-z0-9]*$")
#: An estimate closed by 吧 ("一百来个吧", "两年多吧", "大概三次吧"): a numeral phrase (a
#: numeral, an approximation 来 / 多 / 左右, a measure word) with 吧, the particle that
#: softens an assertion and solicits agreement (Li & Thompson 1981, 7.2 on 吧): an uncertain
#: answer, not a question (吧 after a question word still asks: "几个吧" has none here).
ESTIMATE_ZH = re.compile(r"^(?:大概|差不多|应该|可能|估计|也就|大约)?(?:[一二三四五六七八九十两百千万\d]+)(?:来|多)?"
                         r"[\u4e00-\u9fff]{0,3}?(?:多|左右)?吧[。！!～~…\s]*$")
#: A bare negative reply ("没有", "没", "不", "还没呢", "不是"): the negator alone, with no verb
#: before it, answers the other side's yes-no question (Li & Thompson 1981, 18.2: a yes-no
#: question is answered by the verb or by the negator alone), it is no A-not-A question with its
#: second verb dropped, which needs a verb before the negator ("正常不", "伤电池没").
BARE_NO_ZH = re.compile(r"^(?:还|都|也|从来|一直|真|确实)?(?:没有|没|不|不是|不会|不用)(?:呢|啊|呀|哦|哈|的|了)?[^\u3400-\u9fffA-Za-z0-9]*$")
#: A statement softened by a final 吧 ("成绩中等吧", "人生巅峰好吧"): 吧
#: after a declarative with no question word solicits agreement with an assertion or marks it
#: as an estimate or an exclamation (Li & Thompson 1981, 7.2 on 吧); it asks only with a modal
#: that seeks leave or a judgement ("能吃吧", "该换了吧"), with the other side as its subject
#: ("你是老师吧": a confirmation of what the listener knows), or as a suggestion or request
#: (a request is read first: "帮我列个清单吧"). The exclamative 太…了吧 ("太贴心了吧", a judgement of
#: the reply more often than not) is left as it was read. A question word still asks
#: (:func:`gateway.memorization.kinds.clause_kind`).
SOFTENED_BA_ZH = re.compile(r"^(?!.*[你您])(?![\u4e00-\u9fffA-Za-z0-9]*(?:能|可以|会|该|要|行|得|敢|用|算|是不是|对不对|有没有))"
                            r"(?![\u4e00-\u9fffA-Za-z0-9]*太[\u4e00-\u9fff]{1,3}了吧)"
                            r"[\u4e00-\u9fffA-Za-z0-9]{2,}吧[^\u3400-\u9fffA-Za-z0-9]*$")
#: A statement of a situation that goes on, closed by 呢 ("我还在读研呢", "正在装修呢", "问我经验
#: 呢", "还没出院呢"): 呢 after a declarative with the durative 在 / 正 / 着 or "not yet" 还没 marks
#: the situation as continuing, or answers the listener's expectation (Li & Thompson 1981, 7.3
#: on 呢 "response to expectation"; Chao 1968 on the durative 呢), with 我 inside it tells what
#: holds for the speaker; 呢 asks only with a question word or an A-not-A, after a bare noun
#: phrase ("海鲜呢", "你呢": at most two characters here) or with a modal ("该去呢").
DURATIVE_NE_ZH = re.compile(r"^(?!.*[你您])(?![\u4e00-\u9fffA-Za-z0-9]*(?:能|可以|该|要不要|好不好|行不行))"
                            r"(?=[\u4e00-\u9fffA-Za-z0-9]*(?:在|正|着|还没|我))[\u4e00-\u9fffA-Za-z0-9]{3,}呢[^\u3400-\u9fffA-Za-z0-9]*$")
#: Chinese question words. Besides the wh-words (with the colloquial 啥 and the northern
#: 嘛 for 什么 before a noun, "有嘛坐垫推荐", or after a verb, "喝点嘛好", "都学嘛呀" (Tianjin / northern
#: 嘛 = 什么); the Wuhan 么样 = 怎样 ("么样做才好吃"); the Cantonese wh-words 咩 / 乜(嘢) "what", 点样 /
#: 点解 / 点算 "how / why", 边度 / 边个 "where / who" (咩 / 乜 not after 冇 / 没, "冇乜力" = 没什么力, "not
#: much"; Matthews & Yip 2011, Cantonese: A Comprehensive
#: Grammar, ch. 17 on questions; 边 not after 这 / 那 / 旁 … "side"); the Cantonese A-not-A with 唔
#: (会唔会, 可唔可以, 使唔使) and 有冇 "have or not" (ibid., 17.2)) and the A-not-A forms (能不能, 有没有..., and any
#: X不X of a verb or adjective or of its first syllable, "疼不疼", "严不严重", Li & Thompson
#: 1981, 18.2; not the adverbs 动不动 "at every turn" and 时不时 "now and then"):
#: 几 before a measure word, nominal or verbal (次 / 回 / 遍 / 趟: "喝几杯", "煮几分钟", "一天点几回"; not 前几天 / 好几个, nor 几 after the
#: perfective 了, "喝了几杯", where it is the indefinite "a few"), and 多 before a one-syllable
#: adjective of degree, the question of extent ("多大", "多久", "多长时间", "多远": 多 + adjective
#: asks how much, Li & Thompson 1981, 18.4 on question words; not after a degree or
#: negation word, "差不多大", "没多久", nor 多 after a numeral, "三十多岁"; with 都 / 也 after
#: it a question word is "no matter how", no question: "多大都不爱吃菜", 18.6).
QUESTION_WORD_ZH = re.compile(r"什么(?!都|也)|(?<![没])啥(?!都|也|的)|干[嘛吗]|有嘛(?=[\u4e00-\u9fff])|怎么|怎样|咋|如何|哪|为什么|为啥|"
                              r"(?<=[点学吃喝买整弄玩看])嘛(?=[\u4e00-\u9fff])|(?<![怎这那])么样|"
                              r"(?<![咩冇没])咩(?!咩)|(?<![冇没])乜|点(?:样|解|算)|(?<![这那旁一身左右两东南西北里外上下前后周海河江路岸])边(?:度|个|间|位|条|只|啲|款|种)|"
                              r"有冇|(?P<b>[\u4e00-\u9fff])唔(?P=b)|"
                              r"(?<![前这那好十了])几(?:[个点天岁号次回种本杯遍年周顿趟斤步双件块片粒瓶碗勺]|分钟|小时|公斤|个月|星期)(?![都也])|"
                              r"(?<![差很好许太更最诸没不再一二三四五六七八九十百千万两\d])多(?:大|久|长|远|高|重|厚|深|贵|宽|快|早|晚)(?![都也])|"
                              r"多少|能不能|可不可以|可以不可以|"
                              r"有没有|是不是|要不要|该不该|好不好|行不行|会不会|用不用|需不需要|是否|"
                              r"(?P<a>[\u4e00-\u9fff])(?<![动时])不(?P=a)")
#: What an assistant hands over when asked for "一份 / 一个 ..." (a text, a plan, a list, a
#: pointer to a tool): the heads that make a wish with an indefinite object a request.
_ARTEFACT_ZH = (r"(?:清单|计划|方案|模板|模版|菜谱|食谱|菜单|攻略|建议|推荐|列表|例子|示例|代码|文案|名字|书单|歌单|片单|文章|总结|"
                r"大纲|提纲|表格|脚本|邮件|祝福|标题|口号|介绍|教程|方法|办法|思路|答案|故事|笑话|段子|话术|回复|开场白|演讲稿|"
                r"行程|路线|配方|做法|安排|时间表|作息表|app|APP|软件|工具|网站|资料|范文|草稿|说明|步骤|流程|问题|题目|练习)")
#: Register words of a written reply (tone, length, style: 真诚, 客气, 正式, 幽默, 肉麻 ...).
_REGISTER_ZH = (r"(?:真诚|客气|硬气|正式|随意|幽默|搞笑|逗|简洁|简短|简单|详细|具体|口语|书面|接地气|温柔|礼貌|委婉|直接|"
                r"专业|通俗|煽情|肉麻|文艺|官方|活泼|可爱|严肃|有趣|有意思|走心|大气|俏皮|亲切|热情|干脆|短|长|文绉绉|空话|"
                r"套话|生硬|啰嗦|夸张|书面化|口语化|意思|平|白|实在|务实|practical|professional|formal|casual|friendly)")
#: A revision of the reply in Chinese, with no subject and no mark of a standing habit (以后 / 每次
#: / 都 / 一直 / 总是: "以后回答都简短点" is a preference and stays): the imperative has no subject
#: (Li & Thompson 1981, 14.1), here asking for more or less of a quality of the text just given:
#: a register or a quantity (语气 / 风格 / 字数 + X + 一点: "语气 friendly 一点", "tone 再 professional
#: 一点", "逗一点"), 再 / 更 / 稍微 + X + 一点 / 啲 ("更 practical 一点", Cantonese "再平啲": 啲 = 点), something
#: added or cut (再加个随叫随到的意思, 再删掉…; not the conjunction 再加上 "plus"), a negative imperative on how it is written (别 / 不要 /
#: 唔好 + 写 / 整 / 太: "别写那种空话", "唔好太肉麻", "别整太专业", 14.2), a register asked for with 要
#: ("要真诚", "但是不要煽情过头", "要客气但是要硬气", "要有点意思"), "说人话" (plain words), a judgement of how
#: it was made (整得太文了: a V-得 complement with no subject, the reply as its topic), a number of
#: items ("我就要三条") and 搞个 / 整个 + something the other side produces ("搞个几张图的步骤噻").
REVISION_ZH = re.compile(
    r"^(?!.*(?:以后|今后|往后|每次|一直|总是|从现在|平时))(?:"
    r"(?:语气|口气|口吻|风格|文风|格式|字数|篇幅|长度|tone|style)\s*(?:再|更|稍微|稍稍)?\s*[\u4e00-\u9fffA-Za-z\s]{1,14}?(?:一点|一些|点|些|啲)儿?[呗吧啊哈呀嘛噻]*$"
    r"|(?:再|更(?!年)|稍微|稍稍)\s*[\u4e00-\u9fffA-Za-z\s]{1,14}?(?:一点|一些|点|些|啲)儿?[呗吧啊哈呀嘛噻]*$"
    r"|(?:再|重新|另外|顺便)(?:加|补|添|删|去掉|减|改|换|多加|少)(?![了过上])"
    r"|(?:但是?|而且|并且|也|还|千万)?(?:别|不要|唔好|冇)(?:太|写|整|搞|用|弄|那么|这么|过于|说|加|" + _REGISTER_ZH[3:-1] + r")"
    r"|" + _REGISTER_ZH + r"(?:一点|一些|点|些|啲)儿?[呗吧啊哈呀嘛噻]*$"
    r"|(?:但是?|而且|并且|也|还)?(?:要|得)(?:有点|带点|稍微|更)?" + _REGISTER_ZH + r"(?=一点|一些|点|些|但|而|又|过头|$)"
    r"|(?:说|讲)人话|(?:整|写|弄|搞|翻)得太"
    r"|我?(?:就|只)(?:要|需要)[一二三四五六七八九十两几\d]+(?:条|点|个|句|段|行|步|种)"
    r"|(?:搞|弄)(?:个|一个|几个)[\u4e00-\u9fffA-Za-z0-9]{0,12}?" + _ARTEFACT_ZH + r")", re.IGNORECASE)
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
#: the first morpheme of 出差 / 出租 / 出国 (a statement: "出差去了杭州"); 来 likewise asks only
#: with such an object ("来个笑话", "来一份菜单", "来点轻松的": the imperative "give me"), not
#: as the verb of motion before a place ("来北京带孙子一个多月了", "来大理三个月了": came to). Also an ask with the
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
#: 一下 or a reduplicated verb ("帮我看看"), with no 了 / 过 after (an imperative is unrealized;
#: so 请 with an aspect marker or a result is the verb "hire, invite, ask for", not "please":
#: "现在请了个钟点工", "请过保姆", "请到一位家教", "请了假"); 再 or 那你 before it
#: ("再给我列个能吃的和不能吃的表") keeps it a request.
REQUEST_ZH = re.compile(r"^(?:再|那你|你再)?(?:请(?![了过到来个假])|求(?!婚|职|学|医)|麻烦|帮我|帮忙|给我|替我|你能|你可以|你帮|能不能|可以帮|可不可以|告诉我|推荐|建议|"
                        r"写(?![了过])|列(?![了过])|讲(?![了过])|说说|"
                        r"(?:介绍|解释|翻译|总结|算|比较|分析|设计|规划|安排|整理)(?!师|员|岗|法|力|术|是|来|下来)|查(?![出到了过])|来(?=[个一两几点份段首杯碗套张篇些道盘瓶])|出(?=[个一两几些道套份张题了])|"
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
#: The request with its object first (:data:`REQUEST_ZH`'s docstring): matched from the
#: start, and no 了 / 过 may follow the match (:func:`request_zh` checks, one scan).
_FRONTED_REQUEST_ZH = re.compile(r"^(?!我|咱|俺|他|她|它|" + _PEOPLE_ZH + r")[\u4e00-\u9fffA-Za-z0-9]{2,}?(?:帮我|给我|替我|帮忙)"
                                 r"(?:[\u4e00-\u9fff]{0,2}?(?:一个|一份|一下|几个|一些|一篇|一封|一张|一段|个|份|下|点)|([\u4e00-\u9fff])\1)")
_REALIZED_ZH = re.compile(r"[了过]")


#: A subjectless clause asking for more of a quality in what the other side wrote ("邮件语气再软一点呗",
#: "再写短一点", "稍微正式些吧"): 再 / 稍微 and a delimitative 一点 / 些 with no subject, an imperative
#: (Li & Thompson 1981, 14.1: the imperative has no subject and may end in 吧 / 呗).
_MORE_OF_IT_ZH = re.compile(r"^(?!我|咱|俺|他|她|它|" + _PEOPLE_ZH + r")[\u4e00-\u9fffA-Za-z0-9]{0,6}?(?:再|稍微|稍稍)"
                            r"[\u4e00-\u9fff]{1,3}?一?(?:点|些)儿?[呗吧啊哈呀嘛]*$")


def request_zh(core: str) -> bool:
    """``core`` (a Chinese clause, its lead words gone) is a request (:data:`REQUEST_ZH`,
    :data:`_FRONTED_REQUEST_ZH`, :data:`_MORE_OF_IT_ZH`). Linear in ``len(core)``."""
    if REQUEST_ZH.search(core) or _MORE_OF_IT_ZH.match(core):
        return True
    fronted = _FRONTED_REQUEST_ZH.match(core)
    return fronted is not None and not _REALIZED_ZH.search(core, fronted.end())


#: What a reply does to the speaker, their reaction or their thanks, and what they do with it
#: (passed on: 我转给她, 我转告他, 念给我妈听; noted: 我抄下来了, 记下了; "I'm only asking": 我就随便问问;
#: the subject 我, 俺 or 咱): a clause led by 你 / 您,
#: a judgement of what was said, an objectless 试了 / 用了 (the zero object is the other side's
#: suggestion, Li & Thompson 1981, ch. 24), and an exclamation of degree with no subject, a
#: degree adverb (好 太 真 挺 超) and an adjective that judges a thing ("好可爱", "太贴心了",
#: "挺好用的": the exclamative, Li & Thompson 1981, 7.1 / 11.1; a feeling of the speaker's,
#: "好累", is no judgement of a thing and stays).
_EVALUATIVE_ZH = (r"(?:可爱|好用|实用|有用|厉害|贴心|棒|好看|好吃|有意思|有趣|方便|详细|清楚|专业|靠谱|周到|神奇|牛|强|赞|"
                  r"好玩|好听|暖心|温柔|聪明|全面|到位|及时|给力|管用|酷|妙|香|精彩|完美|有道理|合理|懂事|机智|细心|用心|"
                  r"有帮助|好懂|易懂|简单|清晰|准)")
META_ZH = re.compile(r"^我(?:有个|有一个|还有个|还有一个)(?:问题|想法|请求)|^(?:我|俺|咱)(?:试试|看看|想想|考虑一下|知道了|明白了|懂了|觉得可以|觉得不错)"
                     r"|^(?:我|俺|咱)?(?:就|只是|也就)?随便问问|^(?:我|俺|咱)(?:这就|马上|回头|等会|待会|先|就)?(?:转给|转发给|转告|发给|念给|读给)"
                     r"(?:他|她|他们|她们|它|群里|大家|家里人|同事|老公|老婆|爸妈|我妈|我爸)?(?:看|听)?(?:看|听)?(?:一下|了|吧|啦|哈)?$"
                     r"|^(?:我|俺|咱)(?:先)?(?:抄|记|存|截图|收藏|保存)(?:下来|下|好)?了?(?:啊|吧|啦|哈)?$"
                     r"|^我?(?:也|刚)?(?:试了|试过了|用了|做了)(?:一下|下)?了?$"
                     r"|^(?:我|俺|咱)?(?:就|也|先|再|回头|明天|晚上|今晚|等会|待会|这就|改天)*(?:试试|试一下|试试看|想想|看看|研究研究|琢磨琢磨|"
                     r"考虑考虑|考虑一下|等等|观察观察|记下了|记住了|收藏了|存下了|照做|照着做)"
                     r"|^(?:那)?我?(?:就|先)?(?:按|照)(?:你说的|你的|这个|这样|这些|着)[\u4e00-\u9fff]{0,4}$"
                     r"|^我?又?(?:回来了|来了)$|^又是我|^(?:我)?(?:还)?有(?:个|一个)(?:小)?(?:问题|事)(?:想)?(?:请教|问)"
                     r"|^(?:想)?(?:请教|问你)(?:一下|个|一个)|^被你|^我(?:就知道|服了|真是服了|真服了|佩服)"
                     r"|^我?(?:再|还)(?:想|要)?问(?:一个|一下|个|你|问)?$|^我(?:问的|说的|的意思)(?:是|不是|其实)"
                     r"|^(?:说得|讲得|写得|总结得|解释得|回答得)(?:太|真|很|挺|好|非常|超)?(?:对|好|棒|清楚|明白|到位|有道理|详细|透彻)"
                     r"|^(?:真是|也太|好|太|真|挺|超|蛮|很|特别|非常|这么|那么)" + _EVALUATIVE_ZH + r"(?:了|啊|呀|吧|哦|呢|的|啦|哈|耶|嘛)*$"
                     r"|^(?:这个|那个|这|那|听起来|看起来)(?:不错|挺好|很好|可以|好|太好了|有道理)"
                     r"|^(?:你|您)(?!们)|^(?:说得|讲得)(?:对|好|是|有道理|太对)|^说到\S{0,3}心坎|^(?:有道理|太对了|确实是)")
WH_EN = re.compile(r"\b(?:what|whats|what's|why|how|when|where|which|who)\b", re.IGNORECASE)
#: A Chinese alternative question (选择问句: "早上量好还是晚上量好", Li & Thompson 1981,
#: 18.3): "A 还是 B" ending in a judgement. 还是 before a negation is no disjunction but the
#: adverb "still" ("腱鞘炎还是没好": still not better) or "had better" ("还是不去好").
ALTERNATIVE_ZH = re.compile(r"还是(?![不没])\S{0,12}?(?:好|对|行|合适|划算|呢)[。！!～~…\s]*$")
_PARTICLES_ZH = "。！!～~…啊呀呢吧嘛哈 "


def alternative_zh(core: str) -> bool:
    """``core`` is a Chinese alternative question with no final particle, "A 还是 B" whose two
    halves are parallel predicates, sharing their first or last character ("饭前吃还是饭后吃",
    "去爬山还是去看展": 选择问句, Li & Thompson 1981, 18.3). The adverb 还是 ("still", "after
    all": "我还是喜欢猫", "最后还是去了北京") follows a subject or a time word and is no
    disjunction of parallel halves; before a negation it is "still" (:data:`ALTERNATIVE_ZH`)."""
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
LEAVE_ZH = re.compile(r"^我?(?:就|也)?(?:先|这就|马上|现在就|赶紧|得|该)去[\u4e00-\u9fffA-Za-z0-9]{1,6}?(?:了|啦|咯|喽)?[啊呀哈~～!！]*$"
                      r"|^我?(?:就|也)?去(?:忙|睡|睡觉|吃饭|做饭|洗澡|上课|上班|开会|试试|试一下|看看)(?:了|啦|咯|喽)?[啊呀哈~～!！]*$")
#: A 的 phrase with no head that says what the thing asked for must be able to do ("骑车能戴的",
#: "适合老人用的"): a headless relative clause (Li & Thompson 1981, 20.3) modifying the
#: object of the ask before it, not a statement about the speaker.
SPEC_ZH = re.compile(r"^(?!.*[我咱俺])[\u4e00-\u9fffA-Za-z0-9]{0,6}(?:能|可以|适合|方便|好)[\u4e00-\u9fffA-Za-z0-9]{1,6}的$")


#: Alternatives joined in a noun phrase: "A and B", "A or B", "A+B", "A vs B".
ALTERNATIVES_EN = re.compile(r"\s(?:and|or|vs\.?|versus)\s|\+", re.IGNORECASE)
#: A constraint on what is asked for: a measure ("20 min max", "under $50", "for 6 people")
#: or an "X-friendly" / "X-safe" suitability.
CONSTRAINT_EN = re.compile(r"^(?:(?:under|over|less\s+than|max|at\s+most|up\s+to|around|about|for)\s+)?[$£€]?\d[\w$£€.,]*\s*"
                           r"(?:[a-z]+\s*){0,2}(?:max|tops|or\s+less|or\s+so)?\W*$"
                           r"|^[\w'-]+[\s-](?:friendly|safe|proof)\W*$", re.IGNORECASE)


#: A clause about the app the user is talking through ("my granddaughter set this app up
#: for me", "my grandson said I should try this thing", 我孙女给我装的这个软件): the
#: deictic "this" points at the conversation's own medium (Levinson 1983, 2.2.1 on
#: deixis), so it is talk about the conversation, as :data:`META_EN` is, not a fact.
ABOUT_THE_APP = re.compile(r"\bthis\s+(?:app|chat\s*bot|chatbot|bot|ai|assistant|chat)\b|\b(?:try|use|using|trying)\s+this\s+thing\b"
                           r"|这个(?:app|APP|软件|应用|小程序|AI|ai|机器人|聊天机器人)", re.IGNORECASE)


#: A bare question whether something matters, with no subject or object of its own but a
#: deictic one ("is that normal?", "should I be worried?", 要不要紧, 正常不, 严重吗): its zero
#: or deictic subject is the clause before it (Li & Thompson 1981, ch. 24; Halliday & Hasan
#: 1976, 2.4 on reference to a preceding clause).
ASKS_IF_IT_MATTERS = re.compile(
    r"^(?:(?:is|isn't|was|could)\s+(?:that|this|it)\s+(?:be\s+)?(?:normal|ok|okay|bad|serious|dangerous|concerning|"
    r"a\s+(?:bad\s+)?sign|something\s+to\s+worry\s+about)|should\s+i\s+(?:be\s+)?(?:worried|worry|concerned)|"
    r"do\s+i\s+need\s+to\s+worry)\W*$"
    r"|^(?:这样|这|那样|那)?(?:正常|要紧|严重|有事|没事|有问题|危险|碍事)(?:吗|不|么|嘛|吧|没)?[啊呀。？?~～]*$"
    r"|^(?:要不要紧|正不正常|严不严重|危不危险|碍不碍事|有没有事|有没有问题)[啊呀。？?~～]*$", re.IGNORECASE)
