"""Language choice and the seed 000 templates."""

from gateway.runtime.text import prompt_language
from plugins.prompts import MEMORY_CONTEXT, render_memory_context


def test_mostly_cjk_text_gets_chinese():
    assert prompt_language("帮我写个 Python 函数") == "zh"
    assert prompt_language("最近睡眠不好") == "zh"
    assert prompt_language("I visited 北京") == "zh"  # a tie goes to zh


def test_latin_text_or_no_text_gets_english():
    assert prompt_language("What does 你好 mean in English?") == "en"
    assert prompt_language("Recommend a movie") == "en"
    assert prompt_language("") == "en"


def test_the_chinese_template_is_seed_000_memory_context_prompt():
    text = render_memory_context(MEMORY_CONTEXT["zh"], ["用户喜欢科幻电影", "用户是产品经理"])
    assert text == (
        "以下是与用户相关的记忆信息，请在回答时参考：\n\n1. 用户喜欢科幻电影\n2. 用户是产品经理\n\n"
        "注意事项：\n- 如果记忆与当前问题相关，请利用这些信息提供个性化回答\n"
        "- 如果记忆与当前问题无关，请忽略这些信息\n- 不要明确提及\"根据记忆\"或\"我记得\"，自然地使用信息即可"
    )


def test_the_english_template_numbers_items_the_same_way():
    text = render_memory_context(MEMORY_CONTEXT["en"], ["Likes sci-fi"])
    assert "\n\n1. Likes sci-fi\n\n" in text and text.startswith("Here is what you remember about the user")
