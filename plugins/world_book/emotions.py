"""A small zh + en emotion lexicon for seed 001's emotional trigger.

Source: the categories are Ekman's six basic emotions (P. Ekman, "An argument for basic
emotions", Cognition and Emotion 6(3-4), 1992) plus ``love``, common in companion chat;
the cue words are a short hand-picked list written for this project (not taken from a
published lexicon). It is deliberately small: an entry's ``emotionalContext`` names the
categories (or any cue word) it reacts to, and operators extend it through
``world_book.emotion_words`` in the plugin config.
"""

from __future__ import annotations

__all__ = ["EMOTION_WORDS"]

EMOTION_WORDS: dict[str, tuple[str, ...]] = {
    "joy": ("happy", "glad", "joy", "delighted", "excited", "开心", "高兴", "快乐", "兴奋", "幸福", "哈哈"),
    "sadness": ("sad", "unhappy", "depressed", "lonely", "cry", "crying", "miss you",
                "难过", "伤心", "悲伤", "孤独", "哭", "想你", "失落"),
    "anger": ("angry", "furious", "mad at", "annoyed", "hate", "生气", "愤怒", "气死", "讨厌", "烦"),
    "fear": ("afraid", "scared", "frightened", "worried", "anxious", "nervous",
             "害怕", "恐惧", "担心", "紧张", "焦虑"),
    "surprise": ("surprised", "wow", "unexpected", "shocked", "惊讶", "没想到", "震惊", "居然"),
    "disgust": ("disgusting", "gross", "sick of", "恶心", "反感", "受不了"),
    "love": ("love", "adore", "darling", "喜欢你", "爱你", "亲爱的", "想念"),
}
