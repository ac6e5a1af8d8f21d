"""`memgate memories ...` against the session's real Redis and the real local model."""

import json

from click.testing import CliRunner

from gateway.cli.main import main


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
    found = runner.invoke(main, ["memories", "search", "--config", config, "--user", "zoe", "--friend", "pal", "--json",
                                 "how long should replies be"])
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


def test_list_and_search_print_a_table_by_default_and_json_lines_with_json(tmp_path, redis_url):
    config = write_config(tmp_path, redis_url)
    runner = CliRunner()
    long_text = "Zoe keeps bees on the roof of her building in Lisbon " * 4
    base = ["--config", config, "--user", "zoe", "--friend", "pal"]
    record = json.loads(runner.invoke(main, ["memories", "add", *base, "--scope", "profile", long_text]).stdout)

    listed = runner.invoke(main, ["memories", "list", *base])
    assert listed.exit_code == 0, listed.output
    header, rule, row = listed.stdout.splitlines()
    assert header.split() == ["ID", "SCOPE", "TYPE", "OCCURRED", "TEXT"] and set(rule) <= {"-", " "}
    assert row.split()[:4] == [record["id"], "profile", "semantic", record["occurred_at"][:10]]
    assert row.endswith("\u2026") and len(row) < 160 and "{" not in row  # cut, not the JSON record

    found = runner.invoke(main, ["memories", "search", *base, "where are the bees kept?"])
    header, _, row = found.stdout.splitlines()
    assert header.split() == ["SCORE", "RELEVANCE", "COSINE", "ID", "SCOPE", "TYPE", "TEXT"]
    score, relevance, cosine, memory_id = row.split()[:4]
    assert memory_id == record["id"] and 0 < float(cosine) <= 1 and 0 <= float(relevance) <= 1 and 0 < float(score) <= 1

    as_json = runner.invoke(main, ["memories", "list", *base, "--json"])
    assert [json.loads(line)["id"] for line in as_json.stdout.splitlines()] == [record["id"]]
    hits = runner.invoke(main, ["memories", "search", *base, "--json", "where are the bees kept?"])
    assert json.loads(hits.stdout.splitlines()[0])["record"]["text"] == long_text

    nothing = runner.invoke(main, ["memories", "list", "--config", config, "--user", "nobody", "--friend", "pal"])
    assert nothing.exit_code == 0 and nothing.stdout == "" and "no memories" in nothing.stderr
