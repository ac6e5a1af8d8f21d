"""``python -m bench assistant``: fact recall, junk, stale and duplicate lines on the
assistant-chat dev set (:mod:`bench.assistant.run`, data format in
:mod:`bench.assistant.dataset`)."""

from __future__ import annotations

from pathlib import Path

import click

from bench.assistant.dataset import DATA_DIR, SPLITS, load_users, select
from bench.assistant.run import DEFAULT_CONFIG, FRIEND


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
def command(split: str, lang: str, only: tuple[str, ...], data: Path, config_path: Path, redis_url: str | None,
            concurrency: int, probe_friend: str, json_out: str | None) -> None:
    """Replay everyday assistant chats through the default gateway, then probe in new conversations."""
    from bench.assistant.run import main

    users = select(load_users(data.glob("*.json")), split, lang)
    if only:
        unknown = set(only) - {u.user for u in users}
        if unknown:
            raise click.BadParameter(f"not in the selection: {sorted(unknown)}", param_hint="'--user'")
        users = [u for u in users if u.user in only]
    if not users:
        raise click.UsageError("no user matches --split/--lang")
    main(users, json_out, config_path, redis_url, concurrency, probe_friend)
