"""CLI ergonomics (issue 9 item 13): quiet output on the right streams, ``--friend``
defaults, no model load for commands that do not embed, config keys and ``keys revoke``.
Real processes (subprocess) where import state or stream separation matters, CliRunner
otherwise; the session's real Redis throughout."""

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

from click.testing import CliRunner

from gateway.cli.main import main

ROOT = Path(__file__).resolve().parents[1]

NOT_EMBEDDING = """
import json, sys
from gateway.cli.main import main
config, out = sys.argv[1], sys.argv[2]
for args in (["memories", "list", "--user", "zoe"], ["memories", "export", "--user", "zoe", "--out", out]):
    try:
        main([*args, "--config", config], standalone_mode=False)
    except SystemExit:
        pass
loaded = sorted(m for m in ("sentence_transformers", "torch", "transformers") if m in sys.modules)
print(json.dumps({"loaded": loaded}), file=sys.stderr)
"""


def write_config(tmp_path, redis_url):
    path = tmp_path / "gateway.yaml"
    path.write_text(json.dumps({
        "clients": [{"key": "k-zoe", "user_id": "zoe", "friend_id": "pal", "key_id": "zoe-dev"}],
        "memory": {"redis_url": redis_url, "key_prefix": "cli" + uuid.uuid4().hex[:8]},
    }))
    return str(path)


def memgate(*args, script=None):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("HF_HUB_DISABLE_PROGRESS_BARS", None)
    command = [sys.executable, "-c", script, *args] if script else [sys.executable, "-m", "gateway.cli", *args]
    return subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)


def test_quiet_stdout_only_results_friend_default_and_no_model_for_list(tmp_path, redis_url):
    config = write_config(tmp_path, redis_url)
    added = memgate("memories", "add", "--config", config, "--user", "zoe", "Zoe plays the cello")
    assert added.returncode == 0, added.stderr
    [line] = added.stdout.splitlines()  # stdout: the record and nothing else
    record = json.loads(line)
    assert record["friend_id"] == "pal"  # the friend of zoe's key in the config
    # quiet by default: no INFO log lines, no progress bar while the model loads
    assert "INFO" not in added.stderr and "Loading weights" not in added.stderr, added.stderr

    out = tmp_path / "zoe.jsonl"
    listed = memgate(config, str(out), script=NOT_EMBEDDING)
    assert listed.returncode == 0, listed.stderr
    assert record["id"] in listed.stdout and record["id"] in out.read_text()
    assert json.loads(listed.stderr.strip().splitlines()[-1]) == {"loaded": []}


def test_friend_is_required_when_the_config_names_none(tmp_path, redis_url):
    config = write_config(tmp_path, redis_url)
    for command in (["memories", "list"], ["keys", "create"]):
        result = CliRunner().invoke(main, [*command, "--config", config, "--user", "nobody"])
        assert result.exit_code == 2, result.output
        assert "--friend is required" in result.output and "'nobody'" in result.output


def test_friend_defaults_to_the_stored_keys_of_a_user_without_a_config_key(tmp_path, redis_url):
    config = write_config(tmp_path, redis_url)
    runner = CliRunner()
    created = runner.invoke(main, ["keys", "create", "--config", config, "--user", "alice", "--friend", "coach"])
    assert created.exit_code == 0, created.output
    added = runner.invoke(main, ["memories", "add", "--config", config, "--user", "alice", "Alice swims on Tuesdays"])
    assert added.exit_code == 0, added.output
    assert json.loads(added.stdout)["friend_id"] == "coach"  # the stored key's friend
    listed = runner.invoke(main, ["memories", "list", "--config", config, "--user", "alice", "--json"])
    assert listed.exit_code == 0, listed.output
    assert [json.loads(line)["friend_id"] for line in listed.stdout.splitlines()] == ["coach"]

    second = runner.invoke(main, ["keys", "create", "--config", config, "--user", "alice", "--friend", "tutor"])
    assert second.exit_code == 0, second.output
    ambiguous = runner.invoke(main, ["memories", "list", "--config", config, "--user", "alice"])
    assert ambiguous.exit_code == 2 and "--friend is required" in ambiguous.output
    assert "['coach', 'tutor']" in ambiguous.output

    revoked = runner.invoke(main, ["keys", "revoke", "--config", config, json.loads(second.stdout)["key_id"]])
    assert revoked.exit_code == 0, revoked.output
    again = runner.invoke(main, ["memories", "list", "--config", config, "--user", "alice", "--json"])
    assert again.exit_code == 0, again.output  # a revoked key names no friend


def test_every_friend_option_says_where_its_default_comes_from_and_settings_use_the_stored_keys(tmp_path, redis_url):
    """The help of each --friend that defaults from the keys names both places it looks
    (gateway.yaml, then the keys of `memgate keys create`), and `settings` does look there."""
    commands = [["keys", "create"], ["settings", "get"], ["settings", "set"], ["memories", "list"],
                ["memories", "search"], ["memories", "add"], ["memories", "delete"]]
    for command in commands:
        shown = " ".join(CliRunner().invoke(main, [*command, "--help"]).output.split())
        assert "Default: the friend of USER's keys in gateway.yaml" in shown, (command, shown)
        assert "of its keys created with `memgate keys create`; required otherwise" in shown, (command, shown)
    added = " ".join(CliRunner().invoke(main, ["memories", "add", "--help"]).output.split())
    assert "profile: what holds about the user" in added and "event: something that happened" in added

    config = write_config(tmp_path, redis_url)
    runner = CliRunner()
    created = runner.invoke(main, ["keys", "create", "--config", config, "--user", "alice", "--friend", "coach"])
    assert created.exit_code == 0, created.output
    got = runner.invoke(main, ["settings", "get", "--config", config, "--user", "alice"])
    assert got.exit_code == 0, got.output
    assert json.loads(got.stdout)["friend_id"] == "coach"  # the stored key's friend


def test_keys_create_defaults_the_friend_and_checks_ids(tmp_path, redis_url):
    config = write_config(tmp_path, redis_url)
    runner = CliRunner()
    created = runner.invoke(main, ["keys", "create", "--config", config, "--user", "zoe"])
    assert created.exit_code == 0, created.output
    assert json.loads(created.stdout)["friend_id"] == "pal"
    bad = runner.invoke(main, ["keys", "create", "--config", config, "--user", " zoe", "--friend", "pal"])
    assert bad.exit_code == 1 and "--user must not start or end with whitespace" in bad.output


def test_revoking_a_config_key_says_where_config_keys_live(tmp_path, redis_url):
    config = write_config(tmp_path, redis_url)
    result = CliRunner().invoke(main, ["keys", "revoke", "--config", config, "zoe-dev"])
    assert result.exit_code == 1
    assert "config key (clients.0" in result.output and "config keys live in gateway.yaml" in result.output
    unknown = CliRunner().invoke(main, ["keys", "revoke", "--config", config, "k_nope"])
    assert unknown.exit_code == 1 and "no key with id 'k_nope'" in unknown.output


def _commands(command, path):
    import click

    yield path, command
    if isinstance(command, click.Group):
        for name, sub in command.commands.items():
            yield from _commands(sub, [*path, name])


def test_every_help_text_is_plain_text():
    """--help shows the docstrings as people read them: no reStructuredText markup."""
    import re

    seen = 0
    for path, _command in _commands(main, ["memgate"]):
        result = CliRunner().invoke(main, [*path[1:], "--help"])
        assert result.exit_code == 0, (path, result.output)
        markup = re.findall(r"``|:(?:mod|class|func|meth|attr|data):`", result.output)
        assert not markup, f"{' '.join(path)} --help shows {markup}:\n{result.output}"
        seen += 1
    assert seen > 20  # every command and group, nested ones included


def test_commands_run_while_a_clients_variable_is_unset_and_serve_refuses(tmp_path, redis_url):
    unset = "MEMGATE_TEST_UNSET_" + uuid.uuid4().hex[:8].upper()
    path = tmp_path / "gateway.yaml"
    path.write_text(json.dumps({
        "clients": [{"key": "k-zoe", "user_id": "zoe", "friend_id": "pal"},
                    {"key": f"${{{unset}}}", "user_id": "groupbot", "service": True, "group": True}],
        "memory": {"redis_url": redis_url, "key_prefix": "cli" + uuid.uuid4().hex[:8]},
    }))
    listed = memgate("memories", "list", "--config", str(path), "--user", "zoe")  # friend from clients.0
    assert listed.returncode == 0, listed.stderr
    assert "clients.1 left out" in listed.stderr and unset in listed.stderr
    served = memgate("serve", "--config", str(path), "--port", "0")
    assert served.returncode == 1 and f"{unset} is not set" in served.stderr


def test_a_missing_config_names_the_folder_searched_and_the_option(tmp_path, monkeypatch):
    """Run outside the repo root: every command, serve included, says where it looked for
    gateway.yaml and how to name another file, instead of a bare errno."""
    monkeypatch.chdir(tmp_path)
    for command in (["keys", "list"], ["memories", "list", "--user", "zoe"], ["serve"]):
        result = CliRunner().invoke(main, command)
        assert result.exit_code == 1, (command, result.output)
        assert f"no config file gateway.yaml (in {tmp_path})" in result.output, result.output
        assert "--config /path/to/gateway.yaml" in result.output and "Errno" not in result.output
    absolute = CliRunner().invoke(main, ["keys", "list", "--config", str(tmp_path / "nope.yaml")])
    assert absolute.exit_code == 1 and f"no config file {tmp_path / 'nope.yaml'}:" in absolute.output


def test_serve_on_a_busy_port_stops_before_start_up_saying_how_to_pick_another(tmp_path, redis_url):
    """A second ``memgate serve`` on a port in use stops at once with what to do, not with
    uvicorn's ``[Errno 98]`` after loading the models and Redis."""
    import socket

    path = tmp_path / "gateway.yaml"
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        path.write_text(json.dumps({
            "server": {"port": port},
            "clients": [{"key": "k-zoe", "user_id": "zoe", "friend_id": "pal"}],
            "memory": {"redis_url": redis_url, "key_prefix": "cli" + uuid.uuid4().hex[:8]},
        }))
        result = CliRunner().invoke(main, ["serve", "--config", str(path)])
    assert result.exit_code == 1, result.output
    assert f"127.0.0.1:{port} is already in use" in result.output and "--port N" in result.output
    assert "memgate: starting on" not in result.output  # stopped before it announced a start


def test_an_empty_list_leaves_stdout_empty_and_says_so_on_stderr(tmp_path, redis_url):
    config = write_config(tmp_path, redis_url)
    runner = CliRunner()
    empty = (
        (["keys", "list"], "no keys in the key store", "memgate keys create"),
        (["lorebook", "list", "--friend", "pal"], "no lorebooks for friend 'pal'", "memgate lorebook import"),
        (["lorebook", "list", "--friend", "pal", "--user", "zoe"], "no lorebooks of user 'zoe'", "--user zoe"),
        (["memories", "list", "--user", "zoe"], "no memories for user 'zoe'", ""),
        (["memories", "list", "--user", "zoe", "--json"], "no memories for user 'zoe'", ""),
        (["memories", "search", "--user", "zoe", "--json", "cello"], "no memory matches 'cello'", ""),
    )
    for command, said, hint in empty:
        result = runner.invoke(main, [*command, "--config", config])
        assert result.exit_code == 0, (command, result.output)
        assert result.stdout == "" and said in result.stderr and hint in result.stderr, (command, result.stderr)

    # once there is something to list: JSON lines on stdout, nothing on stderr
    assert runner.invoke(main, ["keys", "create", "--config", config, "--user", "zoe"]).exit_code == 0
    world = tmp_path / "book.json"
    world.write_text(json.dumps({"entries": {"0": {"uid": 0, "key": ["moon"], "content": "A silver moon."}}}))
    imported = runner.invoke(main, ["lorebook", "import", str(world), "--config", config, "--friend", "pal"])
    assert imported.exit_code == 0, imported.output
    assert runner.invoke(main, ["memories", "add", "--config", config, "--user", "zoe", "Zoe plays the cello"]).exit_code == 0
    for command in (["keys", "list"], ["lorebook", "list", "--friend", "pal"], ["memories", "list", "--user", "zoe", "--json"],
                    ["memories", "search", "--user", "zoe", "--json", "cello"]):
        result = runner.invoke(main, [*command, "--config", config])
        assert result.exit_code == 0 and result.stderr == "", (command, result.stderr)
        assert result.stdout and all(isinstance(json.loads(line), dict) for line in result.stdout.splitlines()), command
    listed = runner.invoke(main, ["memories", "list", "--user", "zoe", "--config", config])
    assert "Zoe plays the cello" in listed.stdout and listed.stderr == ""


def test_keys_create_shows_the_new_key_alone_on_a_line_and_says_it_is_shown_once(tmp_path, redis_url):
    config = write_config(tmp_path, redis_url)
    runner = CliRunner()
    created = runner.invoke(main, ["keys", "create", "--config", config, "--user", "zoe"])
    assert created.exit_code == 0, created.output
    record = json.loads(created.stdout)  # stdout: the JSON record, for scripts
    assert record["key"] in created.stderr.splitlines()  # the key alone on its own line
    assert "shown only this once" in created.stderr and record["key_id"] in created.stderr
    listed = runner.invoke(main, ["keys", "list", "--config", config])
    assert record["key_id"] in listed.stdout and record["key"] not in listed.output
