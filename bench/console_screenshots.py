"""``python -m bench console-screenshots OUT_DIR``: screenshots of the web console's main
pages (docs/console/*.png in the README), taken in headless Chromium against a real
gateway on loopback with a small seeded data set: the embedded Redis in a temporary
directory, the upstream model double (tests/support), a few users, friends, memories
(one superseded), a minted key, a dead letter and one chat call (for the latency figures).

Needs chromium + chromium-driver (``make console-screenshots`` installs them as root) and
selenium (the test extra). Not part of the product: the product never takes screenshots.
"""

from __future__ import annotations

import json
import tempfile
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

import click
import httpx
import redis

from gateway.memorization.keys import QueueKeys
from gateway.runtime.redis_server import EmbeddedRedis
from tests.support.browser import missing_browser, open_chromium, waiter
from tests.support.embedding import SharedLocalModel
from tests.support.gateway import ADMIN_KEY, ALICE_KEY, BOB_KEY, GatewayServer, make_config
from tests.support.loopback import LoopbackServer
from tests.support.upstream_double import UpstreamDouble

QUEUE = "mgq-shots"


def seed(url: str, redis_url: str) -> None:
    """Users, memories, a supersede chain, a key, a dead letter and one chat call."""
    ago = lambda days: (datetime.now(UTC) - timedelta(days=days)).isoformat()  # noqa: E731
    with httpx.Client(base_url=url, timeout=60) as http:
        alice = {"authorization": f"Bearer {ALICE_KEY}"}
        admin = {"authorization": f"Bearer {ADMIN_KEY}"}
        for memory in (
            {"scope": "event", "type": "episodic", "text": "Alice moved to Lisbon in March", "occurred_at": ago(40)},
            {"scope": "event", "type": "episodic", "text": "Alice passed her Portuguese B1 exam", "occurred_at": ago(12)},
            {"scope": "profile", "type": "preference", "text": "Alice prefers short answers with examples"},
            {"scope": "profile", "type": "goal", "text": "Alice wants to run a half marathon this year"},
            {"scope": "profile", "type": "trait", "text": "Alice is allergic to peanuts"},
            {"scope": "profile", "type": "semantic", "text": '<img src=x onerror="alert(1)"> stays text'},
        ):
            http.post("/v1/memories", json=memory, headers=alice).raise_for_status()
        http.post("/v1/memories", json={"scope": "profile", "type": "trait", "text": "Bob plays the cello"},
                  headers={"authorization": f"Bearer {BOB_KEY}"}).raise_for_status()
        first, second = uuid.uuid4().hex, uuid.uuid4().hex
        base = {"user_id": "alice", "friend_id": None, "scope": "profile", "type": "semantic", "importance": 0.5,
                "occurred_at": ago(90), "created_at": ago(90), "updated_at": ago(30), "source": "conversation",
                "confidence": 1.0}
        lines = [{**base, "id": first, "text": "Alice lives in Berlin", "superseded_by": second, "retired": True,
                  "retired_at": ago(30), "retired_reason": f"superseded by {second}"},
                 {**base, "id": second, "text": "Alice lives in Lisbon", "supersedes": first}]
        http.post("/v1/admin/users/alice/import", content="\n".join(map(json.dumps, lines)), headers=admin).raise_for_status()
        http.post("/v1/admin/keys", json={"user_id": "carol", "friend_id": "coach"}, headers=admin).raise_for_status()
        http.post("/v1/chat/completions", headers=alice, json={
            "model": "gpt-4o-mini", "messages": [{"role": "user", "content": "Where do I live now?"}]}).raise_for_status()
    now = datetime.now(UTC).isoformat()
    job = {"job_id": uuid.uuid4().hex, "user_id": "alice", "friend_id": "tutor", "enqueued_at": now, "attempt": 4,
           "turns": [{"role": "user", "text": "I started learning the piano", "hash": uuid.uuid4().hex, "at": now, "index": 0}]}
    with redis.Redis.from_url(redis_url) as r:
        r.xadd(QueueKeys(QUEUE).dead(0), {"job": json.dumps(job), "error": "memory model answered 500 four times", "entry": "1-0"})


def shoot(url: str, out: Path) -> list[Path]:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec

    taken = []
    driver_gen = open_chromium()
    driver = next(driver_gen)
    try:
        driver.set_window_size(1400, 1000)
        wait = waiter(driver)
        css = lambda selector: (By.CSS_SELECTOR, selector)  # noqa: E731
        driver.get(url + "/console/")
        wait(ec.visibility_of_element_located(css("#admin-key")), "login").send_keys(ADMIN_KEY)
        driver.find_element(*css("#login-button")).click()
        wait(ec.visibility_of_element_located(css('#users-table tr[data-user="alice"]')), "users")

        def save(name: str) -> None:
            path = out / f"{name}.png"
            driver.save_screenshot(str(path))
            taken.append(path)

        save("users")
        driver.find_element(*css('tr[data-user="alice"] button[data-action="memories"]')).click()
        wait(ec.visibility_of_element_located(css("#mem-table")), "memories")
        driver.find_element(*css("#mem-query")).send_keys("where does Alice live?")
        driver.find_element(*css("#mem-go")).click()
        wait(ec.visibility_of_element_located(css(".mem-why")), "search")
        driver.find_element(*css("#mem-retired")).click()
        driver.find_element(*css("#mem-go")).click()
        wait(ec.visibility_of_element_located(css(".chip.retired")), "retired hits")
        driver.find_elements(*css("tr.memory .mem-history"))[0].click()
        wait(ec.visibility_of_element_located(css("#mem-history-panel")), "history")
        save("memories")
        driver.find_element(*css('#nav a[data-page="inspector"]')).click()
        wait(ec.visibility_of_element_located(css("#insp-message")), "inspector").send_keys("Where did I move in March?")
        driver.find_element(*css("#insp-run")).click()
        wait(ec.visibility_of_element_located(css("#insp-messages")), "inspection")
        save("inspector")
        for page, ready in (("keys", "#keys-table"), ("queue", "#dead-table"), ("stats", "#stats-types")):
            driver.find_element(*css(f'#nav a[data-page="{page}"]')).click()
            wait(ec.visibility_of_element_located(css(ready)), page)
            save(page)
        driver.find_element(*css('#nav a[data-page="settings"]')).click()
        driver.find_element(*css("#set-load")).click()
        found = wait(lambda d: d.find_elements(*css("#set-table, #set-unavailable")) or False, "settings")
        if found[0].get_attribute("id") == "set-table":
            save("settings")
    finally:
        driver_gen.close()
    return taken


@click.command("console-screenshots")
@click.argument("out_dir", default="docs/console", type=click.Path(file_okay=False))
def command(out_dir: str) -> None:
    """Screenshots of the web console's main pages into OUT_DIR (module docstring)."""
    reason = missing_browser()
    if reason:
        raise click.ClickException(reason)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        server = EmbeddedRedis(Path(tmp))
        server.start()
        upstream = LoopbackServer(UpstreamDouble(), lifespan="off").start()
        try:
            config = make_config(upstream.url, server.url, plugins=[
                {"name": "recall_report"}, {"name": "auto_recall", "config": {"threshold": 0.2, "high_relevance_threshold": 0.3}},
                {"name": "hybrid_injection"}, {"name": "token_budget", "config": {"memory_tokens": 800}},
                {"name": "memorize", "config": {"queue": {"key_prefix": QUEUE}, "worker": {"in_serve": 0}}},
            ])
            gateway = GatewayServer(config, embedder=SharedLocalModel().for_gateway())
            gateway.start()
            try:
                seed(gateway.url, server.url)
                for path in shoot(gateway.url, out):
                    click.echo(path)
            finally:
                gateway.stop()
        finally:
            upstream.stop()
            server.stop()


if __name__ == "__main__":
    import sys

    sys.argv[0] = "python -m bench.console_screenshots"
    command()
