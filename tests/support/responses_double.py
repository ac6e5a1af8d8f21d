"""A stateful Responses upstream: a reply policy for :class:`~tests.support.upstream_double.UpstreamDouble`
(``upstream.default = StoredResponses()``) that keeps what it created, as the API does
with ``store: true``.

``POST /v1/responses`` creates a response with a fresh id (the recorded ``responses_text``
fixture, its id replaced, byte for byte otherwise; streamed when asked), and refuses an
unknown ``previous_response_id``, ``conversation`` (made with
:meth:`StoredResponses.new_conversation`, as the operator would at the Conversations API)
or input item ``id`` (an ``item_reference``, or a replayed item such as a reasoning item,
which the API looks up with ``store: true``; known: an item of a stored response's output
or input) with the API's 404; each response's output item gets a fresh id too. ``GET /v1/responses/{id}``,
``GET .../input_items``, ``POST .../cancel`` and ``DELETE /v1/responses/{id}`` act on the
stored ones, with the API's 404 for an unknown id. Any other path is a 404 too, and
:attr:`StoredResponses.strays` lists it.

A ``code_interpreter`` tool makes the response's output start with a
``code_interpreter_call`` item (``ci_<hex>``) run in the tool's ``container``: a new
``cntr_<hex>`` for ``{"type": "auto"}``, else the named id, which must be one the double
made (:attr:`StoredResponses.containers`, or :meth:`StoredResponses.new_container` as the
operator would at ``/v1/containers``; else the API's 404). Streamed, the item's
``output_item.added`` / ``.done`` events come first (the recorded events after it get
``output_index`` + 1, every event its new ``sequence_number``).
"""

from __future__ import annotations

import json
from typing import Any

from tests.support.upstream_double import JSONReply, Recorded, SSEReply, fixture, fixture_json

__all__ = ["StoredResponses", "not_found", "own_items", "own_response"]

FIXTURE_ID = json.loads(fixture_json("responses_text"))["id"]
FIXTURE_ITEM_ID = json.loads(fixture_json("responses_text"))["output"][0]["id"]


def not_found(rid: str) -> dict[str, Any]:
    """The API's body for an unknown stored response."""
    return {"error": {"message": f"Response with id '{rid}' not found.", "type": "invalid_request_error",
                      "param": None, "code": None}}


class StoredResponses:
    """See module docstring."""

    def __init__(self) -> None:
        self.stored: dict[str, dict[str, Any]] = {}
        self.inputs: dict[str, list[dict[str, Any]]] = {}
        self.strays: list[str] = []
        self.conversations: set[str] = set()
        self.containers: set[str] = set()
        #: non-stream replies start with a reasoning item (``rs_<the response's hex>``)
        self.reasoning = False
        self._count = 0

    def new_conversation(self) -> str:
        self._count += 1
        conv = f"conv_{self._count:048x}"
        self.conversations.add(conv)
        return conv

    def new_container(self) -> str:
        self._count += 1
        container = f"cntr_{self._count:048x}"
        self.containers.add(container)
        return container

    def _container(self, request: dict[str, Any]) -> tuple[str | None, dict[str, Any] | None]:
        """The container a ``code_interpreter`` tool of ``request`` runs in (made now for
        ``{"type": "auto"}``), or the API's error for an unknown one; ``(None, None)``
        without such a tool."""
        for i, tool in enumerate(request.get("tools") or []):
            if isinstance(tool, dict) and tool.get("type") == "code_interpreter":
                container = tool.get("container")
                if isinstance(container, dict):
                    return self.new_container(), None
                if container not in self.containers:
                    return None, {"message": f"Container with id '{container}' not found.",
                                  "type": "invalid_request_error", "param": f"tools[{i}].container", "code": None}
                return container, None
        return None, None

    def item_ids(self) -> set[str]:
        """Every item id a stored response holds (output and input)."""
        return {item["id"] for rid, body in self.stored.items()
                for item in [*body["output"], *self.inputs[rid]] if "id" in item}

    @staticmethod
    def item_id(rid: str) -> str:
        return "msg_" + rid.removeprefix("resp_")

    def create(self, request: dict[str, Any], container: str | None = None) -> str:
        self._count += 1
        rid = f"resp_{self._count:048x}"
        body = json.loads(fixture_json("responses_text"))
        body.update(id=rid, previous_response_id=request.get("previous_response_id"),
                    instructions=request.get("instructions"))
        body["output"][0]["id"] = self.item_id(rid)
        if container is not None:
            body["output"].insert(0, {"id": "ci_" + rid.removeprefix("resp_"), "type": "code_interpreter_call",
                                      "status": "completed", "code": "print(6 * 7)", "container_id": container,
                                      "outputs": [{"type": "logs", "logs": "42"}]})
        if self.reasoning and not request.get("stream"):
            body["output"].insert(0, {"id": "rs_" + rid.removeprefix("resp_"), "type": "reasoning", "summary": []})
        self.stored[rid] = body
        text = request.get("input")
        self.inputs[rid] = [{"id": f"msg_in{self._count}", "type": "message", "role": "user", "status": "completed",
                             "content": [{"type": "input_text", "text": text if isinstance(text, str) else "items"}]}]
        return rid

    def _stream_with_call(self, rid: str) -> bytes:
        recorded = fixture("responses_text").replace(FIXTURE_ITEM_ID.encode(), self.item_id(rid).encode())
        return stream_events(self.stored[rid], recorded)

    def _missing(self, request: dict[str, Any]) -> dict[str, Any] | None:
        """The API's error for an unknown conversation or item reference, or None."""
        conversation = request.get("conversation")
        conv = conversation.get("id") if isinstance(conversation, dict) else conversation
        if conv is not None and conv not in self.conversations:
            return {"message": f"Conversation with id '{conv}' not found.", "type": "invalid_request_error",
                    "param": "conversation", "code": None}
        items = request.get("input")
        known = self.item_ids() if isinstance(items, list) else set()
        for i, item in enumerate(items if isinstance(items, list) else []):
            if isinstance(item, dict) and "id" in item and item["id"] not in known:
                return {"message": f"Item with id '{item.get('id')}' not found.", "type": "invalid_request_error",
                        "param": f"input[{i}]", "code": None}
        return None

    def __call__(self, rec: Recorded) -> JSONReply | SSEReply:
        parts = rec.path.split("/")
        if rec.path == "/v1/responses" and rec.method == "POST":
            request = rec.json or {}
            previous = request.get("previous_response_id")
            if previous is not None and previous not in self.stored:
                return JSONReply({"error": {"message": f"Previous response with id '{previous}' not found.",
                                            "type": "invalid_request_error", "param": "previous_response_id",
                                            "code": "previous_response_not_found"}}, status=404)
            missing = self._missing(request)
            if missing is not None:
                return JSONReply({"error": missing}, status=404)
            container, error = self._container(request)
            if error is not None:
                return JSONReply({"error": error}, status=404)
            rid = self.create(request, container)
            if request.get("stream") and container is not None:
                return SSEReply(self._stream_with_call(rid))
            if request.get("stream"):
                return SSEReply(fixture("responses_text").replace(FIXTURE_ID.encode(), rid.encode())
                                .replace(FIXTURE_ITEM_ID.encode(), self.item_id(rid).encode()))
            return JSONReply(self.stored[rid])
        if len(parts) in (4, 5) and parts[:3] == ["", "v1", "responses"]:
            rid = parts[3]
            if rid not in self.stored:
                return JSONReply(not_found(rid), status=404)
            tail = parts[4] if len(parts) == 5 else ""
            if tail == "" and rec.method == "GET":
                return JSONReply(self.stored[rid])
            if tail == "" and rec.method == "DELETE":
                del self.stored[rid]
                return JSONReply({"id": rid, "object": "response", "deleted": True})
            if tail == "input_items" and rec.method == "GET":
                items = self.inputs[rid]
                return JSONReply({"object": "list", "data": items, "first_id": items[0]["id"],
                                  "last_id": items[-1]["id"], "has_more": False})
            if tail == "cancel" and rec.method == "POST":
                self.stored[rid] = {**self.stored[rid], "status": "cancelled", "background": True}
                return JSONReply(self.stored[rid])
        self.strays.append(f"{rec.method} {rec.path}")
        return JSONReply({"error": {"message": f"Invalid URL ({rec.method} {rec.path})", "type": "invalid_request_error",
                                    "param": None, "code": None}}, status=404)


def _sse(name: str, data: dict[str, Any]) -> bytes:
    return f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()


def _events(raw: bytes) -> list[dict[str, Any]]:
    return [json.loads(line[6:]) for line in raw.decode().splitlines() if line.startswith("data: ")]


def stream_events(body: dict[str, Any], recorded: bytes) -> bytes:
    """``recorded`` (a single-message stream) with ``body["output"][0]`` (a tool call item)
    added and done before it, the recorded items shifted one place, ``sequence_number``
    renumbered and the final event's response replaced by ``body``."""
    events = _events(recorded)
    call = body["output"][0]
    out = [*events[:2], {"type": "response.output_item.added", "output_index": 0, "item": call},
           {"type": "response.output_item.done", "output_index": 0, "item": call}, *events[2:]]
    chunks = []
    for n, event in enumerate(out):
        event = {**event, "sequence_number": n}
        if isinstance(event.get("output_index"), int) and n not in (2, 3):
            event["output_index"] += 1
        if event["type"] == "response.completed":
            event["response"] = body
        elif isinstance(event.get("response"), dict):
            event["response"] = {**event["response"], "id": body["id"]}
        chunks.append(_sse(event["type"], event))
    return b"".join(chunks)


def own_response(gw: Any, rid: str, user_id: str, friend_id: str) -> None:
    """Record ``rid`` as created by ``(user_id, friend_id)`` in ``gw``'s Redis, as the
    gateway does when a create returns it (for tests whose upstream script names fixed
    ids such as ``resp_prev``)."""
    import redis

    with redis.Redis.from_url(gw.config.memory.redis_url) as client:
        client.set(f"{gw.config.memory.key_prefix}:responses:owner:{rid}",
                   json.dumps({"user": user_id, "friend": friend_id, "from": None}), ex=3600)


def own_items(gw: Any, item_ids: list[str], user_id: str, friend_id: str) -> None:
    """Record ``item_ids`` as items of ``(user_id, friend_id)`` in ``gw``'s Redis, as the
    gateway does for the output items of a response it relays (for tests whose input
    replays items with fixed ids such as ``rs_1``)."""
    import redis

    with redis.Redis.from_url(gw.config.memory.redis_url) as client:
        for item_id in item_ids:
            client.set(f"{gw.config.memory.key_prefix}:responses:item:{item_id}",
                       json.dumps({"user": user_id, "friend": friend_id}), ex=3600)
