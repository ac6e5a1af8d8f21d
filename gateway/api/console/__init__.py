"""The web console: static HTML, CSS and vanilla JavaScript modules in
``static/`` (no framework, no build step, no CDN: it works offline), served at
``/console/`` by litestar's static files router.

The page asks for an admin key, keeps it in ``sessionStorage`` (gone when the tab closes)
and calls the admin JSON API (:mod:`gateway.api.admin`) with
``Authorization: Bearer``. The files carry no key and are served with
``Cache-Control: no-store`` and a Content-Security-Policy that allows only the gateway's
own scripts and styles (no inline script, so markup smuggled into a memory could not run
even if it reached the DOM; the scripts render data with ``textContent`` only).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from litestar import Response, Router
from litestar.datastructures import CacheControlHeader
from litestar.static_files import create_static_files_router

__all__ = ["CONSOLE_PATH", "SECURITY_HEADERS", "STATIC_DIR", "console_router"]

CONSOLE_PATH = "/console"
STATIC_DIR = Path(__file__).parent / "static"

#: Headers on every console file: only same-origin scripts, styles and API calls; no
#: framing (clickjacking), no referrer, no MIME sniffing.
SECURITY_HEADERS = {
    "content-security-policy": "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; form-action 'none'; frame-ancestors 'none'; base-uri 'none'",
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "x-frame-options": "DENY",
}


async def _secure(response: Response[Any]) -> Response[Any]:
    for name, value in SECURITY_HEADERS.items():
        response.headers[name] = value
    return response


def console_router() -> Router:
    """``GET /console/`` (index.html) and its assets, never cached (module docstring)."""
    return create_static_files_router(
        path=CONSOLE_PATH, directories=[STATIC_DIR], html_mode=True, name="console",
        cache_control=CacheControlHeader(no_store=True), after_request=_secure,
    )
