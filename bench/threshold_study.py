"""Is ``high_relevance_threshold: 0.8`` (seed 000) a sensible cut for the local model?

Embeds stored facts and, for each, questions that are about it and questions that are
not, with the real embedding model (all-MiniLM-L6-v2 by default), and prints the cosine
scores per group (English and Chinese separately) with the share of each group at or
above a few candidate cuts. Findings are summarized in :mod:`plugins.auto_recall`.
Run from a checkout: ``python -m bench threshold-study``.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence

import click
import numpy as np

from gateway.memory.config import EmbeddingConfig
from gateway.memory.embeddings.local import LocalEmbedder

#: (stored fact, [questions about it]); unrelated questions are shared per language.
FACTS_EN = [
    ("The user is allergic to peanuts.", ["Do I have any food allergies?", "What snack should I bring? I can't eat peanuts."]),
    ("The user's daughter is named Emma and she is 7 years old.", ["How old is my daughter Emma?", "Any gift ideas for my kid?"]),
    ("The user works as a product manager at an internet company.", ["What is my job?", "Help me prepare for my product review at work"]),
    ("The user likes science fiction movies and mystery novels.", ["Recommend me a movie", "What kind of films do I like?"]),
    ("The user has been sleeping badly and feels anxious.", ["I can't sleep well lately and I'm anxious", "How can I sleep better?"]),
    ("The user prefers concise answers.", ["Keep it short please", "Explain quantum computing"]),
    ("The user is learning Rust and struggles with the borrow checker.", ["Why does the borrow checker reject my code?", "Help me write a function in Rust"]),
    ("The user lives in Berlin.", ["Where do I live?", "What's the weather like today?"]),
]
FACTS_ZH = [
    ("用户对花生过敏。", ["我有什么食物过敏吗？", "我能吃花生酱吗？"]),
    ("用户最近睡眠不好，有点焦虑。", ["最近睡不好，很焦虑", "怎么提高睡眠质量？"]),
    ("用户喜欢科幻电影和悬疑小说。", ["推荐个电影吧", "我喜欢什么类型的电影？"]),
    ("用户是互联网公司的产品经理。", ["我是做什么工作的？", "帮我准备下周的产品评审"]),
]
UNRELATED = {
    "en": ["How do I sort a list in Python?", "What's the capital of France?", "Write a haiku about autumn"],
    "zh": ["帮我写个排序函数", "法国的首都是哪里？", "写一首关于秋天的诗"],
}
CUTS = (0.3, 0.5, 0.6, 0.7, 0.8)


def summary(scores: Sequence[float]) -> dict[str, object]:
    data = np.asarray(scores)
    return {
        "n": len(data), "min": round(float(data.min()), 2), "median": round(float(np.median(data)), 2),
        "max": round(float(data.max()), 2), "share_at_or_above": {c: round(float((data >= c).mean()), 2) for c in CUTS},
    }


async def study(model: LocalEmbedder) -> dict[str, object]:
    report: dict[str, object] = {}
    for language, facts in (("en", FACTS_EN), ("zh", FACTS_ZH)):
        related, unrelated = [], []
        for fact, questions in facts:
            vectors = await model.embed_many([fact, *questions, *UNRELATED[language]])
            scores = vectors[1:] @ vectors[0]
            related += scores[: len(questions)].tolist()
            unrelated += scores[len(questions):].tolist()
        report[language] = {"related": summary(related), "unrelated": summary(unrelated)}
    return report


async def run() -> dict[str, object]:
    model = await LocalEmbedder.load(EmbeddingConfig())
    try:
        return {"model": model.model, **await study(model)}
    finally:
        await model.aclose()


@click.command("threshold-study")
def command() -> None:
    """Cosine scores of related vs unrelated questions (is high_relevance_threshold 0.8 sensible?)."""
    click.echo(json.dumps(asyncio.run(run()), indent=2, ensure_ascii=False))
