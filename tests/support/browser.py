"""A headless Chromium driven by Selenium for the console's browser tests.

Needs Debian's ``chromium`` and ``chromium-driver`` (``make test`` installs them when it
runs as root with apt-get) and the ``selenium`` package (the ``test`` extra). When any is
missing the tests skip with the reason (pytest prints it: ``-ra``). Chromium runs niced
(the machine is shared) and with ``--no-sandbox`` only when the tests run as root (the
sandbox cannot start as root).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Generator
from typing import Any

import pytest

#: s: the longest an explicit wait waits (a page load on 2 busy cores).
WAIT_S = 30.0


def missing_browser() -> str | None:
    """Why a browser test cannot run here, or None."""
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed (pip install -e '.[test]')"
    for program, package in (("chromium", "chromium"), ("chromedriver", "chromium-driver")):
        if shutil.which(program) is None:
            return (f"{program} is not installed (Debian package {package}): apt-get install chromium "
                    "chromium-driver (make test does it when run as root)")
    return None


def _nice() -> None:
    os.nice(10)


def open_chromium() -> Generator[Any, None, None]:
    """A headless Chromium WebDriver (skips the test with the reason when there is none)."""
    reason = missing_browser()
    if reason:
        pytest.skip(f"browser tests skipped: {reason}")
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    options = Options()
    options.binary_location = shutil.which("chromium") or "chromium"
    for arg in ("--headless=new", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1400,1000",
                "--no-first-run", "--disable-extensions", "--disable-background-networking"):
        options.add_argument(arg)
    if os.geteuid() == 0:
        options.add_argument("--no-sandbox")
    service = Service(shutil.which("chromedriver"), popen_kw={"preexec_fn": _nice})
    driver = webdriver.Chrome(service=service, options=options)
    try:
        yield driver
    finally:
        driver.quit()


def waiter(driver: Any) -> Callable[[Callable[[Any], Any], str], Any]:
    """``wait(condition, what)``: WebDriverWait up to :data:`WAIT_S`, the message naming
    what did not happen."""
    from selenium.webdriver.support.ui import WebDriverWait

    def wait(condition: Callable[[Any], Any], what: str) -> Any:
        return WebDriverWait(driver, WAIT_S).until(condition, message=f"timed out waiting for {what}")

    return wait
