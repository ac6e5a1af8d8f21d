"""The proxies under test, each started as a child process on a free loopback port.

- ``direct``: the fixed-body upstream itself (the baseline every figure is compared to);
- ``memgate``: ``python -m gateway.cli serve`` (this checkout's) with every plugin off, the embedded Redis
  under the bench's temp dir, and a model route (``bench-sse`` -> the SSE path);
- ``litellm``: LiteLLM's proxy (``litellm --config``) with the same two models, one
  worker, a master key and no database, when ``litellm`` is on PATH or importable
  (:func:`find_litellm`); it is never a dependency of memgate.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from bench.proxy.bodies import (
    CHAT_PATH,
    PLAIN_MODEL,
    PLAIN_PREFIX,
    SSE_MODEL,
    SSE_PREFIX,
)
from bench.proxy.process import Child, free_port, python_env

GATEWAY_KEY = "bench-key"
LITELLM_KEY = "sk-bench-key"


@dataclass
class Target:
    """Where the load generators send requests for one proxy (or the upstream)."""

    name: str
    port: int
    plain_path: str
    sse_path: str
    headers: dict[str, str]
    child: Child | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def pid(self) -> int | None:
        return self.child.pid if self.child else None


def direct_target(port: int, upstream: Child | None = None) -> Target:
    """The upstream itself; ``upstream`` (its process) lets the bench read its CPU time."""
    return Target(
        "direct", port, PLAIN_PREFIX + CHAT_PATH, SSE_PREFIX + CHAT_PATH,
        {"authorization": "Bearer upstream-key"}, upstream,
    )


def gateway_config(upstream_port: int, port: int, data_dir: Path) -> dict[str, object]:
    """A gateway.yaml (as a mapping) for the bench: plugins off, bench model routes."""
    base = f"http://127.0.0.1:{upstream_port}"
    return {
        "server": {"host": "127.0.0.1", "port": port},
        "upstream": {
            "base_url": base + PLAIN_PREFIX,
            "api_key": "upstream-key",
            "routes": [{"models": [SSE_MODEL], "base_url": base + SSE_PREFIX, "api_key": "upstream-key"}],
        },
        "clients": [{"key": GATEWAY_KEY, "user_id": "bench"}],
        "memory": {"redis_url": None, "data_dir": str(data_dir)},
        "plugins": [],
    }


def start_gateway(upstream_port: int, workdir: Path) -> Target:
    """``memgate serve`` on a free port, ready (``/healthz`` answers)."""
    port = free_port()
    workdir.mkdir(parents=True, exist_ok=True)
    conf = workdir / "gateway.yaml"
    conf.write_text(json.dumps(gateway_config(upstream_port, port, workdir / "data"), indent=2))
    argv = [sys.executable, "-m", "gateway.cli", "serve", "--config", str(conf)]
    child = Child("memgate", argv, workdir / "memgate.out", env=python_env())
    target = Target("memgate", port, "/v1" + CHAT_PATH, "/v1" + CHAT_PATH,
                    {"authorization": f"Bearer {GATEWAY_KEY}"}, child)
    try:
        child.wait_ready(f"http://127.0.0.1:{port}/healthz", timeout=120)
    except BaseException:
        child.stop()
        raise
    return target


def find_litellm(explicit: str | None = None) -> tuple[list[str] | None, str]:
    """The argv prefix that runs LiteLLM's proxy, or None and the reason it cannot run."""
    if explicit:
        return [explicit], f"{explicit} (--litellm-cmd)"
    command = shutil.which("litellm")
    if command:
        return [command], f"{command} (PATH)"
    if importlib.util.find_spec("litellm") is not None:
        return [sys.executable, "-c", "import litellm, sys; sys.exit(litellm.run_server())"], "importable"
    return None, "litellm is not installed (no `litellm` on PATH, not importable); " \
                 "try: python -m venv /tmp/litellm-venv && /tmp/litellm-venv/bin/pip install " \
                 "'litellm[proxy]', then --litellm-cmd /tmp/litellm-venv/bin/litellm"


def litellm_config(upstream_port: int) -> str:
    """LiteLLM proxy config (YAML is a superset of JSON): the bench models, no DB."""
    base = f"http://127.0.0.1:{upstream_port}"
    models = [
        {"model_name": name, "litellm_params": {"model": f"openai/{name}", "api_base": base + prefix, "api_key": "upstream-key"}}
        for name, prefix in ((PLAIN_MODEL, PLAIN_PREFIX), (SSE_MODEL, SSE_PREFIX))
    ]
    return json.dumps({
        "model_list": models,
        "litellm_settings": {"drop_params": True, "telemetry": False, "set_verbose": False},
        "general_settings": {"master_key": LITELLM_KEY},
    }, indent=2)


def start_litellm(argv_prefix: list[str], upstream_port: int, workdir: Path) -> Target:
    """LiteLLM's proxy with one worker on a free port, ready (``/health/liveliness``)."""
    port = free_port()
    workdir.mkdir(parents=True, exist_ok=True)
    conf = workdir / "litellm.yaml"
    conf.write_text(litellm_config(upstream_port))
    argv = [*argv_prefix, "--config", str(conf), "--host", "127.0.0.1", "--port", str(port), "--num_workers", "1"]
    env = {"LITELLM_LOCAL_MODEL_COST_MAP": "True", "LITELLM_LOG": "ERROR", "LITELLM_TELEMETRY": "False"}
    child = Child("litellm", argv, workdir / "litellm.out", env=env, cwd=workdir)
    target = Target("litellm", port, "/v1" + CHAT_PATH, "/v1" + CHAT_PATH,
                    {"authorization": f"Bearer {LITELLM_KEY}"}, child)
    try:
        child.wait_ready(f"http://127.0.0.1:{port}/health/liveliness", timeout=180)
    except BaseException:
        child.stop()
        raise
    target.notes.append(f"litellm {_litellm_version(argv_prefix[0])} via {argv_prefix[0]}, 1 worker, no DB")
    return target


def _litellm_version(command: str) -> str:
    """The installed LiteLLM version, read from package metadata by the Python that runs
    ``command`` (its shebang, else this interpreter); "?" when unknown."""
    python = sys.executable
    try:
        with open(command, "rb") as f:
            first = f.readline().decode(errors="replace").strip()
        if first.startswith("#!") and "python" in first:
            python = first[2:].split()[0]
    except OSError:
        pass
    try:
        done = subprocess.run(
            [python, "-c", "import importlib.metadata as m; print(m.version('litellm'))"],
            capture_output=True, text=True, timeout=30, check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return "?"
    return done.stdout.strip() or "?"
