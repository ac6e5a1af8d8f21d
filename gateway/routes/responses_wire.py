"""The Responses API (``POST /v1/responses``) as the plugin chain sees it, and back, sans-IO.

Plugins read and rewrite a chat-shaped :class:`~gateway.proxy.wire.ChatRequest`; a
Responses request (OpenAI API reference, "Create a model response") is mapped to one
(:func:`chain_view`) and the chain's edits are mapped back (:func:`apply_edits`), so
plugins stay unaware of the API the client speaks.

The view (``ChatRequest``):

- ``instructions`` (a string) is the first message, ``role: system``;
- ``input`` as a string is one user message; as items: ``message`` items (``type``
  omitted or ``"message"``; roles user, assistant, system, developer) keep their role and
  their content (a string, or parts where ``input_text`` / ``output_text`` become chat
  ``text`` parts and other parts, images and files, stay as they are); consecutive
  ``function_call`` items become one assistant message with ``tool_calls``; each
  ``function_call_output`` a ``tool`` message. Other items (reasoning, item references,
  built-in tool calls) have no chat form: they travel with the next message of the view
  (the last one when none follows), kept or dropped with it;
- function tools (``{"type": "function", "name", ...}``) in the chat form
  (``{"type": "function", "function": {...}}``), other tools as they are;
  ``tool_choice``, ``user``, ``metadata``, ``stream`` as sent; ``max_output_tokens`` as
  ``max_completion_tokens``; a ``conversation`` id (string or ``{"id"}``) as
  ``metadata.conversation_id`` when the client gave none (the memorization conversation).

Mapping back (only when the chain changed the request; otherwise the client's bytes go):

- the injected system text (``call.injection``, memories and personalization) is
  appended to ``instructions`` after a blank line (``instructions`` when the client sent
  none): the client's instructions stay a byte-identical prefix, and with
  ``previous_response_id`` they are not carried to the next response (API reference), so
  memories never pile up across turns. Either placement of ``hybrid_injection`` lands
  there;
- the view's messages that the chain kept go back as the client's own items, byte for
  byte in order; messages it added (a spliced ``recall_memory`` exchange, world-book
  entries at a depth) become items (``message``, ``function_call``,
  ``function_call_output``); messages it dropped (token budget) drop their items;
- tools it added become Responses function tools with ``strict: false`` (the gateway's
  tool schemas have optional fields, which strict mode refuses).

:func:`check_request` is the gateway's own validation of the fields it reads: a wrong
type is a 400 naming the field (``input[2].content``), never a 500 and never a silent
pass-through. Linear in the number of items and parts.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from gateway.chain.injection import Injection, appended
from gateway.proxy.assembly import AssembledChoice, AssembledReply
from gateway.proxy.wire import ChatRequest
from gateway.runtime.errors import InvalidRequest
from gateway.runtime.json_input import json_type

__all__ = [
    "CLIENT_CALL_TYPES",
    "ChainView",
    "ResponsesAssembler",
    "apply_edits",
    "chain_view",
    "check_request",
    "container_ids",
    "dumps",
    "function_calls",
    "input_items",
    "item_type",
    "output_of",
    "referenced_items",
    "referenced_resources",
    "reply_from_response",
]

MESSAGE_ROLES = ("user", "assistant", "system", "developer")
#: Output items the client must act on (its own tools): a round that has one is final.
CLIENT_CALL_TYPES = frozenset({
    "function_call", "custom_tool_call", "computer_call", "local_shell_call", "shell_call",
    "apply_patch_call", "mcp_approval_request",
})


def _bad(param: str, wanted: str, value: Any) -> InvalidRequest:
    return InvalidRequest(f"{param}: must be {wanted}, not {json_type(value)}", param=param)


def check_request(body: dict[str, Any]) -> None:
    """Type checks of the fields the gateway reads (``model`` is checked before).

    Raises:
        InvalidRequest: 400 naming the field in ``param``: ``input`` not a string or an
            array, an item not an object, a message ``role`` outside user / assistant /
            system / developer, a ``content`` not a string or an array of objects,
            ``function_call`` without string ``call_id`` / ``name`` / ``arguments``,
            ``function_call_output`` without string ``call_id`` or with an ``output``
            neither a string nor an array; ``instructions`` / ``previous_response_id`` /
            ``user`` not a string or null; ``conversation`` not a string, ``{"id": string}``
            or null; an ``item_reference`` item without a string ``id``, any item's ``id`` or
            ``approval_request_id`` neither a string nor null; ``max_output_tokens`` not an integer or null; ``stream`` / ``store`` not a boolean or null; ``tools`` not
            an array of objects; ``metadata`` not an object or null.
    """
    for key in ("instructions", "previous_response_id", "user"):
        if body.get(key) is not None and not isinstance(body[key], str):
            raise _bad(key, "a string or null", body[key])
    for key in ("stream", "store"):
        if body.get(key) is not None and not isinstance(body[key], bool):
            raise _bad(key, "a boolean or null", body[key])
    tokens = body.get("max_output_tokens")
    if tokens is not None and (not isinstance(tokens, int) or isinstance(tokens, bool)):
        raise _bad("max_output_tokens", "an integer or null", tokens)
    if body.get("metadata") is not None and not isinstance(body["metadata"], dict):
        raise _bad("metadata", "an object or null", body["metadata"])
    conversation = body.get("conversation")
    if isinstance(conversation, dict):
        if not isinstance(conversation.get("id"), str):
            raise _bad("conversation.id", "a string", conversation.get("id"))
    elif conversation is not None and not isinstance(conversation, str):
        raise _bad("conversation", "a string, an object with an id, or null", conversation)
    tools = body.get("tools")
    if tools is not None:
        if not isinstance(tools, list):
            raise _bad("tools", "an array", tools)
        for i, tool in enumerate(tools):
            if not isinstance(tool, dict):
                raise _bad(f"tools[{i}]", "an object", tool)
    items = body.get("input")
    if items is None or isinstance(items, str):
        return
    if not isinstance(items, list):
        raise _bad("input", "a string or an array of input items", items)
    for i, item in enumerate(items):
        _check_item(item, f"input[{i}]")


def item_type(item: dict[str, Any]) -> Any:
    """An input item's ``type``; when it has none, ``"item_reference"`` for an item with
    an ``id`` and no ``role`` (the API's ``ItemReference`` has an optional ``type``), else
    ``"message"`` (an easy input message)."""
    kind = item.get("type")
    if kind is not None:
        return kind
    return "item_reference" if "id" in item and "role" not in item else "message"


#: Input item fields that name a stored item the upstream looks up (OpenAI API reference,
#: input items: any item's ``id``; ``approval_request_id`` of an ``mcp_approval_response``
#: or replayed ``mcp_call``).
ITEM_ID_FIELDS = ("id", "approval_request_id")


def referenced_items(items: list[Any]) -> list[tuple[str, str]]:
    """``(item id, param)`` of every stored item a checked ``input`` names
    (:data:`ITEM_ID_FIELDS`), in order: ``("rs_1", "input[3].id")``."""
    return [(item[name], f"input[{i}].{name}") for i, item in enumerate(items) if isinstance(item, dict)
            for name in ITEM_ID_FIELDS if isinstance(item.get(name), str)]


#: The kinds of upstream resources a create names by id (the keys of
#: ``upstream.responses_shared_ids``), with the noun a refusal uses.
RESOURCE_NOUNS = {"containers": "Container", "vector_stores": "Vector store", "prompts": "Prompt", "files": "File"}


def _id_list(value: Any, at: str, kind: str, out: list[tuple[str, str, str]]) -> None:
    if value is None:
        return
    if not isinstance(value, list):
        raise _bad(at, "an array of strings", value)
    for k, one in enumerate(value):
        if not isinstance(one, str):
            raise _bad(f"{at}[{k}]", "a string", one)
        out.append((kind, one, f"{at}[{k}]"))


def _id(value: Any, at: str, kind: str, out: list[tuple[str, str, str]]) -> None:
    if value is None:
        return
    if not isinstance(value, str):
        raise _bad(at, "a string or null", value)
    out.append((kind, value, at))


def _container(container: Any, at: str, out: list[tuple[str, str, str]], *, named: bool = True) -> None:
    """A ``container`` (code interpreter: an id when ``named``) or an ``environment``
    (shell; ``named=False``: a computer tool's ``environment`` is a string that names no
    resource): an object with ``container_id`` (``container_reference``) or ``file_ids``
    (``auto`` / ``container_auto``: a new container with those files)."""
    if isinstance(container, str) and named:
        out.append(("containers", container, at))
    elif isinstance(container, dict):
        _id(container.get("container_id"), f"{at}.container_id", "containers", out)
        _id_list(container.get("file_ids"), f"{at}.file_ids", "files", out)
    elif container is not None and named:
        raise _bad(at, "a string or an object", container)


def _tools(tools: Any, at: str, out: list[tuple[str, str, str]]) -> None:
    """Resource ids of a ``tools`` array (of the request, or of an ``additional_tools``
    / ``tool_search_output`` input item): ``container`` of ``code_interpreter``,
    ``environment`` of ``shell``, ``vector_store_ids`` of ``file_search``,
    ``input_image_mask.file_id`` of ``image_generation`` (OpenAI SDK ``ToolParam``)."""
    if not isinstance(tools, list):
        return
    for i, tool in enumerate(tools):
        if not isinstance(tool, dict):
            continue
        here = f"{at}[{i}]"
        _container(tool.get("container"), f"{here}.container", out)
        _container(tool.get("environment"), f"{here}.environment", out, named=False)
        _id_list(tool.get("vector_store_ids"), f"{here}.vector_store_ids", "vector_stores", out)
        mask = tool.get("input_image_mask")
        if isinstance(mask, dict):
            _id(mask.get("file_id"), f"{here}.input_image_mask.file_id", "files", out)


def _parts(value: Any, at: str, out: list[tuple[str, str, str]]) -> None:
    """``file_id`` of each content part (``input_file``, ``input_image``, a computer
    call's screenshot) of ``value``, an array of parts or one part."""
    parts = value if isinstance(value, list) else [value] if isinstance(value, dict) else []
    for j, part in enumerate(parts):
        if isinstance(part, dict):
            _id(part.get("file_id"), f"{at}[{j}].file_id" if isinstance(value, list) else f"{at}.file_id",
                "files", out)


def referenced_resources(body: dict[str, Any]) -> list[tuple[str, str, str]]:
    """``(kind, id, param)`` of every upstream resource a create names by id, kinds as
    in :data:`RESOURCE_NOUNS`, in request order: the tools' containers, vector stores
    and files (:func:`_tools`, also of input items carrying ``tools``); ``prompt.id``
    and each ``prompt.variables`` value's ``file_id``; each input item's content or
    output parts' ``file_id``, and the ``container_id`` / ``environment`` of a replayed
    code interpreter or shell call. Linear in the request.

    Raises:
        InvalidRequest: one of these fields has the wrong type (400 naming it):
            ``prompt`` not an object or null, ``prompt.id`` not a string, an id not a
            string (or null where the API allows it), an id list not an array.
    """
    out: list[tuple[str, str, str]] = []
    _tools(body.get("tools"), "tools", out)
    prompt = body.get("prompt")
    if isinstance(prompt, dict):
        if not isinstance(prompt.get("id"), str):
            raise _bad("prompt.id", "a string", prompt.get("id"))
        out.append(("prompts", prompt["id"], "prompt.id"))
        variables = prompt.get("variables")
        if isinstance(variables, dict):
            for name, value in variables.items():
                if isinstance(value, dict):
                    _id(value.get("file_id"), f"prompt.variables.{name}.file_id", "files", out)
    elif prompt is not None:
        raise _bad("prompt", "an object or null", prompt)
    items = body.get("input")
    for i, item in enumerate(items if isinstance(items, list) else []):
        if not isinstance(item, dict):
            continue
        at = f"input[{i}]"
        for name in ("content", "output"):
            _parts(item.get(name), f"{at}.{name}", out)
        _id(item.get("container_id"), f"{at}.container_id", "containers", out)
        _container(item.get("environment"), f"{at}.environment", out, named=False)
        _tools(item.get("tools"), f"{at}.tools", out)
    return out


def container_ids(item: Any) -> list[str]:
    """The container ids an output item names: a ``code_interpreter_call``'s
    ``container_id`` (a ``container: {"type": "auto"}`` tool makes the container that
    call ran in) and a ``shell_call``'s ``environment.container_id``."""
    if not isinstance(item, dict):
        return []
    found = [item["container_id"]] if isinstance(item.get("container_id"), str) else []
    environment = item.get("environment")
    if isinstance(environment, dict) and isinstance(environment.get("container_id"), str):
        found.append(environment["container_id"])
    return found


def _check_item(item: Any, at: str) -> None:
    if not isinstance(item, dict):
        raise _bad(at, "an object (an input item)", item)
    for name in ITEM_ID_FIELDS:
        if item.get(name) is not None and not isinstance(item[name], str):
            raise _bad(f"{at}.{name}", "a string or null", item[name])
    kind = item_type(item)
    if kind == "message":
        role = item.get("role")
        if role not in MESSAGE_ROLES:
            raise InvalidRequest(f"{at}.role: must be one of {', '.join(MESSAGE_ROLES)}", param=f"{at}.role")
        content = item.get("content")
        if isinstance(content, list):
            for j, part in enumerate(content):
                if not isinstance(part, dict):
                    raise _bad(f"{at}.content[{j}]", "an object (a content part)", part)
        elif not isinstance(content, str):
            raise _bad(f"{at}.content", "a string or an array of content parts", content)
    elif kind == "function_call":
        for key in ("call_id", "name", "arguments"):
            if not isinstance(item.get(key), str):
                raise _bad(f"{at}.{key}", "a string", item.get(key))
    elif kind == "function_call_output":
        if not isinstance(item.get("call_id"), str):
            raise _bad(f"{at}.call_id", "a string", item.get("call_id"))
        if not isinstance(item.get("output"), (str, list)):
            raise _bad(f"{at}.output", "a string or an array of content parts", item.get("output"))
    elif kind == "item_reference":
        if not isinstance(item.get("id"), str):
            raise _bad(f"{at}.id", "a string", item.get("id"))
    elif not isinstance(kind, str):
        raise _bad(f"{at}.type", "a string", kind)


def input_items(body: dict[str, Any]) -> list[Any]:
    """``input`` as a list of items (a string is one user message; absent is none)."""
    items = body.get("input")
    if isinstance(items, str):
        return [{"role": "user", "content": items}]
    return list(items) if isinstance(items, list) else []


# -- the chain's view --------------------------------------------------------------------


def _chat_content(content: Any) -> Any:
    if not isinstance(content, list):
        return content
    return [
        {"type": "text", "text": part.get("text", "")} if part.get("type") in ("input_text", "output_text") else part
        for part in content
    ]


def _chat_tool(tool: dict[str, Any]) -> dict[str, Any]:
    if tool.get("type") != "function" or "function" in tool:
        return tool
    fn = {k: tool[k] for k in ("name", "description", "parameters", "strict") if k in tool}
    return {"type": "function", "function": fn}


def _output_text(output: Any) -> str:
    if isinstance(output, str):
        return output
    return "\n".join(p.get("text", "") for p in output if isinstance(p, dict) and isinstance(p.get("text"), str))


@dataclass
class ChainView:
    """A Responses request as the chain sees it, and where each message came from.

    Attributes:
        request: the chat-shaped view (what ``call.original`` holds).
        items: ``input`` as a list (:func:`input_items`).
        origins: per message of ``request.messages``: ``None`` for the instructions, else
            the indices in ``items`` it stands for (passengers included), in order.
        input_was_string: the client sent ``input`` as a string.
    """

    request: ChatRequest
    items: list[Any]
    origins: list[list[int] | None]
    input_was_string: bool

    def origin_of(self) -> dict[int, list[int] | None]:
        """``id(message) -> origin`` for the view's own message objects."""
        return {id(m): o for m, o in zip(self.request.messages, self.origins, strict=True)}


def chain_view(body: dict[str, Any]) -> ChainView:
    """The view of a checked body (:func:`check_request`); see the module docstring."""
    items = input_items(body)
    messages: list[dict[str, Any]] = []
    origins: list[list[int] | None] = []
    instructions = body.get("instructions")
    if isinstance(instructions, str):
        messages.append({"role": "system", "content": instructions})
        origins.append(None)
    waiting: list[int] = []  # items without a chat form, travelling with the next message
    for i, item in enumerate(items):
        kind = item_type(item)
        if kind == "message":
            message: dict[str, Any] = {"role": item["role"], "content": _chat_content(item.get("content"))}
        elif kind == "function_call":
            call = {"id": item["call_id"], "type": "function",
                    "function": {"name": item["name"], "arguments": item["arguments"]}}
            last = messages[-1] if messages else None
            if last is not None and not waiting and last.get("tool_calls") and origins[-1] is not None \
                    and items[origins[-1][-1]].get("type") == "function_call":
                last["tool_calls"].append(call)
                origins[-1].append(i)
                continue
            message = {"role": "assistant", "content": None, "tool_calls": [call]}
        elif kind == "function_call_output":
            message = {"role": "tool", "tool_call_id": item["call_id"], "content": _output_text(item["output"])}
        else:
            waiting.append(i)
            continue
        messages.append(message)
        origins.append([*waiting, i])
        waiting = []
    if waiting:
        if origins and origins[-1] is not None:
            origins[-1].extend(waiting)
        else:  # nothing to travel with: an empty user message the chain reads as no text
            messages.append({"role": "user", "content": ""})
            origins.append(waiting)
    view: dict[str, Any] = {"model": body["model"], "messages": messages}
    if isinstance(body.get("tools"), list):
        view["tools"] = [_chat_tool(t) for t in body["tools"]]
    for key in ("tool_choice", "user", "stream"):
        if body.get(key) is not None:
            view[key] = body[key]
    if body.get("max_output_tokens") is not None:
        view["max_completion_tokens"] = body["max_output_tokens"]
    metadata = dict(body["metadata"]) if isinstance(body.get("metadata"), dict) else {}
    conversation = body.get("conversation")
    conversation_id = conversation.get("id") if isinstance(conversation, dict) else conversation
    if isinstance(conversation_id, str) and conversation_id and "conversation_id" not in metadata:
        metadata["conversation_id"] = conversation_id
    if metadata:
        view["metadata"] = metadata
    request = ChatRequest.model_validate(view)
    return ChainView(request, items, origins, isinstance(body.get("input"), str))


# -- the chain's edits, back ---------------------------------------------------------------


def _response_content(content: Any, role: str) -> Any:
    if not isinstance(content, list):
        return content
    text_type = "output_text" if role == "assistant" else "input_text"
    out = []
    for part in content:
        if isinstance(part, dict) and part.get("type") == "text":
            out.append({"type": text_type, "text": part.get("text", "")})
        else:
            out.append(part)
    return out


def _as_items(message: dict[str, Any]) -> list[dict[str, Any]]:
    """A chat message the chain added, as Responses input items."""
    role = message.get("role")
    if role == "tool":
        return [{"type": "function_call_output", "call_id": message.get("tool_call_id", ""),
                 "output": _output_text(message.get("content") or "")}]
    out: list[dict[str, Any]] = []
    content = message.get("content")
    if content:
        out.append({"type": "message", "role": role, "content": _response_content(content, str(role))})
    for call in message.get("tool_calls") or ():
        fn = call.get("function") or {}
        out.append({"type": "function_call", "call_id": call.get("id", ""), "name": fn.get("name", ""),
                    "arguments": fn.get("arguments", "")})
    return out


def _responses_tool(tool: dict[str, Any]) -> dict[str, Any]:
    fn = tool.get("function")
    if tool.get("type") != "function" or not isinstance(fn, dict):
        return tool
    return {"type": "function", **fn, "strict": fn.get("strict", False)}


def apply_edits(body: dict[str, Any], view: ChainView, result: ChatRequest, injection: Injection) -> dict[str, Any] | None:
    """The Responses body to send for the chain's ``result`` (module docstring); None when
    nothing changed (the client's bytes go)."""
    if result is view.request:
        return None
    origin = view.origin_of()
    text = injection.system_text()
    first_system = next((m for m, o in zip(view.request.messages, view.origins, strict=True)
                         if m.get("role") in ("system", "developer")), None)
    appended_first = appended(first_system, text) if first_system is not None and text else None
    kept: list[int] = []
    added: list[dict[str, Any]] = []
    out_items: list[Any] = []
    for message in result.messages:
        source = origin.get(id(message), ...)
        if source is ... and text and message == appended_first and first_system is not None:
            source = origin[id(first_system)]  # append placement: the client's own message
        if source is None:
            continue  # the instructions: rendered below
        if source is not ...:
            kept.extend(source)
            out_items.extend(view.items[i] for i in source)
            continue
        if text and message.get("role") in ("system", "developer") and message.get("content") == text:
            continue  # separate placement: the injected system message
        items = _as_items(message)
        added.extend(items)
        out_items.extend(items)
    out = dict(body)
    if text:
        instructions = body.get("instructions")
        out["instructions"] = f"{instructions}\n\n{text}" if isinstance(instructions, str) and instructions else text
    if added or kept != list(range(len(view.items))):
        out["input"] = out_items
    view_tools = {id(t) for t in view.request.tools or ()}
    new_tools = [_responses_tool(t) for t in result.tools or () if id(t) not in view_tools]
    if new_tools:
        out["tools"] = [*(body.get("tools") or []), *new_tools]
    return out


# -- the reply -------------------------------------------------------------------------------


def output_of(response: dict[str, Any]) -> list[Any]:
    """A response's ``output`` list ([] when missing or not a list)."""
    output = response.get("output")
    return output if isinstance(output, list) else []


def function_calls(output: Sequence[Any]) -> list[dict[str, Any]]:
    """The ``function_call`` items of a response's ``output``."""
    return [item for item in output if isinstance(item, dict) and item.get("type") == "function_call"]


def _message_text(item: dict[str, Any]) -> str:
    return "".join(
        part.get("text", "") for part in item.get("content") or ()
        if isinstance(part, dict) and part.get("type") == "output_text" and isinstance(part.get("text"), str)
    )


def reply_from_response(
    response: dict[str, Any], *, stream: bool, cancelled: bool = False, error: dict[str, Any] | None = None,
    max_chars: int = 1_000_000,
) -> AssembledReply:
    """An :class:`AssembledReply` from a Responses ``response`` object: the text of its
    assistant ``message`` items (``output_text`` parts, capped at ``max_chars``), its
    ``function_call`` items as chat ``tool_calls``, ``finish_reason`` ``tool_calls`` /
    ``length`` (status ``incomplete``) / ``stop``, and its ``usage`` (Responses keys:
    ``input_tokens``, ``output_tokens``)."""
    output = output_of(response)
    text = "".join(_message_text(i) for i in output if isinstance(i, dict) and i.get("type") == "message")
    truncated = len(text) > max_chars
    calls = tuple(
        {"id": c.get("call_id"), "type": "function", "function": {"name": c.get("name", ""), "arguments": c.get("arguments", "")}}
        for c in function_calls(output)
    )
    finish = "tool_calls" if calls else "length" if response.get("status") == "incomplete" else "stop"
    choice = AssembledChoice(index=0, content=text[:max_chars], tool_calls=calls, finish_reason=finish)
    created = response.get("created_at")
    return AssembledReply(
        id=response.get("id"), model=response.get("model"),
        created=int(created) if isinstance(created, (int, float)) else None,
        choices=(choice,), usage=response.get("usage") if isinstance(response.get("usage"), dict) else None,
        cancelled=cancelled, error=error, stream=stream, truncated=truncated,
    )


class ResponsesAssembler:
    """Folds Responses stream events (parsed ``data``) into an :class:`AssembledReply`:
    the terminal event's ``response`` when it came (``response.completed``,
    ``.incomplete``, ``.failed``), else what the ``response.output_text.delta`` events
    carried so far (a cancelled or broken stream). Text capped at ``max_chars``."""

    TERMINAL = frozenset({"response.completed", "response.incomplete", "response.failed"})

    def __init__(self, max_chars: int = 1_000_000) -> None:
        self._max = max_chars
        self._final: dict[str, Any] | None = None
        self._meta: dict[str, Any] = {}
        self._text: list[str] = []
        self._size = 0
        self._truncated = False

    def add(self, data: dict[str, Any]) -> None:
        kind = data.get("type")
        response = data.get("response")
        if isinstance(response, dict):
            if kind in self.TERMINAL:
                self._final = response
            elif not self._meta:
                self._meta = response
        elif kind == "response.output_text.delta" and isinstance(data.get("delta"), str):
            delta = data["delta"]
            if self._size + len(delta) > self._max:
                delta = delta[: max(0, self._max - self._size)]
                self._truncated = True
            self._text.append(delta)
            self._size += len(delta)

    def build(self, *, cancelled: bool = False, error: dict[str, Any] | None = None) -> AssembledReply:
        if self._final is not None:
            return reply_from_response(self._final, stream=True, cancelled=cancelled, error=error, max_chars=self._max)
        partial = {**self._meta, "output": [
            {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "".join(self._text)}]}
        ]}
        reply = reply_from_response(partial, stream=True, cancelled=cancelled, error=error, max_chars=self._max)
        return replace(reply, truncated=True) if self._truncated else reply


def dumps(value: Any) -> bytes:
    """Compact JSON as the gateway writes bodies it changed (UTF-8, not ASCII-escaped)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()
