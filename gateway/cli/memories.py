"""``memgate memories ...``: the memory API from the command line.

Works on the store directly (same Redis and key prefix as the gateway's config), so it
works whether or not a gateway runs. ``list`` and ``search`` print a table for people
(:func:`table`; long texts cut with an ellipsis) and, with ``--json``, one JSON object per
line for scripts; when nothing is found, stdout stays empty in either form and a line on
stderr says so; ``add`` prints the stored record as JSON; messages go to stderr. ``--friend`` defaults to the friend of the user's keys in
``gateway.yaml`` or, when it has none, in Redis (:func:`default_friend`). The embedding model is loaded only by commands
that embed (add, search, import, reembed).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import click

from gateway.cli.support import composed, keystore_call, load, redis_for, redis_url_for
from gateway.config import GatewayConfig

__all__ = ['FRIEND_HELP', 'Action', 'default_friend', 'register']

Action = Callable[[Any, Any], Awaitable[Any]]  # (store, redis) -> result


#: Widest text column of the tables, in characters (longer texts end with an ellipsis).
TEXT_WIDTH = 72


def _cut(text: str, width: int) -> str:
    """``text`` on one line, at most ``width`` characters (an ellipsis marks a cut)."""
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "\u2026"


def table(header: tuple[str, ...], rows: list[tuple[str, ...]]) -> str:
    """Left-aligned columns separated by two spaces, a header line and a rule; the last
    column is not padded."""
    widths = [max(len(r[i]) for r in (header, *rows)) for i in range(len(header) - 1)]

    def line(cells: tuple[str, ...]) -> str:
        return "  ".join([*(c.ljust(w) for c, w in zip(cells, widths, strict=False)), cells[-1]]).rstrip()

    rule = tuple("-" * max(len(r[i]) for r in (header, *rows)) for i in range(len(header)))
    return "\n".join([line(header), line(rule), *(line(r) for r in rows)])


def _record_cells(record: Any) -> tuple[str, ...]:
    return (record.id, record.scope, record.type, record.occurred_at.date().isoformat(), _cut(record.text, TEXT_WIDTH))


JSON_OPTION = click.option("--json", "as_json", is_flag=True, help="One JSON object per line (for scripts) instead of a table.")


def _fail(exc: Exception) -> click.ClickException:
    message = getattr(exc, "message", None) or str(exc)
    return click.ClickException(message)


#: ``--friend``'s help wherever :func:`default_friend` fills it in.
FRIEND_HELP = ("friend_id. Default: the friend of USER's keys in gateway.yaml (the dev key's for its user) "
               "or, when it has none there, of its keys created with `memgate keys create`; required otherwise.")


def default_friend(config: GatewayConfig, user: str, friend: str | None) -> str:
    """``friend`` when given, else the one ``friend_id`` the keys of ``user`` name: the
    ``gateway.yaml`` keys (the dev key's ``assistant`` for its user) or, when none of them
    is ``user``'s, the valid keys stored in Redis (``memgate keys create``; the store is
    read only then).

    Raises:
        click.UsageError: no ``--friend`` and no single friend to default to.
    """
    if friend is not None:
        return friend
    friends = sorted({c.friend_id for c in config.clients if c.user_id == user})
    where = "the config keys"
    if not friends:
        friends, where = stored_friends(config, user), "the stored keys"
    if len(friends) == 1:
        return friends[0]
    why = (f"{where} of {user!r} name friends {friends}" if friends
           else f"no key in the config or in Redis has user_id {user!r}")
    raise click.UsageError(f"--friend is required ({why})")


def stored_friends(config: GatewayConfig, user: str) -> list[str]:
    """The ``friend_id`` of each valid (not revoked) key of ``user`` stored in Redis,
    sorted, without repeats.

    Raises:
        click.ClickException: Redis is unreachable (one readable line).
    """
    async def friends(store: Any) -> list[str]:
        stored = await store.list()
        return sorted({k.principal.friend_id for k in stored if k.revoked_at is None and k.principal.user_id == user})

    try:
        return list(keystore_call(config, friends))
    except Exception as exc:  # the CLI boundary: one readable line, exit 1
        raise _fail(exc) from None


def _run(config: GatewayConfig | str, action: Action, *, check_model: bool = True, lazy: bool = True) -> Any:
    """Run ``action(store, redis)`` on the config's store; the embedding model is loaded
    only if the action embeds (``lazy``, :class:`gateway.memory.factory.LazyEmbedder`)."""
    from gateway.memory.factory import open_store

    if isinstance(config, str):
        config = load(config)
    memory, upstream = config.memory, config.upstream

    async def go(url: str) -> Any:
        async with redis_for(url, config.memory.cluster) as client:
            async with open_store(
                client, memory, upstream_base_url=upstream.base_url, upstream_api_key=upstream.api_key,
                check_model=check_model, lazy_embedder=lazy,
            ) as store:
                return await action(store, client)

    with redis_url_for(config) as url:
        try:
            return asyncio.run(go(url))
        except Exception as exc:  # the CLI boundary: one readable line, exit 1
            raise _fail(exc) from None


def _tenant(user: str, friend: str | None) -> Any:
    from gateway.memory.records import Tenant
    from gateway.runtime.errors import InvalidRequest

    try:
        return Tenant(user, friend)
    except InvalidRequest as exc:
        raise _fail(exc) from None


def register(main: click.Group, config_option: Callable[[Any], Any]) -> None:
    """Add the ``memories`` group to the ``memgate`` CLI."""

    @main.group()
    def memories() -> None:
        """Read and manage stored memories."""

    def tenant_options(f: Any) -> Any:
        f = click.option("--friend", default=None, help=FRIEND_HELP)(f)
        return click.option("--user", required=True, help="user_id.")(f)

    @memories.command("list")
    @config_option
    @tenant_options
    @click.option("--limit", default=50, show_default=True)
    @JSON_OPTION
    def list_(config_path: str, user: str, friend: str | None, limit: int, as_json: bool = False) -> None:
        """Visible memories of (user, friend), newest first: a table (id, scope, type, date
        it happened, text), or JSON lines with --json."""
        config = load(config_path)
        tenant = _tenant(user, default_friend(config, user, friend))
        page = _run(config, lambda s, _: s.list(tenant, limit=limit))
        if as_json:
            for record in page.items:
                click.echo(record.model_dump_json())
        elif page.items:
            click.echo(table(("ID", "SCOPE", "TYPE", "OCCURRED", "TEXT"), [_record_cells(r) for r in page.items]))
        if not page.items:
            click.echo(f"no memories for user {tenant.user_id!r}, friend {tenant.friend_id!r}", err=True)

    @memories.command()
    @config_option
    @tenant_options
    @click.argument("query")
    @click.option("--top-k", default=5, show_default=True)
    @click.option("--threshold", default=0.0, show_default=True, help="Lowest cosine similarity kept.")
    @JSON_OPTION
    def search(
        config_path: str, user: str, friend: str | None, query: str, top_k: int, threshold: float, as_json: bool = False,
    ) -> None:
        """Search (user, friend)'s memories, best first: a table (score, calibrated
        relevance, cosine, id, scope, type, text), or JSON lines with --json."""
        config = load(config_path)
        tenant = _tenant(user, default_friend(config, user, friend))
        hits = _run(config, lambda s, _: s.search(tenant, query, top_k=top_k, threshold=threshold))
        if as_json:
            for hit in hits:
                click.echo(hit.model_dump_json())
        elif hits:
            rows = [(
                f"{h.score:.3f}", "-" if h.relevance is None else f"{h.relevance:.3f}", f"{h.similarity:.3f}",
                *_record_cells(h.record)[:3], _cut(h.record.text, TEXT_WIDTH),
            ) for h in hits]
            click.echo(table(("SCORE", "RELEVANCE", "COSINE", "ID", "SCOPE", "TYPE", "TEXT"), rows))
        if not hits:
            click.echo(f"no memory matches {query!r}", err=True)

    @memories.command()
    @config_option
    @tenant_options
    @click.argument("text")
    @click.option("--scope", type=click.Choice(["profile", "event"]), default="event", show_default=True,
                  help="profile: what holds about the user (where they live, an allergy), shared by all their "
                       "friends and a candidate for every request's prompt; event: something that happened, "
                       "this friend's only, recalled when a request is about it.")
    @click.option("--type", "type_", default="semantic", show_default=True,
                  type=click.Choice(["episodic", "semantic", "trait", "goal", "preference", "inference"]),
                  help="What kind of memory it is (the console and the memory API filter by it).")
    def add(config_path: str, user: str, friend: str | None, text: str, scope: str, type_: str) -> None:
        """Store one memory."""
        from gateway.memory.records import NewMemory

        config = load(config_path)
        tenant = _tenant(user, default_friend(config, user, friend))
        new = NewMemory(scope=scope, type=type_, text=text)
        click.echo(_run(config, lambda s, _: s.add(tenant, new)).model_dump_json())

    @memories.command()
    @config_option
    @tenant_options
    @click.argument("memory_id")
    def delete(config_path: str, user: str, friend: str | None, memory_id: str) -> None:
        """Erase one memory."""
        config = load(config_path)
        tenant = _tenant(user, default_friend(config, user, friend))
        _run(config, lambda s, _: s.delete(tenant, memory_id))
        click.echo(f"deleted {memory_id}")

    @memories.command()
    @config_option
    @click.option("--user", required=True, help="user_id.")
    @click.option("--out", type=click.File("w"), default="-", help="JSONL file (default stdout).")
    def export(config_path: str, user: str, out: Any) -> None:
        """Every memory of a user (all friends) as JSONL."""
        from gateway.memory.maintenance import record_to_jsonl

        async def action(store: Any, _: Any) -> int:
            count = 0
            async for record in store.export_user(user):
                out.write(record_to_jsonl(record))
                count += 1
            return count

        count = _run(config_path, action)
        click.echo(f"exported {count} records", err=True)

    @memories.command("import")
    @config_option
    @click.argument("path", type=click.File("rb"))
    def import_(config_path: str, path: Any) -> None:
        """Store records from JSONL (ids and times kept, re-embedded)."""
        from gateway.api.admin.users import parse_jsonl

        records = parse_jsonl(path.read())
        click.echo(f"imported {_run(config_path, lambda s, _: s.import_records(records))} records")

    @memories.command()
    @config_option
    @click.option("--user", required=True, help="user_id.")
    @click.confirmation_option(prompt="Erase every memory of this user?")
    def forget(config_path: str, user: str) -> None:
        """Erase every memory of a user and discard their pending memorization jobs."""
        config = load(config_path)

        async def go(url: str) -> int:
            async with composed(config, url, lazy_embedder=True, warn_upstream=False) as gateway:
                return await gateway.forget_user(user)

        with redis_url_for(config) as url:
            try:
                deleted = asyncio.run(go(url))
            except Exception as exc:  # the CLI boundary: one readable line, exit 1
                raise _fail(exc) from None
        click.echo(f"forgot {user}: {deleted} records erased")

    @memories.command()
    @config_option
    def reembed(config_path: str) -> None:
        """Re-embed every memory with the configured embedding model (after a change)."""
        count = _run(config_path, lambda s, _: s.reembed(), check_model=False, lazy=False)
        click.echo(f"re-embedded {count} records")

