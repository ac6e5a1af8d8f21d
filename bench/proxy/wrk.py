"""``wrk`` for throughput at high concurrency (a C load generator, one thread here).

wrk runs for a duration, not a request count (wrk 4 has no count option), so throughput
cells are bounded by ``duration`` seconds after a ``warmup`` run whose figures are
dropped. A Lua script sets the POST body and headers and prints one JSON line in
``done()``: requests, duration (us), errors by kind, and latency percentiles (us) from
wrk's own histogram, which include the time a request waits behind others on its
connection (wrk sends the next request as soon as the previous answer is complete).
"""

from __future__ import annotations

import json
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

_MARK = "BENCHJSON "

_LUA = """
wrk.method = "POST"
local f = assert(io.open(%(body)s, "rb"))
wrk.body = f:read("*a")
f:close()
wrk.headers["Content-Type"] = "application/json"
%(headers)s
function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    '%(mark)s{"requests":%%d,"duration_us":%%d,"connect":%%d,"read":%%d,"write":%%d,' ..
    '"status":%%d,"timeout":%%d,"p50_us":%%d,"p90_us":%%d,"p99_us":%%d,"mean_us":%%f,"max_us":%%d}\\n',
    summary.requests, summary.duration, e.connect, e.read, e.write, e.status, e.timeout,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.mean, latency.max))
end
"""


@dataclass(frozen=True)
class WrkResult:
    """One wrk run: ``rps`` in requests/s, latencies in seconds, ``errors`` all kinds."""

    requests: int
    seconds: float
    rps: float
    p50: float
    p90: float
    p99: float
    mean: float
    errors: int


def wrk_binary() -> str | None:
    return shutil.which("wrk")


def _lua_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def write_script(path: Path, body_file: Path, headers: dict[str, str]) -> Path:
    header_lines = "\n".join(
        f"wrk.headers[{_lua_string(k)}] = {_lua_string(v)}" for k, v in headers.items()
    )
    path.write_text(_LUA % {"body": _lua_string(str(body_file)), "headers": header_lines, "mark": _MARK})
    return path


def parse_output(text: str) -> WrkResult:
    """The result from wrk's stdout (the script's JSON line); ``ValueError`` if absent."""
    for line in text.splitlines():
        if line.startswith(_MARK):
            d = json.loads(line[len(_MARK) :])
            seconds = d["duration_us"] / 1e6
            errors = d["connect"] + d["read"] + d["write"] + d["status"] + d["timeout"]
            ok = d["requests"] - d["status"]
            return WrkResult(
                requests=d["requests"], seconds=seconds, rps=ok / seconds if seconds else 0.0,
                p50=d["p50_us"] / 1e6, p90=d["p90_us"] / 1e6, p99=d["p99_us"] / 1e6,
                mean=d["mean_us"] / 1e6, errors=errors,
            )
    raise ValueError(f"no result line in wrk output:\n{text[-2000:]}")


def run_wrk(
    binary: str,
    url: str,
    script: Path,
    *,
    connections: int,
    duration: float,
    threads: int = 1,
    timeout_s: int = 10,
) -> WrkResult:
    """One wrk run of ``duration`` seconds (rounded up to whole seconds, wrk's unit).

    Raises:
        RuntimeError: wrk failed or printed no result.
    """
    argv = [binary, "-t", str(threads), "-c", str(connections), "-d", f"{max(1, round(duration))}s",
            "--timeout", f"{timeout_s}s", "-s", str(script), url]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=duration + timeout_s + 30, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"wrk failed ({done.returncode}): {done.stderr[-2000:]}")
    try:
        return parse_output(done.stdout)
    except ValueError as exc:
        raise RuntimeError(str(exc)) from None
