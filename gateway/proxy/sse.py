"""Sans-IO Server-Sent Events decoder that keeps each event's original bytes.

Fed bytes as they arrive from the upstream, :class:`SSEDecoder` returns complete events;
each :class:`SSEEvent` carries ``raw``, the exact bytes it was made of (lines and the
blank line that ends it), so a relay can forward events byte for byte while reading them.

Follows the WHATWG HTML "Server-sent events" parsing rules: lines end with CRLF, LF or
CR (a CR at the end of a read may be the first half of a CRLF, so it waits for the next
read); ``data`` lines are joined with LF; a single space after the colon is dropped;
lines starting with ``:`` are comments; an event is dispatched at a blank line.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ['SSEDecoder', 'SSEEvent']


@dataclass(frozen=True, slots=True)
class SSEEvent:
    """One event.

    Attributes:
        raw: the exact bytes of the event, including its terminating blank line (for the
            trailing bytes returned by :meth:`SSEDecoder.flush`, possibly unterminated).
        data: the joined ``data`` field, or None if the event had no ``data`` line
            (comments, keep-alives).
        event: the ``event`` field, or None.
        id: the ``id`` field, or None.
        complete: False only for unterminated trailing bytes at end of stream.
    """

    raw: bytes
    data: str | None = None
    event: str | None = None
    id: str | None = None
    complete: bool = True


class SSEDecoder:
    """Incremental decoder: ``feed(bytes) -> list[SSEEvent]``, then ``flush()`` at EOF."""

    __slots__ = ("_buf", "_data", "_event", "_id", "_scan")

    def __init__(self) -> None:
        self._buf = b""  # bytes of the current, unfinished event
        self._scan = 0  # offset in _buf of the first line not yet parsed
        self._data: list[str] | None = None
        self._event: str | None = None
        self._id: str | None = None

    def feed(self, chunk: bytes) -> list[SSEEvent]:
        """Decode ``chunk``; returns the events it completes (possibly none)."""
        return self._decode(chunk, final=False)

    def _decode(self, chunk: bytes, final: bool) -> list[SSEEvent]:
        buf = self._buf + chunk if self._buf else chunk
        events: list[SSEEvent] = []
        pos = self._scan
        start = 0
        length = len(buf)
        while pos < length:
            lf = buf.find(b"\n", pos)
            cr = buf.find(b"\r", pos, lf if lf >= 0 else length)
            if cr >= 0:
                if cr + 1 == length and not final:
                    break  # lone CR at the end: maybe the first half of CRLF
                end, nxt = cr, cr + 2 if cr + 1 < length and buf[cr + 1] == 10 else cr + 1
            elif lf >= 0:
                end, nxt = lf, lf + 1
            else:
                break
            line = buf[pos:end]
            pos = nxt
            if line:
                self._field(line)
                continue
            events.append(
                SSEEvent(
                    raw=buf[start:pos],
                    data="\n".join(self._data) if self._data is not None else None,
                    event=self._event,
                    id=self._id,
                )
            )
            start = pos
            self._data, self._event, self._id = None, None, None
        # keep the unconsumed tail: the current event's bytes from `start`
        self._buf = buf[start:]
        self._scan = pos - start
        return events

    def _field(self, line: bytes) -> None:
        if line[:1] == b":":
            return
        name, sep, value = line.partition(b":")
        if sep and value[:1] == b" ":
            value = value[1:]
        text = value.decode("utf-8", errors="replace")
        if name == b"data":
            if self._data is None:
                self._data = [text]
            else:
                self._data.append(text)
        elif name == b"event":
            self._event = text
        elif name == b"id":
            self._id = text

    def flush(self) -> list[SSEEvent]:
        """End of stream: events ended by a final lone CR, then unterminated trailing
        bytes, if any, as one incomplete event."""
        events = self._decode(b"", final=True) if self._buf else []
        tail, self._buf, self._scan = self._buf, b"", 0
        self._data, self._event, self._id = None, None, None
        if tail:
            events.append(SSEEvent(raw=tail, complete=False))
        return events
