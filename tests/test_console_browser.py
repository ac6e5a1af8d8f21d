"""The web console in a real browser (headless Chromium + Selenium, issue 14 item 2):
login, users, memory search with score and why, edit, delete, the recall inspector,
keys, dead letters, statistics, settings. Few, coarse tests: every page load is slow.
Skipped with the reason when Chromium, chromedriver or selenium is missing
(tests/support/browser.py)."""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime

import httpx
import pytest
import redis
from litestar import Litestar, Request, get, put
from litestar.params import FromPath, FromQuery, JSONBody
from litestar.response import Response

from gateway.api.console import console_router
from gateway.memorization.keys import QueueKeys
from tests.support.browser import open_chromium, waiter
from tests.support.gateway import ADMIN_KEY, ALICE_KEY

XSS = '<img src=x onerror="window.__pwned=1">'


@pytest.fixture(scope="module")
def driver():
    yield from open_chromium()


def api(gw, key=ADMIN_KEY):
    return httpx.Client(base_url=gw.url, headers={"authorization": f"Bearer {key}"}, timeout=30)


def by_css(css):
    from selenium.webdriver.common.by import By

    return (By.CSS_SELECTOR, css)


def dead_job(user, text):
    return json.dumps({
        "job_id": uuid.uuid4().hex, "user_id": user, "friend_id": "tutor",
        "enqueued_at": datetime.now(UTC).isoformat(), "epoch": 0, "attempt": 3, "last_error": "boom",
        "turns": [{"role": "user", "text": text, "hash": uuid.uuid4().hex, "at": datetime.now(UTC).isoformat(), "index": 0}],
    })


def login(driver, gw, wait, key=ADMIN_KEY, path="/console/"):
    from selenium.webdriver.support import expected_conditions as ec

    driver.get(gw.url + path)
    field = wait(ec.visibility_of_element_located(by_css("#admin-key")), "the login form")
    field.clear()
    field.send_keys(key)
    driver.find_element(*by_css("#login-button")).click()


def nav(driver, wait, page):
    from selenium.webdriver.support import expected_conditions as ec

    driver.find_element(*by_css(f'#nav a[data-page="{page}"]')).click()
    wait(ec.visibility_of_element_located(by_css(f"#page-{page}")), f"the {page} page")


def test_the_console_drives_the_admin_api_in_a_real_browser(driver, start_gateway, redis_url):
    from selenium.webdriver.support import expected_conditions as ec

    queue_prefix = "q" + uuid.uuid4().hex[:10]
    gw = start_gateway(plugins=[
        {"name": "recall_report"}, {"name": "auto_recall", "config": {"threshold": 0.1}}, {"name": "hybrid_injection"},
        {"name": "memorize", "config": {"queue": {"key_prefix": queue_prefix}, "worker": {"in_serve": 0}}},
    ])
    with api(gw, ALICE_KEY) as alice:
        lisbon = alice.post("/v1/memories", json={"scope": "event", "type": "episodic",
                                                 "text": "Alice moved to Lisbon in March"}).json()
        hostile = alice.post("/v1/memories", json={"scope": "profile", "type": "semantic", "text": XSS}).json()
        trams = alice.post("/v1/memories", json={"scope": "event", "type": "episodic",
                                                "text": "Alice rides the old trams of Lisbon"}).json()
    with redis.Redis.from_url(redis_url) as r:
        for text in ("retry me", "drop me"):
            r.xadd(QueueKeys(queue_prefix).dead(0), {"job": dead_job("alice", text), "error": f"boom: {text}", "entry": "1-0"})
    wait = waiter(driver)

    # a non-admin key is refused, an admin key lists users with their friends
    login(driver, gw, wait, ALICE_KEY)
    wait(ec.text_to_be_present_in_element(by_css("#status"), "not an admin key"), "the refusal")
    login(driver, gw, wait, path="/console")  # no trailing slash: assets are absolute
    alice_row = wait(ec.visibility_of_element_located(by_css('#users-table tr[data-user="alice"]')), "alice's row")
    assert "tutor" in alice_row.text
    assert driver.execute_script("return sessionStorage.getItem('memgate.adminKey')") == ADMIN_KEY
    # the page names its (empty) icon: no request for /favicon.ico, so no 404 in the browser's log
    assert [e for e in driver.get_log("browser") if "favicon" in e["message"]] == []

    # her memories: the hostile one shows as text and never runs
    alice_row.find_element(*by_css('button[data-action="memories"]')).click()
    wait(ec.visibility_of_element_located(by_css(f'tr.memory[data-id="{hostile["id"]}"]')), "the memory list")
    cell = driver.find_element(*by_css(f'tr.memory[data-id="{hostile["id"]}"] .mem-text'))
    assert cell.text == XSS
    assert driver.find_elements(*by_css("#mem-table img")) == []
    assert driver.execute_script("return window.__pwned") is None

    # search: score and why (semantic, keyword terms, recency)
    query = driver.find_element(*by_css("#mem-query"))
    query.send_keys("where does Alice live now, Lisbon?")
    driver.find_element(*by_css("#mem-go")).click()
    why = wait(ec.visibility_of_element_located(by_css(f'tr.memory[data-id="{lisbon["id"]}"] .mem-why')), "the why column")
    assert "score" in why.text and "semantic" in why.text and "lisbon" in why.text and "d old" in why.text

    # edit: the new text is stored (and re-embedded by the store)
    row = driver.find_element(*by_css(f'tr.memory[data-id="{lisbon["id"]}"]'))
    row.find_element(*by_css(".mem-edit")).click()
    area = wait(ec.visibility_of_element_located(by_css(".mem-edit-text")), "the editor")
    area.clear()
    area.send_keys("Alice moved to Porto in March")
    driver.find_element(*by_css(".mem-save")).click()
    wait(ec.text_to_be_present_in_element(by_css(f'tr.memory[data-id="{lisbon["id"]}"] .mem-text'), "Porto"), "the edit")
    with api(gw, ALICE_KEY) as alice:
        assert alice.get(f"/v1/memories/{lisbon['id']}").json()["text"] == "Alice moved to Porto in March"

    # the hostile memory shares nothing with the query (cosine 0): not listed
    assert driver.find_elements(*by_css(f'tr.memory[data-id="{hostile["id"]}"]')) == []

    # delete (a second click confirms)
    delete = driver.find_element(*by_css(f'tr.memory[data-id="{trams["id"]}"] .mem-delete'))
    delete.click()
    delete.click()
    wait(ec.invisibility_of_element_located(by_css(f'tr.memory[data-id="{trams["id"]}"]')), "the row to go")
    with api(gw, ALICE_KEY) as alice:
        assert alice.get(f"/v1/memories/{trams['id']}").status_code == 404

    # recall inspector: what alice's message would recall, where it goes, what it costs
    nav(driver, wait, "inspector")
    message = driver.find_element(*by_css("#insp-message"))
    message.send_keys("Where did I move in March?")
    driver.find_element(*by_css("#insp-run")).click()
    recalled = wait(ec.visibility_of_element_located(by_css(f'#insp-recalled tr.recalled[data-id="{lisbon["id"]}"]')),
                    "the recalled memory")
    assert "Porto" in recalled.text
    # the figure that decided high / low is the calibrated relevance, shown first with the rule
    with api(gw) as admin:
        inspected = admin.post("/v1/admin/recall/inspect", json={
            "user_id": "alice", "friend_id": "tutor", "messages": [{"role": "user", "content": "Where did I move in March?"}]}).json()
    row = next(m for m in inspected["recalled"] if m["id"] == lisbon["id"])
    relevance = recalled.find_element(*by_css(".insp-relevance")).text
    assert float(relevance) == pytest.approx(row["calibrated"], abs=0.001) and row["calibrated"] != row["score"]
    assert recalled.find_element(*by_css(".insp-set")).text.startswith("high" if row["calibrated"] >= 0.8 else "low")
    assert "at least 0.8" in driver.find_element(*by_css("#insp-rule")).text
    cost = int(driver.find_element(*by_css("#insp-cost .value")).text)
    assert cost > 0
    origins = [e.get_attribute("data-origin") for e in driver.find_elements(*by_css("#insp-messages .msg"))]
    assert "client" in origins
    # what memorization would form from the message: a question forms nothing, and says why
    assert driver.find_element(*by_css("#insp-formed-none")).text == "Formed nothing: a question."
    # a message that tells two things: one memory, its two statements listed under it
    message.clear()
    message.send_keys("I moved to Lisbon in March. My daughter is allergic to peanuts.")
    driver.find_element(*by_css("#insp-run")).click()
    items = wait(ec.visibility_of_all_elements_located(by_css("#insp-formed .insp-statements li")), "the statements")
    assert [i.text for i in items] == ["I moved to Lisbon in March.", "My daughter is allergic to peanuts."]
    assert len(driver.find_elements(*by_css("#insp-formed tr"))) == 2  # the header and one memory

    # keys: mint one (shown once, works), then revoke it
    nav(driver, wait, "keys")
    driver.find_element(*by_css("#key-user")).send_keys("dave")
    driver.find_element(*by_css("#key-create")).click()
    secret = wait(ec.visibility_of_element_located(by_css("#key-secret")), "the new key").text
    assert secret.startswith("mgk-")
    with api(gw, secret) as dave:
        assert dave.get("/v1/memories").status_code == 200
    with api(gw) as admin:
        key_id = next(k["key_id"] for k in admin.get("/v1/admin/keys").json()["data"] if k["user_id"] == "dave")
    revoke = wait(ec.element_to_be_clickable(by_css(f'tr.key-row[data-key-id="{key_id}"] .key-revoke')), "the revoke button")
    revoke.click()
    revoke.click()
    wait(ec.text_to_be_present_in_element(by_css(f'tr.key-row[data-key-id="{key_id}"] .key-state'), "revoked"), "the revocation")
    with api(gw) as admin:
        assert next(k for k in admin.get("/v1/admin/keys").json()["data"] if k["key_id"] == key_id)["revoked_at"]

    # dead letters: inspect, retry one, drop the other
    nav(driver, wait, "queue")
    rows = wait(lambda d: d.find_elements(*by_css("#dead-table tr.dead-row")) or False, "the dead letters")
    stream = QueueKeys(queue_prefix).stream(0)  # as named in Redis, hash tag included
    assert stream in driver.find_element(*by_css(".queue-streams")).text and "{" in stream
    assert len(rows) == 2
    retry_id, drop_id = (r.get_attribute("data-dead-id") for r in rows)
    rows[0].find_element(*by_css(".dead-inspect")).click()
    wait(ec.visibility_of_element_located(by_css("#dead-table tr.dead-detail pre")), "the job")
    assert "retry me" in driver.find_element(*by_css("#dead-table tr.dead-detail pre")).text
    rows[0].find_element(*by_css(".dead-retry")).click()
    wait(ec.invisibility_of_element_located(by_css(f'tr.dead-row[data-dead-id="{retry_id}"]')), "the retried letter to go")
    drop = driver.find_element(*by_css(f'tr.dead-row[data-dead-id="{drop_id}"] .dead-drop'))
    drop.click()
    drop.click()
    wait(ec.visibility_of_element_located(by_css("#dead-none")), "no dead letters")
    with redis.Redis.from_url(redis_url) as r:
        assert r.xlen(QueueKeys(queue_prefix).dead(0)) == 0
        jobs = r.xrange(QueueKeys(queue_prefix).stream(0))
        assert len(jobs) == 1 and b"retry me" in jobs[0][1][b"j"]

    # statistics: memories per type
    nav(driver, wait, "stats")
    wait(ec.visibility_of_element_located(by_css('#stats-types tr[data-type="episodic"]')), "the type table")
    assert driver.find_element(*by_css('#stats-types tr[data-type="episodic"] td.num')).text == "1"
    assert driver.execute_script("return window.__pwned") is None


def test_the_settings_page_reads_and_writes_a_users_overrides(driver, start_gateway):
    from selenium.webdriver.support import expected_conditions as ec

    gw = start_gateway(plugins=[{"name": "auto_recall", "config": {"threshold": 0.3}}, {"name": "hybrid_injection"}])
    with api(gw) as admin:
        probe = admin.get("/v1/admin/users/alice/settings", params={"friend_id": "tutor"})
    if probe.status_code == 404:
        pytest.skip("settings page not tested: this branch has no GET /v1/admin/users/{user}/settings yet "
                    "(per-user settings come from another branch)")
    wait = waiter(driver)
    login(driver, gw, wait)
    wait(ec.visibility_of_element_located(by_css("#users-table")), "the users page")
    nav(driver, wait, "settings")
    user = driver.find_element(*by_css("#set-user"))
    user.clear()
    user.send_keys("alice")
    friend = driver.find_element(*by_css("#set-friend"))
    friend.clear()
    friend.send_keys("tutor")
    driver.find_element(*by_css("#set-load")).click()
    field = wait(ec.visibility_of_element_located(by_css('#set-table .set-input[data-field="recall_rounds"]')), "the form")
    # nobody set similarity_threshold: the page says what recall applies (auto_recall's own 0.3)
    in_use = driver.find_element(*by_css('tr.setting[data-field="similarity_threshold"] .set-in-use')).text
    assert "auto_recall 0.3" in in_use
    field.clear()
    field.send_keys("2")
    driver.find_element(*by_css("#set-save")).click()
    wait(ec.text_to_be_present_in_element(by_css("#status"), "Saved"), "the save")
    with api(gw) as admin:
        saved = admin.get("/v1/admin/users/alice/settings", params={"friend_id": "tutor"}).json()
    assert saved["overrides"]["recall_rounds"] == 2


def settings_double(store: dict):
    """The per-user settings API as its contract says (issue 14: another branch builds
    it), with the console's own files: GET/PUT /v1/admin/users/{user}/settings, 400 naming
    the field out of bounds, 403 on a locked one, null removes an override."""
    defaults = {"recall_enabled": True, "recall_rounds": 3, "profile_topk": 5, "event_topk": 5, "similarity_threshold": 0.5,
                "show_tool_calls": False, "show_thinking": False, "auto_recall": True, "personalization": True,
                "inference": False}
    bounds = {"recall_rounds": {"minimum": 1, "maximum": 5}, "profile_topk": {"minimum": 1, "maximum": 20},
              "event_topk": {"minimum": 1, "maximum": 20}, "similarity_threshold": {"minimum": 0.0, "maximum": 1.0}}
    locked = ["inference"]

    def error(status, message, param):
        return Response({"error": {"message": message, "type": "invalid_request_error", "param": param, "code": None}},
                        status_code=status)

    def reply(user_id, friend_id):
        overrides = store.setdefault((user_id, friend_id), {})
        return {"object": "memory.settings", "user_id": user_id, "friend_id": friend_id,
                "settings": {**defaults, **overrides}, "overrides": dict(overrides), "locked": locked, "bounds": bounds}

    def admin(request: Request) -> bool:
        return request.headers.get("authorization") == f"Bearer {ADMIN_KEY}"

    @get("/v1/admin/users", sync_to_thread=False)
    def users(request: Request) -> Response:
        if not admin(request):
            return error(401, "Incorrect API key provided.", None)
        return Response({"object": "list", "next_cursor": None,
                         "data": [{"user_id": "alice", "friends": ["tutor"], "memories": 0, "keys": 1}]})

    @get("/v1/admin/users/{user_id:str}/settings", sync_to_thread=False)
    def read(request: Request, user_id: FromPath[str], friend_id: FromQuery[str | None] = None) -> Response:
        return Response(reply(user_id, friend_id)) if admin(request) else error(401, "no", None)

    @put("/v1/admin/users/{user_id:str}/settings", sync_to_thread=False)
    def write(request: Request, user_id: FromPath[str], data: JSONBody[dict], friend_id: FromQuery[str | None] = None) -> Response:
        if not admin(request):
            return error(401, "no", None)
        overrides = store.setdefault((user_id, friend_id), {})
        for name, value in data.items():
            if name in locked:
                return error(403, f"{name} is locked by the operator", name)
            limits = bounds.get(name)
            if value is not None and limits and not limits["minimum"] <= value <= limits["maximum"]:
                return error(400, f"{name}: must be between {limits['minimum']} and {limits['maximum']}", name)
        for name, value in data.items():
            if value is None:
                overrides.pop(name, None)
            else:
                overrides[name] = value
        return Response(reply(user_id, friend_id))

    return Litestar([users, read, write, console_router()], logging_config=None)


def test_the_settings_page_follows_the_settings_contract(driver):
    """The settings page against a double of the settings API's contract (the real API
    comes from another branch; the test above runs against it once merged)."""
    from selenium.webdriver.support import expected_conditions as ec

    from tests.support.loopback import LoopbackServer

    store: dict = {}
    server = LoopbackServer(settings_double(store), lifespan="off").start()
    try:
        wait = waiter(driver)
        driver.get(server.url + "/console/")
        driver.execute_script("sessionStorage.clear()")
        login(driver, server, wait)
        wait(ec.visibility_of_element_located(by_css("#users-table")), "the users page")
        nav(driver, wait, "settings")
        for field, value in (("#set-user", "alice"), ("#set-friend", "tutor")):
            element = driver.find_element(*by_css(field))
            element.clear()
            element.send_keys(value)
        driver.find_element(*by_css("#set-load")).click()
        rounds = wait(ec.visibility_of_element_located(by_css('.set-input[data-field="recall_rounds"]')), "the form")
        assert not driver.find_element(*by_css('.set-input[data-field="inference"]')).is_enabled()  # locked
        rounds.clear()
        rounds.send_keys("9")
        driver.find_element(*by_css("#set-save")).click()
        wait(ec.text_to_be_present_in_element(by_css("#status"), "400: recall_rounds"), "the refusal")
        assert store[("alice", "tutor")] == {}
        rounds = driver.find_element(*by_css('.set-input[data-field="recall_rounds"]'))
        rounds.clear()
        rounds.send_keys("2")
        driver.find_element(*by_css('.set-input[data-field="show_thinking"]')).click()
        driver.find_element(*by_css("#set-save")).click()
        wait(ec.text_to_be_present_in_element(by_css("#status"), "Saved"), "the save")
        assert store[("alice", "tutor")] == {"recall_rounds": 2, "show_thinking": True}
        reset = wait(ec.element_to_be_clickable(by_css('tr.setting[data-field="recall_rounds"] .set-reset')), "the reset")
        reset.click()
        wait(lambda d: store[("alice", "tutor")] == {"show_thinking": True}, "the override to go")
    finally:
        server.stop()


def test_the_openapi_ui_renders_offline(driver, start_gateway):
    """/openapi renders the memory API in the browser from the gateway's own files (the
    test machine has no route to a CDN, so a page that needs one stays blank)."""
    from selenium.webdriver.support import expected_conditions as ec

    gw = start_gateway()
    wait = waiter(driver)
    driver.get(gw.url + "/openapi")
    wait(ec.text_to_be_present_in_element(by_css(".swagger-ui .info .title"), "memgate"), "Swagger UI's title")
    paths = by_css(".swagger-ui .opblock-summary-path")
    wait(lambda d: any(e.text == "/v1/memories/search" for e in d.find_elements(*paths)), "the memory API's operations")
    loaded = driver.execute_script("return performance.getEntriesByType('resource').map(e => e.name)")
    assert loaded and all(name.startswith(gw.url + "/") for name in loaded), loaded


def test_the_key_form_mints_a_group_key_with_context_selection(driver, start_gateway, upstream):
    from selenium.webdriver.support import expected_conditions as ec

    from tests.test_keys import GROUP_CHAT

    gw = start_gateway(plugins=[{"name": "context_selection", "enabled": False}])
    wait = waiter(driver)
    login(driver, gw, wait)
    wait(ec.visibility_of_element_located(by_css("#users-table")), "the users page")
    nav(driver, wait, "keys")
    driver.find_element(*by_css("#key-user")).send_keys("groupbot")
    friend = driver.find_element(*by_css("#key-friend"))
    friend.clear()
    friend.send_keys("kiki")
    driver.find_element(*by_css("#key-group")).click()
    assert driver.find_element(*by_css("#key-service")).is_selected()  # a group key is a service key
    driver.find_element(*by_css("#key-context")).click()
    driver.find_element(*by_css("#key-bot-names")).send_keys("Kiki")
    driver.find_element(*by_css("#key-create")).click()
    secret = wait(ec.visibility_of_element_located(by_css("#key-secret")), "the new key").text
    with api(gw) as admin:
        row = next(k for k in admin.get("/v1/admin/keys").json()["data"] if k["user_id"] == "groupbot")
    assert row["group"] and row["service"]
    wait(ec.visibility_of_element_located(by_css(f'tr.key-row[data-key-id="{row["key_id"]}"] .key-group')), "the group chip")
    with api(gw, secret) as bot:
        assert bot.post("/v1/chat/completions", json={"model": "gpt-4o", "messages": GROUP_CHAT}).status_code == 200
    sent = [m["content"] for m in upstream.chat_requests()[-1].json["messages"]]
    assert GROUP_CHAT[1]["content"] not in sent and GROUP_CHAT[-1]["content"] in sent  # context selection ran
