"""Prompt texts the recall plugins inject, in Chinese (the seeds' wording) and English.

- :data:`MEMORY_CONTEXT`: seed 000 P2 ``memoryContextPrompt``, verbatim in ``zh``, with
  its ``{{ memoryItems }}`` placeholder; ``en`` is a translation.
- :data:`PERSONALIZATION`: seed 000 P3 ``getPersonalizationPrompt`` lines, verbatim in
  ``zh``; ``en`` is a translation. Keys are ``(preference type, value)``; ``language`` and
  free-form preferences use the ``language`` / ``free_form`` lines.
- :func:`prompt_language`: which of the two a request gets (the user's own language).
"""

from __future__ import annotations

from typing import Literal

__all__ = ['FREE_FORM_LINE', 'LANGUAGE_LINE', 'Language', 'MEMORY_CONTEXT', 'MEMORY_ITEMS', 'PERSONALIZATION', 'PERSONALIZATION_HEADER', 'is_cjk', 'prompt_language', 'render_memory_context']

Language = Literal["zh", "en"]

MEMORY_ITEMS = "{{ memoryItems }}"

MEMORY_CONTEXT: dict[str, str] = {
    "zh": (
        "以下是与用户相关的记忆信息，请在回答时参考：\n\n"
        "{{ memoryItems }}\n\n"
        "注意事项：\n"
        "- 如果记忆与当前问题相关，请利用这些信息提供个性化回答\n"
        "- 如果记忆与当前问题无关，请忽略这些信息\n"
        "- 不要明确提及\"根据记忆\"或\"我记得\"，自然地使用信息即可"
    ),
    "en": (
        "Here is what you remember about the user; use it when answering:\n\n"
        "{{ memoryItems }}\n\n"
        "Notes:\n"
        "- If a memory is relevant to the current question, use it to personalize the answer\n"
        "- If a memory is unrelated to the current question, ignore it\n"
        "- Do not say \"according to my memory\" or \"I remember\"; use the information naturally"
    ),
}

PERSONALIZATION_HEADER: dict[str, str] = {
    "zh": "请根据以下用户偏好调整你的回答风格：",
    "en": "Adjust your answer style to the user's preferences:",
}

PERSONALIZATION: dict[str, dict[tuple[str, str], str]] = {
    "zh": {
        ("technical_depth", "beginner"): "- 使用简单易懂的语言，避免专业术语，必要时解释概念",
        ("technical_depth", "expert"): "- 使用专业术语，可以直接深入技术细节",
        ("response_length", "concise"): "- 回答简洁，直接给出结论和关键信息",
        ("response_length", "detailed"): "- 回答详细，提供充分的解释和示例",
        ("code_style", "commented"): "- 代码示例添加必要的注释",
        ("code_style", "minimal"): "- 代码示例保持简洁，无需过多注释",
    },
    "en": {
        ("technical_depth", "beginner"): "- Use plain language, avoid jargon, and explain concepts when needed",
        ("technical_depth", "expert"): "- Use technical terms and go straight into the details",
        ("response_length", "concise"): "- Be concise: give the conclusion and the key facts directly",
        ("response_length", "detailed"): "- Be detailed: give thorough explanations and examples",
        ("code_style", "commented"): "- Add the necessary comments to code examples",
        ("code_style", "minimal"): "- Keep code examples lean, without many comments",
    },
}

LANGUAGE_LINE: dict[str, str] = {"zh": "- 使用 {value} 回答", "en": "- Answer in {value}"}
FREE_FORM_LINE: dict[str, str] = {"zh": "- {type}：{value}", "en": "- {type}: {value}"}


def is_cjk(char: str) -> bool:
    """True for CJK ideographs, kana and hangul (the scripts of zh/ja/ko text)."""
    code = ord(char)
    return (
        0x4E00 <= code <= 0x9FFF or 0x3400 <= code <= 0x4DBF or 0x3040 <= code <= 0x30FF
        or 0xAC00 <= code <= 0xD7AF or 0x20000 <= code <= 0x2A6DF or 0xF900 <= code <= 0xFAFF
    )


def prompt_language(text: str) -> Language:
    """``zh`` when ``text`` is mostly CJK, else ``en``.

    "Mostly" counts each CJK character as one unit and each run of Latin letters (a word)
    as one unit, since one Chinese character carries about what one English word does:
    "帮我写个 Python 函数" (6 vs 1) is zh, "I visited 北京" (2 vs 2) is zh on a tie,
    "What does 你好 mean in English?" (2 vs 6) is en. No text at all: en.
    """
    cjk = words = 0
    in_word = False
    for char in text:
        if is_cjk(char):
            cjk += 1
            in_word = False
        elif char.isascii() and char.isalpha():
            if not in_word:
                words += 1
            in_word = True
        else:
            in_word = False
    return "zh" if cjk and cjk >= words else "en"


def render_memory_context(template: str, texts: list[str]) -> str:
    """``template`` with ``{{ memoryItems }}`` replaced by ``1. text`` lines (seed 000)."""
    items = "\n".join(f"{i}. {text}" for i, text in enumerate(texts, start=1))
    return template.replace(MEMORY_ITEMS, items)
