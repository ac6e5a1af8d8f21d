"""README "What a chat turns into": the worked examples (one short chat of the dev set in
English and one in Chinese: what is stored, what is dropped, what a later prompt
receives) are what the gateway does.

Both chats (``bench/assistant/data/en-01-dana.json``, ``zh-01-lina.json``) are replayed
through the repo's ``gateway.yaml`` by ``python -m bench assistant``'s runner (real
gateway, real Redis, the real ``openai`` SDK, each session a new conversation sending its
whole history, then each probe alone in a new conversation); each README table and system
message is read from README.md and compared with the memories the gateway stored and the
system message the upstream received for the README's question. Dates in the README are
the day it was played, so days compare as ``YYYY-MM-DD`` placeholders; a table must list
every turn of its chat.
"""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from bench.assistant.dataset import load_users
from bench.assistant.run import DEFAULT_CONFIG, run_async
from tests.support.upstream_double import UpstreamDouble

ROOT = Path(__file__).resolve().parents[1]
SECTION = "### What a chat turns into"
HEADER = "| the user said | stored | scope |"
#: user -> the README's later question (its system message follows the user's table)
EXAMPLES = {"en-dana": "Any photography classes nearby I could take on weekends?",
            "zh-lina": "这周末带孩子去哪儿玩比较好？"}
DAY = re.compile(r"\b\d{4}-\d{2}-\d{2}\b")

Row = tuple[str, list[str], str, str]


def readme_examples() -> list[tuple[list[Row], str, str]]:
    """Each example of the README section in order: ``(rows, question, system message)``,
    a row ``(user said, stored texts, scope, the stored cell)``."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text[text.index(SECTION):]
    section = section[:section.index("\n## ")]
    examples = []
    for part in section.split(HEADER)[1:]:
        rows = []
        for line in part.splitlines()[2:]:
            if not line.startswith("|"):
                break
            said, stored, scope = (cell.strip() for cell in line.strip().strip("|").split(" | "))
            lead = re.match(r"(?:`[^`]+`(?:, )?)*", stored)
            rows.append((said, re.findall(r"`([^`]+)`", lead.group(0) if lead else ""), scope, stored))
        question = re.search(r'asking "(.+?)"\s+reaches the upstream', part, re.DOTALL)
        block = re.search(r"```\n(.*?)\n```", part, re.DOTALL)
        assert question and block, "a README example without its question or system message block"
        examples.append((rows, re.sub(r"\s+", " ", question.group(1)), block.group(1)))
    return examples


@pytest.fixture(scope="module")
def replayed(tmp_path_factory: pytest.TempPathFactory, redis_url: str) -> tuple[dict[str, Any], UpstreamDouble]:
    """Both chats replayed once through the repo's gateway.yaml (personalization's cache
    off, so the probes need not wait for its TTL)."""
    users = [u for u in load_users() if u.user in EXAMPLES]
    config = yaml.safe_load(DEFAULT_CONFIG.read_text())
    for entry in config["plugins"]:
        if entry["name"] == "personalization":
            entry["config"] = {**(entry.get("config") or {}), "cache_ttl_s": 0}
    path = tmp_path_factory.mktemp("readme-example") / "gateway.yaml"
    path.write_text(yaml.safe_dump(config))
    double = UpstreamDouble()
    return asyncio.run(run_async(users, path, redis_url=redis_url, double=double)), double


def test_the_readme_has_one_example_per_chat_with_its_question():
    assert [question for _, question, _ in readme_examples()] == list(EXAMPLES.values())


@pytest.mark.parametrize("name", list(EXAMPLES))
def test_the_readme_worked_example_is_what_the_gateway_stores_and_injects(name: str, replayed):
    result, double = replayed
    rows, question, system = next(e for e in readme_examples() if e[1] == EXAMPLES[name])
    user = next(u for u in load_users() if u.user == name)

    # every turn of the chat is in the table, in order ('ten weeks (to "How old is Pixel?")')
    assert [re.sub(r' \(to ".*"\)$', "", row[0]) for row in rows] == [t.user for t in user.turns]

    memories = result["memories"][name]
    stored = sorted((m["text"], m["scope"]) for m in memories)
    assert stored == sorted((text, scope) for _, texts, scope, _ in rows for text in texts)
    by_text = {m["text"]: m for m in memories}
    superseded = {texts[0] for _, texts, _, note in rows if "later superseded" in note}
    assert {m["text"] for m in memories if m["retired"]} == superseded
    (retiring,) = [texts[0] for _, texts, _, note in rows if "retires" in note]
    for text in superseded:
        assert by_text[text]["superseded_by"] == by_text[retiring]["id"]

    (probe,) = [r.json for r in double.chat_requests()
                if r.json["messages"][-1] == {"role": "user", "content": question}]
    injected = [m["content"] for m in probe["messages"] if m["role"] == "system"]
    assert [DAY.sub("YYYY-MM-DD", c) for c in injected] == [DAY.sub("YYYY-MM-DD", system)]
