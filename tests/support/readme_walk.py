"""Run README.md's marked blocks as written against a real ``memgate serve`` on port 8080.

``python -m tests.support.readme_walk OUT`` (``tests/test_readme.py`` runs it, in a
network namespace of its own when it can, so port 8080 is free whatever else runs):

- a work folder ``OUT/repo`` stands for a fresh checkout after ``make run``: the repo's
  ``gateway.yaml`` (copied: its ``data/`` lands there), ``.venv`` (the checkout's, else
  this interpreter's venv) and ``tests/`` (the README's example files) linked;
- the upstream is the test double on a loopback port (``MEMGATE_UPSTREAM_URL``), the only
  variable set for the gateway besides ``OPENAI_API_KEY``: keys, port and Redis are the
  ``gateway.yaml`` defaults the README states;
- each block marked ``<!-- readme-test: NAME -->`` runs as written in a fresh shell with
  no ``MEMGATE_*`` variable (bash with ``-eu``: a variable a block does not set itself
  stops it), in the README's order; between "remember" and "list" the walk waits, as a
  person would, until the memory is stored;
- ``OUT/result.json``: each block's exit status and output, and every chat request the
  upstream received.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[2]
PORT = 8080
MARKED = re.compile(r"^([ \t]*)<!-- readme-test: ([\w-]+) -->\n\1```(\w+)\n(.*?)^\1```", re.MULTILINE | re.DOTALL)


def marked_blocks(readme: str) -> dict[str, tuple[str, str]]:
    """``name -> (language, code)`` of the README's marked blocks (indent removed)."""
    blocks = {}
    for indent, name, language, code in MARKED.findall(readme):
        lines = [line[len(indent):] if line.startswith(indent) else line for line in code.splitlines()]
        blocks[name] = (language, "\n".join(lines) + "\n")
    return blocks


def poll(condition: Any, timeout: float, what: str) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out after {timeout:g} s waiting for {what}")
        time.sleep(0.2)


def _get(url: str, **headers: str) -> httpx.Response | None:
    try:
        return httpx.get(url, headers=headers, timeout=5)
    except httpx.HTTPError:
        return None


def prepare(out: Path) -> Path:
    work = out / "repo"
    work.mkdir(parents=True)
    shutil.copy(ROOT / "gateway.yaml", work / "gateway.yaml")
    venv = ROOT / ".venv" if (ROOT / ".venv" / "bin" / "activate").exists() else Path(sys.prefix)
    (work / ".venv").symlink_to(venv)
    (work / "tests").symlink_to(ROOT / "tests")
    return work


def block_env() -> dict[str, str]:
    """A newcomer's shell: no MEMGATE_* variable; the checkout's code first on the path."""
    keep = {k: v for k, v in os.environ.items() if k in ("HOME", "LANG", "LC_ALL", "TMPDIR", "USER")}
    return {**keep, "PATH": "/usr/local/bin:/usr/bin:/bin", "PYTHONPATH": str(ROOT)}


def run_block(work: Path, name: str, language: str, code: str) -> dict[str, Any]:
    path = work / f"readme-{name}.{'py' if language == 'python' else 'sh'}"
    path.write_text(code)
    if language == "python":
        command = [str(work / ".venv" / "bin" / "python"), path.name]
    else:
        command = ["bash", "--noprofile", "--norc", "-eu", "-o", "pipefail", path.name]
    done = subprocess.run(command, cwd=work, env=block_env(), capture_output=True, text=True, timeout=300)
    return {"name": name, "rc": done.returncode, "stdout": done.stdout, "stderr": done.stderr}


async def mcp_over_http(config: dict[str, Any]) -> dict[str, Any]:
    """The README's Cursor config, used by the MCP SDK's own HTTP client: its URL and headers."""
    import httpx as httpx2
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    server = config["mcpServers"]["memgate"]
    client = httpx2.AsyncClient(headers=server["headers"], timeout=60)
    async with client, streamable_http_client(server["url"], http_client=client) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            tools = sorted(t.name for t in (await session.list_tools()).tools)
            found = await session.call_tool("search_memory", {"query": "What am I allergic to?", "top_k": 3})
    return {"tools": tools, "search": found.structured_content, "is_error": found.is_error}


def walk(out: Path, result: dict[str, Any]) -> None:
    from tests.support.loopback import LoopbackServer
    from tests.support.processes import MemgateProcess
    from tests.support.upstream_double import UpstreamDouble

    blocks = marked_blocks((ROOT / "README.md").read_text(encoding="utf-8"))
    work = prepare(out)
    double = UpstreamDouble()
    upstream = LoopbackServer(double, lifespan="off").start()
    for name in [n for n in os.environ if n.startswith("MEMGATE_")]:
        del os.environ[name]
    os.environ.update({"MEMGATE_UPSTREAM_URL": upstream.url + "/v1", "OPENAI_API_KEY": "sk-upstream-double"})
    gateway = MemgateProcess(["serve", "--config", str(work / "gateway.yaml")], out / "serve.log")
    base = f"http://127.0.0.1:{PORT}"
    results: list[dict[str, Any]] = []
    result.update(blocks=results, names=sorted(blocks))
    try:
        gateway.start()
        gateway.wait_for(r"memgate: starting on http://127\.0\.0\.1:8080 ", timeout=120)
        poll(lambda: (r := _get(base + "/healthz")) is not None and r.status_code == 200, 180, "the gateway's /healthz")
        for name in ("quickstart-python", "first-steps-remember"):
            results.append(run_block(work, name, *blocks[name]))
        poll(lambda: (r := _get(base + "/v1/memories", authorization="Bearer memgate-dev-key")) is not None
             and "allergic to peanuts" in r.text, 120, "the remembered fact")
        for name in ("first-steps-list", "first-steps-recall", "first-steps-inspect", "conversations-in", "world-book"):
            results.append(run_block(work, name, *blocks[name]))
        _, code = blocks["mcp-http"]
        result["mcp"] = asyncio.run(mcp_over_http(json.loads(code)))
    finally:
        result["chat_requests"] = [r.json for r in double.chat_requests()]
        gateway.stop()
        upstream.stop()
        result["serve_log"] = gateway.text()[-4000:]


def main() -> None:
    out = Path(sys.argv[1])
    if os.environ.get("MEMGATE_README_NETNS") == "1":  # a fresh network namespace: bring loopback up
        subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    result: dict[str, Any] = {}
    try:
        walk(out, result)
    except Exception as exc:  # reported to the test, which fails with it
        result["error"] = f"{type(exc).__name__}: {exc}"
    (out / "result.json").write_text(json.dumps(result, indent=1, ensure_ascii=False))


if __name__ == "__main__":
    main()
