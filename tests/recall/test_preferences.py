"""Preference extraction (seed 000 P3 cues), newest-wins resolution and the prompt."""

from plugins.preferences import cue_preferences, extract_preferences, render_personalization, resolve
from tests.recall.records import record


def test_seed_000_chinese_cues():
    assert cue_preferences("用户是编程新手") == [("technical_depth", "beginner")]
    assert cue_preferences("资深后端工程师，喜欢简洁的回答") == [("technical_depth", "expert"), ("response_length", "concise")]
    assert cue_preferences("希望回答详细完整，代码要有注释") == [("response_length", "detailed"), ("code_style", "commented")]


def test_english_cues_and_negated_comments():
    assert cue_preferences("The user is a beginner and likes detailed explanations") == [
        ("technical_depth", "beginner"), ("response_length", "detailed")]
    assert cue_preferences("Prefers code with no comments") == [("code_style", "minimal")]
    assert cue_preferences("代码不要注释") == [("code_style", "minimal")]


def test_language_cues():
    assert cue_preferences("Always answer in french please") == [("language", "French")]
    assert cue_preferences("请用中文回答") == [("language", "中文")]
    assert cue_preferences("Likes hiking") == []


def test_structured_metadata_wins_over_cues_and_allows_free_form_kinds():
    r = record("concise person", type="preference", metadata={"preference": [
        {"type": "tone", "value": "casual"}, {"type": "response_length", "value": "detailed"}]})
    assert [(p.type, p.value, p.source) for p in extract_preferences([r])] == [
        ("tone", "casual", r.id), ("response_length", "detailed", r.id)]


def test_the_newest_memory_wins_a_conflict():
    old = record("Wants concise answers", type="preference", day="2026-01-01")
    new = record("Now wants detailed answers", type="preference", day="2026-02-01")
    chosen = resolve(extract_preferences([new, old]))  # input order does not matter
    assert chosen["response_length"].value == "detailed" and chosen["response_length"].source == new.id


def test_the_chinese_prompt_is_seed_000s():
    prefs = extract_preferences([record("编程新手，喜欢简洁，代码要注释，请用中文回答", type="preference")])
    assert render_personalization(resolve(prefs), "zh") == (
        "请根据以下用户偏好调整你的回答风格：\n"
        "- 使用简单易懂的语言，避免专业术语，必要时解释概念\n"
        "- 回答简洁，直接给出结论和关键信息\n"
        "- 代码示例添加必要的注释\n"
        "- 使用 中文 回答"
    )


def test_the_english_prompt_and_free_form_lines():
    r = record("x", type="trait", metadata={"preference": [{"type": "technical_depth", "value": "expert"},
                                                          {"type": "tone", "value": "casual"}]})
    assert render_personalization(resolve(extract_preferences([r])), "en") == (
        "Adjust your answer style to the user's preferences:\n"
        "- Use technical terms and go straight into the details\n"
        "- tone: casual"
    )


def test_no_applicable_preference_renders_nothing():
    r = record("x", type="preference", metadata={"preference": {"type": "technical_depth", "value": "intermediate"}})
    assert render_personalization(resolve(extract_preferences([r])), "en") is None
