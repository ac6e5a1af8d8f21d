"""`memgate memories ...` against the session's real Redis and the real local model."""

import json

from click.testing import CliRunner

from gateway.cli import main


def write_config(tmp_path, redis_url):
    import uuid

    path = tmp_path / "gateway.yaml"
    path.write_text(json.dumps({"memory": {"redis_url": redis_url, "key_prefix": "cli" + uuid.uuid4().hex[:8]}}))
    return str(path)


def test_add_list_search_export_forget_import(tmp_path, redis_url):
    config = write_config(tmp_path, redis_url)
    runner = CliRunner()
    added = runner.invoke(main, ["memories", "add", "--config", config, "--user", "zoe", "--friend", "pal",
                                 "--scope", "profile", "--type", "preference", "Zoe wants short answers"])
    assert added.exit_code == 0, added.output
    record = json.loads(added.stdout)
    listed = runner.invoke(main, ["memories", "list", "--config", config, "--user", "zoe", "--friend", "pal"])
    assert record["id"] in listed.stdout
    found = runner.invoke(main, ["memories", "search", "--config", config, "--user", "zoe", "--friend", "pal", "how long should replies be"])
    assert json.loads(found.stdout.splitlines()[0])["record"]["id"] == record["id"]
    out = tmp_path / "zoe.jsonl"
    assert runner.invoke(main, ["memories", "export", "--config", config, "--user", "zoe", "--out", str(out)]).exit_code == 0
    forgot = runner.invoke(main, ["memories", "forget", "--config", config, "--user", "zoe", "--yes"])
    assert "1 records erased" in forgot.output
    assert runner.invoke(main, ["memories", "list", "--config", config, "--user", "zoe", "--friend", "pal"]).stdout == ""
    imported = runner.invoke(main, ["memories", "import", "--config", config, str(out)])
    assert "imported 1 records" in imported.output
    assert record["id"] in runner.invoke(main, ["memories", "list", "--config", config, "--user", "zoe", "--friend", "pal"]).output


def test_bad_input_is_one_readable_line(tmp_path, redis_url):
    config = write_config(tmp_path, redis_url)
    result = CliRunner().invoke(main, ["memories", "delete", "--config", config, "--user", "zoe", "--friend", "pal", "bad id!"])
    assert result.exit_code == 1 and "Error:" in result.output and "Traceback" not in result.output
