"""``python -m bench irc-convert``: the Ubuntu IRC disentanglement files as the JSON
``python -m bench context`` reads.

Input: a directory of the corpus's ``<date>_<hour>.raw.txt`` + ``.annotation.txt`` pairs
(Kummerfeld et al., ACL 2019, CC BY 4.0; e.g. the repository's ``data/test``). Output:
a JSON list of channels in the format of ``../shared/data/irc/README.md``: the first
``--lines`` lines of each file (1,250: about 1,000 context lines, then the annotated
block up to the cut), each ``{"id": line number, "ts", "speaker", "text", "system",
"annotated", "parents", "starts_thread"}``.

Lines are split at ``\n`` only (a message may contain other characters ``str.splitlines``
splits at, such as form feeds, which would shift every later line number). ``[HH:MM]
<nick> text`` is a message, ``[HH:MM] * nick text`` an action by nick,
``=== ...`` (joins, quits, renames) a system line. Annotation lines ``a b -`` say line
``b`` replies to line ``a``; ``a == b`` starts a thread. Times have minute resolution and
no date: they are made non-decreasing in file order (a time earlier than the previous one
has wrapped: 12 hours on a 12-hour log, whose hours are all below 13, else 24); on a
12-hour log the first annotated line is put at the file name's hour on its date, a
24-hour log starts on the file's date (UTC assumed). An action is ``/me text``.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import click

_TIME = re.compile(r"^\[(\d\d):(\d\d)\] ")
_MESSAGE = re.compile(r"^<([^>]*)> ?(.*)$")
_ACTION = re.compile(r"^\s*\* (\S+) ?(.*)$")


def convert(raw: str, annotation: str, name: str, lines: int, annotated_from: int = 1000) -> dict[str, Any]:
    """One channel (module docstring). ``name`` is ``<YYYY-MM-DD>_<HH>``."""
    rows = [r.rstrip("\r") for r in raw.split("\n")][:lines]  # not splitlines(): some lines hold \x0c, \x85...
    parents: dict[int, list[int]] = {}
    starts: set[int] = set()
    marked: set[int] = set()
    for line in annotation.splitlines():
        parts = line.split()
        if len(parts) < 2:
            continue
        a, b = int(parts[0]), int(parts[1])
        marked.add(b)
        if a == b:
            starts.add(b)
        else:
            parents.setdefault(b, []).append(a)
    clock: list[int | None] = []
    for row in rows:
        m = _TIME.match(row)
        clock.append(int(m.group(1)) * 60 + int(m.group(2)) if m else None)
    twelve = all(c is None or c < 13 * 60 for c in clock)
    wrap = (12 if twelve else 24) * 60
    minutes: list[int] = []
    offset = 0
    last = None
    for c in clock:
        if c is None:
            minutes.append(minutes[-1] if minutes else 0)
            continue
        value = c + offset
        if last is not None and value < last:
            offset += wrap
            value += wrap
        minutes.append(value)
        last = value
    day, hour = name.split("_")
    anchor = datetime.fromisoformat(day).replace(tzinfo=UTC) + timedelta(hours=int(hour))
    if twelve:  # the file name's hour is the annotated block's
        anchor -= timedelta(minutes=minutes[min(annotated_from, len(minutes) - 1)])
    else:  # a 24-hour clock: the times as they are, from the file's date
        anchor -= timedelta(hours=int(hour))
    messages = []
    for i, row in enumerate(rows):
        body = _TIME.sub("", row, count=1)
        system = body.startswith("===")
        speaker, text = "", body
        if not system:
            m = _MESSAGE.match(body)
            action = _ACTION.match(body) if m is None else None
            if m:
                speaker, text = m.group(1), m.group(2)
            elif action:
                speaker, text = action.group(1), "/me " + action.group(2)
            else:
                system = True
        ts = anchor + timedelta(minutes=minutes[i])
        messages.append({
            "id": i, "ts": ts.strftime("%Y-%m-%dT%H:%M:00Z"), "speaker": speaker, "text": text, "system": system,
            "annotated": i in marked and i >= annotated_from, "parents": sorted(parents.get(i, [])),
            "starts_thread": (i in starts) if i >= annotated_from and i in marked else None,
        })
    return {"id": name, "date": name.split("_")[0], "split": "", "source": name + ".raw.txt",
            "annotated_from": annotated_from, "messages": messages}


@click.command("irc-convert")
@click.argument("source", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.argument("out", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--lines", default=1250, show_default=True, help="Lines kept per file (the first ones).")
@click.option("--split", default="test", show_default=True, help="Split name written in each channel.")
def command(source: Path, out: Path, lines: int, split: str) -> None:
    """Convert a directory of IRC disentanglement raw + annotation files to JSON."""
    channels = []
    for raw in sorted(source.glob("*.raw.txt")):
        name = raw.name[: -len(".raw.txt")]
        annotation = raw.with_name(name + ".annotation.txt")
        if not annotation.exists():
            continue
        channel = convert(raw.read_text(errors="replace"), annotation.read_text(), name, lines)
        channel["split"] = split
        channels.append(channel)
    out.write_text(json.dumps(channels, ensure_ascii=False))
    click.echo(f"{len(channels)} channels -> {out}")
