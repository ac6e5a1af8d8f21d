"""Prompts of the memory model, in English and Chinese (picked by the conversation's
language, :func:`language_of`). Sources: the decision prompt is seed 003's (§4
``decisionModel.prompt``); the inference prompt is seed 000's P4 ``inferencePrompt``;
extraction and reconcile follow mem0's fact-extraction and ADD/UPDATE/DELETE/NOOP
update prompts (Chhikara et al. 2025), restated for profile/event scopes and preference
slots (seed 000 P3). Placeholders use ``str.format`` names.
"""

from __future__ import annotations

from gateway.runtime.text import cjk_share_language

DECIDE = {
    "en": (
        "Analyze the following conversation and determine if it contains critical information "
        "worth remembering for the long term. Critical information includes user preferences, "
        "facts, appointments, plans, or relationships.\n"
        "Respond with ONLY a valid JSON object.\n"
        'If the information is important, respond with: {{"should_remember": true, "reason": "A brief explanation of why."}}\n'
        'If the conversation is trivial or small talk, respond with: {{"should_remember": false, "reason": ""}}\n\n'
        "Conversation:\n{conversation}"
    ),
    "zh": (
        "分析下面的对话，判断其中是否包含值得长期记住的关键信息。关键信息包括用户的偏好、事实、约定、计划或人际关系。\n"
        "只返回一个合法的 JSON 对象。\n"
        '如果信息重要，返回：{{"should_remember": true, "reason": "简短说明原因"}}\n'
        '如果只是闲聊或无关紧要，返回：{{"should_remember": false, "reason": ""}}\n\n'
        "对话：\n{conversation}"
    ),
}

EXTRACT = {
    "en": (
        "Extract long-term memories from this conversation between the user and the assistant "
        "(persona \"{friend}\"). The messages were sent on {date}.\n"
        "Rules:\n"
        "- Each fact is atomic, self-contained and in the third person (\"The user ...\").\n"
        "- speaker: \"user\" if the fact comes from a user message, \"assistant\" if only from an "
        "assistant message. Facts about the user come only from the user's own messages; never "
        "attribute what the assistant said or suggested to the user.\n"
        "- scope: \"profile\" for lasting facts about the user (traits, preferences, goals, job, "
        "relationships); \"event\" for things that happened or are planned.\n"
        "- type: episodic (an event), semantic (a fact), trait, goal or preference.\n"
        "- For a preference about how answers should be, set slot to technical_depth "
        "(beginner|intermediate|expert), language (e.g. zh, en), response_length "
        "(concise|balanced|detailed) or code_style (minimal|commented|documented), else a short "
        "snake_case slot, and value.\n"
        "- keywords: 1-6 search terms; importance: 0 (trivial) to 1 (vital); emotion: one word or null.\n"
        "- occurred: an ISO date (YYYY-MM-DD) if the conversation states one; otherwise the "
        "relative expression exactly as said (\"yesterday\", \"last week\", \"3 days ago\"); "
        "otherwise null. Do not compute dates yourself.\n"
        "- At most {max_facts} facts; none if nothing is worth keeping.\n"
        "- gist: {gist_rule}\n"
        "Previous gist of this conversation: {previous_gist}\n\n"
        "Conversation:\n{conversation}\n\n"
        'Answer with JSON: {{"facts": [{{"text": "...", "speaker": "user", "scope": "profile", '
        '"type": "preference", "slot": null, "value": null, "keywords": [], "importance": 0.5, '
        '"emotion": null, "occurred": null}}], "gist": "..."}}'
    ),
    "zh": (
        "从用户与助手（角色“{friend}”）的这段对话中提取长期记忆。消息发送于 {date}。\n"
        "规则：\n"
        "- 每条事实是原子的、自包含的，用第三人称（“用户……”）。\n"
        "- speaker：事实来自用户消息时为 \"user\"，只来自助手消息时为 \"assistant\"。关于用户的事实只能来自用户自己的消息，"
        "不要把助手说的话或建议当作用户的事实。\n"
        "- scope：关于用户的长期事实（性格、偏好、目标、职业、人际关系）为 \"profile\"；发生过或计划中的事情为 \"event\"。\n"
        "- type：episodic（事件）、semantic（事实）、trait、goal 或 preference。\n"
        "- 关于回答方式的偏好，slot 取 technical_depth（beginner|intermediate|expert）、language（如 zh、en）、"
        "response_length（concise|balanced|detailed）或 code_style（minimal|commented|documented），"
        "否则取一个简短的 snake_case 名称，并给出 value。\n"
        "- keywords：1-6 个检索词；importance：0（无关紧要）到 1（非常重要）；emotion：一个词或 null。\n"
        "- occurred：对话给出具体日期时用 ISO 日期（YYYY-MM-DD）；否则原样给出相对说法（“昨天”“上周”“三天前”）；"
        "都没有则为 null。不要自己推算日期。\n"
        "- 最多 {max_facts} 条；没有值得记住的就返回空列表。\n"
        "- gist：{gist_rule}\n"
        "这段对话之前的摘要：{previous_gist}\n\n"
        "对话：\n{conversation}\n\n"
        '用 JSON 回答：{{"facts": [{{"text": "...", "speaker": "user", "scope": "profile", '
        '"type": "preference", "slot": null, "value": null, "keywords": [], "importance": 0.5, '
        '"emotion": null, "occurred": null}}], "gist": "..."}}'
    ),
}

GIST_RULE = {
    "en": "one or two sentences summarizing the whole conversation so far (previous gist plus these messages), "
          "what happened and what the user felt; null if nothing happened.",
    "zh": "用一两句话概括到目前为止的整段对话（之前的摘要加上这些消息）：发生了什么、用户的感受；没有内容则为 null。",
    "off": "always null.",
}

RECONCILE = {
    "en": (
        "You maintain a user's long-term memory. For each new fact, compare it with the existing "
        "memories listed under it and choose one event:\n"
        "- ADD: new information not covered by any existing memory.\n"
        "- UPDATE: an existing memory is about the same thing but the fact changes or refines it; "
        "give target (its id) and text (the up-to-date memory).\n"
        "- DELETE: the fact shows an existing memory is no longer true and nothing new remains to "
        "store; give target.\n"
        "- NOOP: the fact is already known.\n\n"
        "{items}\n\n"
        'Answer with JSON: {{"decisions": [{{"fact": 0, "event": "ADD", "target": null, "text": null}}]}}'
    ),
    "zh": (
        "你负责维护用户的长期记忆。对每条新事实，与其下方列出的已有记忆比较，并选择一个操作：\n"
        "- ADD：已有记忆都未涵盖的新信息。\n"
        "- UPDATE：某条已有记忆说的是同一件事，但新事实改变或细化了它；给出 target（其 id）和 text（更新后的记忆）。\n"
        "- DELETE：新事实表明某条已有记忆不再成立，且没有新的内容需要保存；给出 target。\n"
        "- NOOP：这条事实已经记住了。\n\n"
        "{items}\n\n"
        '用 JSON 回答：{{"decisions": [{{"fact": 0, "event": "ADD", "target": null, "text": null}}]}}'
    ),
}

INFER = {
    "zh": (
        "分析以下用户记忆，找出潜在的关联和模式，生成推理结论：\n\n<memories>\n{memories}\n</memories>\n\n"
        "请生成简洁的推理结论，例如：\n- 如果用户多次使用某技术，可推断其职业或专长\n"
        "- 如果用户多次表达某种偏好，可总结其总体偏好\n\n"
        "每条结论必须基于至少两条记忆，basedOn 只能使用上面列出的 id。\n"
        '返回 JSON 格式：{{"inferences": [{{"conclusion": "推断结论", "confidence": 0.8, "basedOn": ["m1", "m2"]}}]}}'
    ),
    "en": (
        "Analyze the following user memories, find underlying connections and patterns, and "
        "draw conclusions:\n\n<memories>\n{memories}\n</memories>\n\n"
        "Keep conclusions concise, for example:\n- if the user uses a technology repeatedly, infer "
        "their profession or expertise\n- if the user expresses a preference repeatedly, summarize "
        "their overall preference\n\nEach conclusion must rest on at least two memories; basedOn "
        "may only use the ids listed above.\n"
        'Return JSON: {{"inferences": [{{"conclusion": "...", "confidence": 0.8, "basedOn": ["m1", "m2"]}}]}}'
    ),
}


def language_of(texts: list[str]) -> str:
    """``"zh"`` when at least 20% of the letters are CJK, else ``"en"``; looks at the first
    :data:`gateway.runtime.text.LANGUAGE_PREFIX_CHARS` characters of each text
    (:func:`gateway.runtime.text.cjk_share_language`, linear and bounded).

    >>> language_of(["我昨天去了北京"]), language_of(["I went to Beijing"])
    ('zh', 'en')
    """
    return cjk_share_language(texts, threshold=0.2)


def render_conversation(turns: list[tuple[str, str]], friend: str) -> str:
    """``user: ...`` / ``<friend>: ...`` lines, one per turn."""
    return "\n".join(f"{'user' if role == 'user' else friend}: {text}" for role, text in turns)
