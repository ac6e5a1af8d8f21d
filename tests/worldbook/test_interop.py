"""SillyTavern World Info import/export (issue 12, item 4) with real published lorebooks:
``tests/fixtures/lorebooks/`` (source and licence in its README)."""

import base64
import json
import struct
import zlib
from pathlib import Path

import httpx
import pytest

from gateway.lorebook.model import Lorebook
from gateway.lorebook.sillytavern import LorebookFormatError, export_world_info, import_lorebook, parse_upload
from tests.support.gateway import ADMIN_KEY, ALICE_KEY, BOB_KEY

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "lorebooks"
ELDORIA = (FIXTURES / "Eldoria.json").read_bytes()
CARD = json.loads((FIXTURES / "Seraphina.card_v2.json").read_text())
MAPPED = ("key", "keysecondary", "content", "constant", "order", "position", "disable")


def png_with(keyword: bytes, payload: dict) -> bytes:
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    text = keyword + b"\x00" + base64.b64encode(json.dumps(payload).encode())
    ihdr = struct.pack(">IIBBBBB", 1, 1, 8, 0, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"tEXt", text) + chunk(b"IEND", b"")


def test_a_world_file_and_its_character_card_import_to_the_same_entries():
    world = import_lorebook(parse_upload(ELDORIA))
    card = import_lorebook(CARD)
    assert len(world.entries) == 4 and world.entries == card.entries
    assert card.name == "Eldoria"
    assert world.ignored == {"selective": 4}  # reported, not silently dropped
    assert world.entries[0].keywords == ("eldoria", "wood", "forest", "magical forest")
    assert world.entries[0].position == "before_char" and world.entries[0].priority == 100
    assert import_lorebook(parse_upload(png_with(b"chara", CARD))).entries == card.entries


def test_export_then_import_is_lossless_and_keeps_sillytavern_fields():
    original = json.loads(ELDORIA)
    book = Lorebook(id="eldoria", friend_id="seraphina", entries=tuple(import_lorebook(original).entries))
    exported = export_world_info(book)
    for uid, entry in original["entries"].items():
        assert {k: exported["entries"][uid][k] for k in MAPPED} == {k: entry[k] for k in MAPPED}
    assert import_lorebook(json.loads(json.dumps(exported))).entries == list(book.entries)


def test_every_sillytavern_setting_maps_and_unsupported_ones_are_reported():
    world = {"entries": {"7": {
        "uid": 7, "key": ["moon"], "keysecondary": ["night"], "content": "c", "selectiveLogic": 3,
        "order": 42, "position": 4, "depth": 2, "role": 2, "probability": 30, "useProbability": True,
        "group": "sky", "groupOverride": True, "groupWeight": 7, "scanDepth": 5, "caseSensitive": True,
        "matchWholeWords": False, "sticky": 3, "cooldown": 1, "delay": 4, "excludeRecursion": True,
        "preventRecursion": True, "delayUntilRecursion": 1, "disable": True, "vectorized": True,
        "automationId": "x",
    }, "8": {"uid": 8, "key": ["a"], "content": "d", "position": 2}}}
    imported = import_lorebook(world)
    e = imported.entries[0]
    assert (e.selective_logic, e.priority, e.position, e.depth, e.role) == ("and_all", 42, "depth", 2, "assistant")
    assert (e.probability, e.group, e.group_override, e.group_weight, e.scan_depth) == (30, "sky", True, 7, 5)
    assert (e.case_sensitive, e.match_whole_words, e.sticky, e.cooldown, e.delay) == (True, False, 3, 1, 4)
    assert e.exclude_recursion and e.prevent_recursion and e.delay_until_recursion and not e.enabled
    assert imported.ignored == {"automationId": 1}
    assert e.trigger_type == "semantic" and imported.entries[1].trigger_type == "keyword"  # ST "vectorized"
    assert imported.entries[1].position == "after_char" and "Author's Note top" in imported.notes[0]
    again = import_lorebook(export_world_info(Lorebook(id="b", friend_id="f", entries=tuple(imported.entries))))
    assert again.entries == imported.entries


def test_the_vectorized_flag_is_a_semantic_trigger_both_ways():
    # SillyTavern public/scripts/world-info.js: a world entry's "vectorized", a character
    # book entry's "extensions.vectorized" (the Vector Storage extension matches it)
    world = {"entries": {"1": {"uid": 1, "key": [], "content": "The tides obey the moon.", "vectorized": True},
                         "2": {"uid": 2, "key": ["x"], "content": "y", "vectorized": False}}}
    imported = import_lorebook(world)
    assert [e.trigger_type for e in imported.entries] == ["semantic", "keyword"] and imported.ignored == {}
    card = {"spec": "chara_card_v2", "data": {"character_book": {"entries": [
        {"keys": [], "content": "The tides obey the moon.", "extensions": {"vectorized": True}}]}}}
    card_book = import_lorebook(card)
    assert card_book.entries[0].trigger_type == "semantic" and card_book.ignored == {}
    exported = export_world_info(Lorebook(id="b", friend_id="f", entries=tuple(imported.entries)))
    assert [e["vectorized"] for e in exported["entries"].values()] == [True, False]
    for entry in exported["entries"].values():
        del entry["memgate"]  # as SillyTavern saves it back: no memgate object
    assert [e.trigger_type for e in import_lorebook(exported).entries] == ["semantic", "keyword"]


def test_bad_input_names_what_is_wrong():
    with pytest.raises(LorebookFormatError, match="no entries"):
        import_lorebook({"name": "x"})
    with pytest.raises(LorebookFormatError, match=r"entries\.1\.probability"):
        import_lorebook({"entries": {"1": {"uid": 1, "key": ["a"], "content": "c", "probability": 101}}})


def test_post_and_get_lorebooks_are_scoped_like_memories(start_gateway, upstream):
    gw = start_gateway()
    alice = {"authorization": f"Bearer {ALICE_KEY}"}
    made = httpx.post(gw.url + "/v1/lorebooks", content=ELDORIA, headers=alice, timeout=30)
    assert made.status_code == 201, made.text
    report = made.json()
    assert report["entries"] == 4 and report["ignored"] == {"selective": 4} and report["user_id"] == "alice"
    got = httpx.get(gw.url + f"/v1/lorebooks/{report['id']}", headers=alice, timeout=30)
    assert got.status_code == 200
    assert [e["key"] for e in got.json()["entries"].values()] == [e["key"] for e in json.loads(ELDORIA)["entries"].values()]
    bob = httpx.get(gw.url + f"/v1/lorebooks/{report['id']}", headers={"authorization": f"Bearer {BOB_KEY}"}, timeout=30)
    assert bob.status_code == 404 and bob.json()["error"]["param"] == "id"
    role = httpx.post(gw.url + "/v1/lorebooks?scope=role", content=ELDORIA, headers=alice, timeout=30)
    assert role.status_code == 403 and role.json()["error"]["param"] == "scope"
    admin = httpx.post(gw.url + "/v1/lorebooks?scope=role&id=eldoria", json=CARD,
                       headers={"authorization": f"Bearer {ADMIN_KEY}"}, timeout=30)
    assert admin.status_code == 201 and admin.json()["user_id"] is None and admin.json()["id"] == "eldoria"
    bad = httpx.post(gw.url + "/v1/lorebooks", content=b'{"name": "x"}', headers=alice, timeout=30)
    assert bad.status_code == 400 and bad.json()["error"]["param"], bad.text
    worse = httpx.post(gw.url + "/v1/lorebooks", json={"entries": {"1": {"key": ["a"], "probability": 101}}},
                       headers=alice, timeout=30)
    assert worse.status_code == 400 and "probability" in worse.json()["error"]["param"], worse.text


def test_cli_import_then_export_round_trips_a_real_lorebook(tmp_path, redis_url):
    import uuid

    from click.testing import CliRunner

    from gateway.cli.main import main

    config = tmp_path / "gateway.yaml"
    config.write_text(json.dumps({"memory": {"redis_url": redis_url, "key_prefix": "cli" + uuid.uuid4().hex[:8]}}))
    card = tmp_path / "seraphina.png"
    card.write_bytes(png_with(b"chara", CARD))
    runner = CliRunner()
    done = runner.invoke(main, ["lorebook", "import", str(card), "--config", str(config), "--friend", "seraphina",
                                "--user", "zoe", "--id", "eldoria"])
    assert done.exit_code == 0, done.output
    assert json.loads(done.stdout)["entries"] == 4
    out = tmp_path / "out.json"
    exported = runner.invoke(main, ["lorebook", "export", "eldoria", "--config", str(config), "--friend", "seraphina",
                                    "--user", "zoe", "--out", str(out)])
    assert exported.exit_code == 0, exported.output
    assert import_lorebook(json.loads(out.read_text())).entries == import_lorebook(parse_upload(ELDORIA)).entries
    missing = runner.invoke(main, ["lorebook", "export", "eldoria", "--config", str(config), "--friend", "seraphina"])
    assert missing.exit_code == 1 and "no lorebook 'eldoria'" in missing.output
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    failed = runner.invoke(main, ["lorebook", "import", str(bad), "--config", str(config), "--friend", "f"])
    assert failed.exit_code == 1 and "not a lorebook" in failed.output


def test_forgetting_a_user_erases_their_own_lorebooks_not_the_roles(start_gateway, upstream):
    gw = start_gateway()
    alice = {"authorization": f"Bearer {ALICE_KEY}"}
    admin = {"authorization": f"Bearer {ADMIN_KEY}"}
    mine = httpx.post(gw.url + "/v1/lorebooks", content=ELDORIA, headers=alice, timeout=30).json()["id"]
    assert httpx.post(gw.url + "/v1/lorebooks?scope=role&id=shared", content=ELDORIA, headers=admin, timeout=30).status_code == 201
    forgot = httpx.post(gw.url + "/v1/admin/users/alice/forget", headers=admin, timeout=30)
    assert forgot.status_code == 200, forgot.text
    assert httpx.get(gw.url + f"/v1/lorebooks/{mine}", headers=alice, timeout=30).status_code == 404
    assert httpx.get(gw.url + "/v1/lorebooks/shared?scope=role", headers=admin, timeout=30).status_code == 200  # role-wide: kept


def test_books_and_entries_are_listed_edited_and_deleted_in_the_callers_scope(start_gateway, upstream):
    gw = start_gateway()
    alice = {"authorization": f"Bearer {ALICE_KEY}"}
    bob = {"authorization": f"Bearer {BOB_KEY}"}
    url = gw.url + "/v1/lorebooks"
    book = httpx.post(url, content=ELDORIA, headers=alice, timeout=30).json()["id"]
    listed = httpx.get(url, headers=alice, timeout=30).json()
    assert [(b["id"], b["entries"]) for b in listed] == [(book, 4)]
    assert httpx.get(url, headers=bob, timeout=30).json() == []
    entry = {"content": "The moon of Eldoria is silver.", "keywords": ["moon"], "priority": 50}
    put = httpx.put(f"{url}/{book}/entries/moon", json=entry, headers=alice, timeout=30)
    assert put.status_code == 200, put.text
    exported = httpx.get(f"{url}/{book}", headers=alice, timeout=30).json()["entries"]
    assert [e["content"] for e in exported.values()][-1] == "The moon of Eldoria is silver." and len(exported) == 5
    changed = httpx.put(f"{url}/{book}/entries/moon", json={**entry, "content": "Two moons."}, headers=alice, timeout=30)
    assert changed.status_code == 200 and httpx.get(url, headers=alice, timeout=30).json()[0]["entries"] == 5
    assert put.json()["id"] == "moon"  # the path's
    unknown = httpx.put(f"{url}/{book}/entries/sun", json={**entry, "colour": "red"}, headers=alice, timeout=30)
    assert unknown.status_code == 400 and unknown.json()["error"]["param"] == "colour", unknown.text
    assert httpx.put(f"{url}/{book}/entries/moon", json=entry, headers=bob, timeout=30).status_code == 404
    assert httpx.delete(f"{url}/{book}/entries/moon", headers=bob, timeout=30).status_code == 404
    assert httpx.delete(f"{url}/{book}/entries/moon", headers=alice, timeout=30).status_code == 204
    assert httpx.delete(f"{url}/{book}/entries/moon", headers=alice, timeout=30).status_code == 404
    assert httpx.delete(f"{url}/{book}?scope=role", headers=alice, timeout=30).status_code == 403
    assert httpx.delete(f"{url}/{book}", headers=bob, timeout=30).status_code == 404
    assert httpx.delete(f"{url}/{book}", headers=alice, timeout=30).status_code == 204
    assert httpx.get(f"{url}/{book}", headers=alice, timeout=30).status_code == 404


def test_cli_lists_edits_and_deletes_books_and_entries(tmp_path, redis_url):
    import uuid

    from click.testing import CliRunner

    from gateway.cli.main import main

    config = tmp_path / "gateway.yaml"
    config.write_text(json.dumps({"memory": {"redis_url": redis_url, "key_prefix": "cli" + uuid.uuid4().hex[:8]}}))
    world = tmp_path / "Eldoria.json"
    world.write_bytes(ELDORIA)
    runner = CliRunner()

    def run(*args: str):
        return runner.invoke(main, ["lorebook", *args, "--config", str(config), "--friend", "seraphina"])

    assert run("import", str(world), "--id", "eldoria").exit_code == 0
    assert [json.loads(line)["entries"] for line in run("list").stdout.splitlines()] == [4]
    assert run("list", "--user", "zoe").stdout == ""
    put = run("put-entry", "eldoria", json.dumps({"id": "moon", "content": "A silver moon.", "keywords": ["moon"]}))
    assert put.exit_code == 0, put.output
    assert [json.loads(line)["entries"] for line in run("list").stdout.splitlines()] == [5]
    bad = run("put-entry", "eldoria", '{"id": "x", "content": "c", "probability": 101}')
    assert bad.exit_code == 1 and "probability" in bad.output
    assert run("delete", "eldoria", "--entry", "moon").exit_code == 0
    gone = run("delete", "eldoria", "--entry", "moon")
    assert gone.exit_code == 1 and "no entry 'moon'" in gone.output
    assert run("delete", "eldoria").exit_code == 0
    assert run("list").stdout == ""


def test_cli_import_names_the_book_after_its_file_by_default(tmp_path, redis_url):
    import uuid

    from click.testing import CliRunner

    from gateway.cli.main import main

    config = tmp_path / "gateway.yaml"
    config.write_text(json.dumps({"memory": {"redis_url": redis_url, "key_prefix": "cli" + uuid.uuid4().hex[:8]}}))
    world = tmp_path / "Eldoria.json"
    world.write_bytes(ELDORIA)
    assert "name" not in json.loads(ELDORIA)  # a world file's name is its file's (SillyTavern worlds/<name>.json)
    runner = CliRunner()
    done = runner.invoke(main, ["lorebook", "import", str(world), "--config", str(config), "--friend", "assistant"])
    assert done.exit_code == 0, done.output
    assert json.loads(done.stdout)["name"] == "Eldoria"
    listed = runner.invoke(main, ["lorebook", "list", "--config", str(config), "--friend", "assistant"])
    assert json.loads(listed.stdout)["name"] == "Eldoria"
    named = runner.invoke(main, ["lorebook", "import", str(world), "--config", str(config), "--friend", "assistant",
                                 "--name", "Mine"])
    assert json.loads(named.stdout)["name"] == "Mine"
