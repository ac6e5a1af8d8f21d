"""Prompt texts the recall plugins inject, in Chinese (the seeds' wording) and English.

- :data:`MEMORY_CONTEXT`: seed 000 P2 ``memoryContextPrompt``, verbatim in ``zh``, with
  its ``{{ memoryItems }}`` placeholder; ``en`` is a translation.
- :data:`PERSONALIZATION`: seed 000 P3 ``getPersonalizationPrompt`` lines, verbatim in
  ``zh``; ``en`` is a translation. Keys are ``(preference type, value)``; ``language`` and
  free-form preferences use the ``language`` / ``free_form`` lines.
- :func:`prompt_language` (from :mod:`gateway.runtime.text`): which of the two a request gets.
"""

from __future__ import annotations

from typing import Literal

from gateway.chain.sdk import MemoryRecord

__all__ = ['FREE_FORM_LINE', 'LANGUAGE_LINE', 'MEMORY_CONTEXT', 'MEMORY_ITEMS', 'PERSONALIZATION', 'PERSONALIZATION_HEADER', 'Language', 'memory_line', 'render_memory_context']

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


def memory_line(record: MemoryRecord) -> str:
    """A memory as one prompt line: the day it happened (``occurred_at``, UTC, ISO date)
    and its text, seed 002's event shape (``date`` + ``content``):
    ``2026-01-02: My daughter Maya is allergic to peanuts``."""
    return f"{record.occurred_at.date().isoformat()}: {record.text}"


def render_memory_context(template: str, texts: list[str]) -> str:
    """``template`` with ``{{ memoryItems }}`` replaced by ``1. text`` lines (seed 000)."""
    items = "\n".join(f"{i}. {text}" for i, text in enumerate(texts, start=1))
    return template.replace(MEMORY_ITEMS, items)
