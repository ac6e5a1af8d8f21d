"""README "What a chat turns into": the worked example (one short chat of the dev set, what
is stored, what is dropped, what a later prompt receives) is what the gateway does.

The chat (``bench/assistant/data/en-01-dana.json``) is replayed through the repo's
``gateway.yaml`` by ``python -m bench assistant``'s runner (real gateway, real Redis, the
real ``openai`` SDK, each session a new conversation sending its whole history); the
README's table and its system message are read from README.md and compared with the
memories the gateway stored and the system message the upstream received for the
photography question. Dates in the README are the day it was played, so days compare as
``YYYY-MM-DD`` placeholders; the table must list every turn of the chat.
"""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import yaml

from bench.assistant.dataset import load_users
from bench.assistant.run import DEFAULT_CONFIG, run_async
from tests.support.upstream_double import UpstreamDouble

ROOT = Path(__file__).resolve().parents[1]
SECTION = "### What a chat turns into"
PROBE = "Any photography classes nearby I could take on weekends?"
DAY = re.compile(r"\b\d{4}-\d{2}-\d{2}\b")


def readme_example() -> tuple[list[tuple[str, list[str], str, str]], str]:
    """``([(user said, stored texts, scope, note)], system message)`` of the README section."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text[text.index(SECTION):]
    section = section[:section.index("\n## ")] if "\n## " in section else section
    rows = []
    table = section[section.index("| the user said | stored | scope |"):]
    for line in table.splitlines()[2:]:
        if not line.startswith("|"):
            break
        said, stored, scope = (cell.strip() for cell in line.strip().strip("|").split(" | "))
        lead = re.match(r"(?:`[^`]+`(?:, )?)*", stored).group(0)  # the stored texts lead the cell
        rows.append((said, re.findall(r"`([^`]+)`", lead), scope, stored))
    after = section[section.index("reaches the upstream with this system message"):]
    block = re.search(r"```\n(.*?)\n```", after, re.DOTALL)
    assert block, "the README section has no system message block"
    return rows, block.group(1)


def test_the_readme_worked_example_is_what_the_gateway_stores_and_injects(tmp_path: Path, redis_url: str):
    rows, system = readme_example()
    user = next(u for u in load_users() if u.user == "en-dana")

    # every turn of the chat is in the table, in order ("ten weeks (to "How old is Pixel?")")
    said = [re.sub(r' \(to ".*"\)$', "", row[0]) for row in rows]
    assert said == [t.user for t in user.turns]

    config = yaml.safe_load(DEFAULT_CONFIG.read_text())
    for entry in config["plugins"]:  # the probe need not wait for personalization's cache TTL
        if entry["name"] == "personalization":
            entry["config"] = {**(entry.get("config") or {}), "cache_ttl_s": 0}
    path = tmp_path / "gateway.yaml"
    path.write_text(yaml.safe_dump(config))
    double = UpstreamDouble()
    result = asyncio.run(run_async([user], path, redis_url=redis_url, double=double))

    memories = result["memories"]["en-dana"]
    stored = sorted((m["text"], m["scope"]) for m in memories)
    assert stored == sorted((text, scope) for _, texts, scope, _ in rows for text in texts)
    by_text = {m["text"]: m for m in memories}
    superseded = {texts[0] for _, texts, _, note in rows if "later superseded" in note}
    assert {m["text"] for m in memories if m["retired"]} == superseded
    (retiring,) = [texts[0] for _, texts, _, note in rows if "retires" in note]
    for text in superseded:
        assert by_text[text]["superseded_by"] == by_text[retiring]["id"]

    (probe,) = [r.json for r in double.chat_requests()
                if r.json["messages"][-1] == {"role": "user", "content": PROBE}]
    injected = [m["content"] for m in probe["messages"] if m["role"] == "system"]
    assert [DAY.sub("YYYY-MM-DD", c) for c in injected] == [DAY.sub("YYYY-MM-DD", system)]
