"""``python -m bench assistant``: fact recall, junk, stale and duplicate lines on the
assistant-chat dev set (:mod:`bench.assistant.run`, data format in
:mod:`bench.assistant.dataset`)."""

from __future__ import annotations

from pathlib import Path

import click

from bench.assistant.dataset import DATA_DIR, SPLITS, load_users, select
from bench.assistant.run import DEFAULT_CONFIG, FRIEND, ExtractModel


@click.command("assistant")
@click.option("--split", type=click.Choice([*SPLITS, "all"]), default="dev", show_default=True)
@click.option("--lang", type=click.Choice(["en", "zh", "all"]), default="all", show_default=True)
@click.option("--user", "only", multiple=True, help="Only these user ids (repeatable).")
@click.option("--data", type=click.Path(exists=True, file_okay=False, path_type=Path), default=DATA_DIR,
              show_default=True, help="Folder of user files.")
@click.option("--config", "config_path", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              default=DEFAULT_CONFIG, show_default=True, help="gateway.yaml to run (upstream, keys, data dir replaced).")
@click.option("--redis-url", default=None, help="A running Redis >= 8 (default: the yaml's, i.e. embedded).")
@click.option("--concurrency", type=click.IntRange(1, 64), default=4, show_default=True, help="Users replayed at once.")
@click.option("--probe-friend", default=FRIEND, show_default=True,
              help="Friend id of the probe keys (another friend than the chats' shows what crosses friends).")
@click.option("--json-out", type=click.Path(dir_okay=False), default=None, help="Write the whole result as JSON.")
@click.option("--mode", type=click.Choice(["config", "extract"]), default="config", show_default=True,
              help="config: memorize as the yaml says; extract: memorize.mode extract with --model-url.")
@click.option("--model-url", default=None, help="extract: the memory model's OpenAI-compatible base URL (.../v1).")
@click.option("--model-name", default="memory-model", show_default=True, help="extract: model name sent.")
@click.option("--model-max-tokens", type=click.IntRange(16, 65_536), default=512, show_default=True,
              help="extract: max_tokens of each memory-model call.")
@click.option("--model-timeout", type=click.FloatRange(1, 3600), default=300.0, show_default=True,
              help="extract: seconds per memory-model call (the job budget is five times this).")
@click.option("--max-facts", type=click.IntRange(1, 100), default=5, show_default=True, help="extract: facts per job.")
@click.option("--structured-outputs/--no-structured-outputs", default=True, show_default=True,
              help="extract: start with response_format json_schema (else json_object).")
@click.option("--drain-timeout", type=click.FloatRange(1, 86_400), default=180.0, show_default=True,
              help="Seconds for memorization to drain after each round (a local model needs far more).")
def command(split: str, lang: str, only: tuple[str, ...], data: Path, config_path: Path, redis_url: str | None,
            concurrency: int, probe_friend: str, json_out: str | None, mode: str, model_url: str | None,
            model_name: str, model_max_tokens: int, model_timeout: float, max_facts: int,
            structured_outputs: bool, drain_timeout: float) -> None:
    """Replay everyday assistant chats through the default gateway, then probe in new conversations."""
    from bench.assistant.run import main

    if (mode == "extract") != bool(model_url):
        raise click.UsageError("--mode extract and --model-url go together")
    extract = ExtractModel(model_url, model_name, model_max_tokens, model_timeout, max_facts,
                           structured_outputs) if model_url else None

    users = select(load_users(data.glob("*.json")), split, lang)
    if only:
        unknown = set(only) - {u.user for u in users}
        if unknown:
            raise click.BadParameter(f"not in the selection: {sorted(unknown)}", param_hint="'--user'")
        users = [u for u in users if u.user in only]
    if not users:
        raise click.UsageError("no user matches --split/--lang")
    main(users, json_out, config_path, redis_url, concurrency, probe_friend, extract, drain_timeout)
