"""nginx as the bench's fixed-body upstream (preferred: a C server with one worker).

The replies are compiled into the config: ``return 200 "..."`` answers from memory,
reads and discards the request body, and sets ``content-length``. nginx caps one config
token at 4 KB, so each body is split into ``set`` variables of under 3,000 bytes and the
``return`` concatenates them. ``$`` cannot be escaped in an nginx string; a body that
holds one is refused (:class:`ValueError`) and the bench falls back to
:mod:`bench.proxy.upstream`.

Layout: ``POST {PLAIN_PREFIX}/chat/completions`` -> the completion JSON,
``POST {SSE_PREFIX}/chat/completions`` -> the recorded SSE body
(``text/event-stream``), ``GET /healthz`` -> 200.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from bench.proxy.bodies import CHAT_PATH, PLAIN_PREFIX, SSE_PREFIX, Bodies
from bench.proxy.process import Child

_PIECE = 2500


def nginx_binary() -> str | None:
    """Path of ``nginx`` (PATH, then /usr/sbin), or None."""
    return shutil.which("nginx") or next(
        (p for p in ("/usr/sbin/nginx", "/usr/local/sbin/nginx") if os.access(p, os.X_OK)), None
    )


def _quote(text: str) -> str:
    if "$" in text:
        raise ValueError("nginx cannot return a body containing '$'")
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\r", "\\r").replace("\n", "\\n") + '"'


def _return_block(name: str, body: bytes, content_type: str) -> str:
    text = body.decode("utf-8")
    pieces = [text[i : i + _PIECE] for i in range(0, len(text), _PIECE)] or [""]
    lines = [f"            default_type {content_type};"]
    for i, piece in enumerate(pieces):
        lines.append(f"            set ${name}_{i} {_quote(piece)};")
    joined = "".join(f"${name}_{i}" for i in range(len(pieces)))
    lines.append(f'            return 200 "{joined}";')
    return "\n".join(lines)


def render_config(prefix: Path, port: int, bodies: Bodies) -> str:
    """The nginx.conf text: one worker, no access log, keep-alive without a request cap."""
    user = "user root;\n" if os.geteuid() == 0 else ""
    temp = "\n".join(
        f"    {kind}_temp_path {prefix / (kind + '_temp')};"
        for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
    )
    return f"""{user}worker_processes 1;
pid {prefix / 'nginx.pid'};
error_log {prefix / 'error.log'} warn;
events {{ worker_connections 4096; }}
http {{
    access_log off;
{temp}
    keepalive_requests 1000000;
    keepalive_timeout 300s;
    client_body_buffer_size 64k;
    server {{
        listen 127.0.0.1:{port} backlog=4096;
        location = {PLAIN_PREFIX}{CHAT_PATH} {{
{_return_block('plain', bodies.plain_reply, 'application/json')}
        }}
        location = {SSE_PREFIX}{CHAT_PATH} {{
{_return_block('sse', bodies.sse_reply, 'text/event-stream')}
        }}
        location = /healthz {{ return 200 "ok"; }}
        location / {{ return 404; }}
    }}
}}
"""


def start_nginx(binary: str, prefix: Path, port: int, bodies: Bodies) -> Child:
    """nginx in the foreground as a child (``daemon off``), serving :func:`render_config`."""
    prefix.mkdir(parents=True, exist_ok=True)
    conf = prefix / "nginx.conf"
    conf.write_text(render_config(prefix, port, bodies))
    argv = [binary, "-p", str(prefix), "-e", str(prefix / "error.log"), "-c", str(conf), "-g", "daemon off;"]
    child = Child("nginx", argv, prefix / "nginx.out")
    child.wait_ready(f"http://127.0.0.1:{port}/healthz", timeout=10)
    return child
