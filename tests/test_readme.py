"""README.md as a newcomer meets it: its shell examples set every variable they use, and
its marked blocks run as written against a real ``memgate serve`` with the repo's
``gateway.yaml`` on the port it states (tests/support/readme_walk.py): a first reply, a
remembered fact, a conversation ingested, a lore entry triggered with its macros
replaced, and an MCP tool call over the URL of the Cursor config."""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.openai_bodies import COMPLETION
from tests.support.readme_walk import PORT, marked_blocks

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
FENCE = re.compile(r"^([ \t]*)```(bash|sh|shell)\n(.*?)^\1```", re.MULTILINE | re.DOTALL)
USED = re.compile(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)")
SET = re.compile(r"(?:^|[\s;(])(?:export\s+)?((?:[A-Za-z_][A-Za-z0-9_]*=\S*\s*)+)")


def test_every_shell_example_sets_the_variables_it_uses_first():
    """A pasted example never meets an unset variable (the old `$GW`, `$KEY`): each
    variable is assigned earlier in the same block, or is one every shell has."""
    shell_own = {"HOME", "PATH", "PWD", "USER"}
    checked = 0
    for _, _, code in FENCE.findall(README):
        assigned: set[str] = set()
        for line in code.splitlines():
            line = line.split(" #", 1)[0]
            for name in USED.findall(line):
                assert name in assigned or name in shell_own, f"${name} is used before it is set in:\n{code}"
            for group in SET.findall(line):
                assigned.update(part.split("=", 1)[0] for part in group.split() if "=" in part)
        checked += 1
    assert checked >= 6


def test_the_marked_blocks_are_there():
    assert set(marked_blocks(README)) >= {
        "quickstart-python", "first-steps-remember", "first-steps-list", "first-steps-recall", "first-steps-inspect",
        "conversations-in", "world-book", "mcp-http"}
    for language, code in marked_blocks(README).values():
        if language == "bash":
            assert f"MEMGATE_URL=http://127.0.0.1:{PORT}" in code


def _port_free(port: int) -> bool:
    with socket.socket() as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def _own_network() -> bool:
    """True when this process may run a command in a network namespace of its own
    (root with util-linux's unshare): port 8080 is then free whatever else runs here."""
    if os.geteuid() != 0 or shutil.which("unshare") is None or shutil.which("ip") is None:
        return False
    return subprocess.run(["unshare", "-n", "true"], capture_output=True).returncode == 0


@pytest.fixture(scope="module")
def walked(tmp_path_factory):
    out = tmp_path_factory.mktemp("readme")
    command = [sys.executable, "-m", "tests.support.readme_walk", str(out)]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    if _own_network():
        command, env["MEMGATE_README_NETNS"] = ["unshare", "-n", *command], "1"
    elif not _port_free(PORT):
        pytest.skip(f"port {PORT} (the README's) is in use and no private network namespace can be made (needs root)")
    subprocess.run(command, cwd=ROOT, env=env, timeout=900, check=True)
    result = json.loads((out / "result.json").read_text())
    assert "error" not in result, f"{result['error']}\nserve log:\n{result.get('serve_log')}\nblocks: {result.get('blocks')}"
    result["by_name"] = {b["name"]: b for b in result["blocks"]}
    return result


def _ok(result, name):
    block = result["by_name"][name]
    assert block["rc"] == 0, f"{name} exited {block['rc']}:\n{block['stdout']}\n{block['stderr']}"
    return block["stdout"]


def _asked(result, text):
    """The upstream chat request whose last message is ``text``."""
    found = [r for r in result["chat_requests"] if r["messages"][-1].get("content") == text]
    assert found, f"no upstream request ends with {text!r}"
    return found[-1]


def test_quickstart_gets_a_first_reply(walked):
    assert _ok(walked, "quickstart-python").strip() == COMPLETION["choices"][0]["message"]["content"]


def test_a_fact_is_remembered_and_recalled_in_a_new_conversation(walked):
    assert json.loads(_ok(walked, "first-steps-remember"))["object"] == "chat.completion"
    listed = _ok(walked, "first-steps-list")
    assert "I am allergic to peanuts." in listed and re.search(r"^ID\s+SCOPE\s+TYPE", listed, re.MULTILINE)
    json.loads(_ok(walked, "first-steps-recall"))
    sent = _asked(walked, "Remind me what I am allergic to.")
    system = [m["content"] for m in sent["messages"] if m["role"] == "system"]
    assert any("I am allergic to peanuts." in text for text in system), sent["messages"]


def test_the_recall_inspector_shows_the_remembered_fact_without_calling_the_model(walked):
    """First steps: the inspector prints the injected system message holding the fact,
    then the client's message, and the upstream never receives that question."""
    lines = _ok(walked, "first-steps-inspect").splitlines()
    assert lines[0].startswith("injected system: Here is what you remember about the user")
    assert any("I am allergic to peanuts." in line for line in lines[:-1]), lines
    assert lines[-1] == "client user: What should I cook tonight?"
    assert not [r for r in walked["chat_requests"] if r["messages"][-1].get("content") == "What should I cook tonight?"]


def test_a_conversation_chunk_is_ingested(walked):
    reply = json.loads(_ok(walked, "conversations-in"))
    assert reply["object"] == "memory.ingest" and reply["ids"], reply


def test_a_lore_entry_fires_for_the_dev_key_with_its_macros_replaced(walked):
    out = _ok(walked, "world-book")
    report = json.loads(out.splitlines()[0])
    assert (report["name"], report["friend_id"], report["entries"]) == ("Eldoria", "assistant", 4)
    sent = _asked(walked, "What is this forest?")
    first = sent["messages"][0]
    assert first["role"] == "system" and first["content"].startswith('Kai: "What is Eldoria?"\nSeraphina: *Seraphina turns')
    assert "{{" not in first["content"]
    # the client's own system prompt follows the lore (the remembered allergy, a lasting fact, may sit between)
    assert {"role": "system", "content": "You are Seraphina, guardian of the glade."} in sent["messages"][1:3]
    assert '"name": "Eldoria"' in out.splitlines()[-1] or '"name":"Eldoria"' in out.replace(" ", "")


def test_the_mcp_url_of_the_cursor_config_serves_the_memory_tools(walked):
    mcp = walked["mcp"]
    assert {"search_memory", "add_memory", "recall_memory"} <= set(mcp["tools"]) and not mcp["is_error"]
    assert any("allergic to peanuts" in hit["record"]["text"] for hit in mcp["search"]["hits"]), mcp["search"]
