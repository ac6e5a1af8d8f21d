"""Group chats: each speaker is an end user inside the key's namespace.

A **group key** (``clients[].group: true`` with ``service: true``, or ``memgate keys
create --service --group``) serves a bot in group chats, where one request carries many
people's messages. For such a key the tenant is not the key's user but the **speaker**:

- every ``role: user`` message's ``name`` is its speaker; the speaker's user id is
  ``<namespace>/<name>`` (:func:`speaker_user_id`), where the namespace is the key's
  ``user_id`` (or the id its ``X-Memgate-User`` header names; the body ``user`` is not an
  identity for a group key: it is the group, see :func:`gateway.memorization.capture.group_conversation_id`);
- the request runs as the speaker of the **last** user message (:func:`resolve_speaker`):
  recall, personalization, world-book user books, everything that reads
  ``call.principal``, so plugins need no group rule of their own;
- memorization files each turn under its own speaker (:func:`attribute`): a user message
  under its ``name``, an assistant message (and the new reply) under the speaker of the
  nearest user message before it, the one it answers. Nothing of one speaker is ever
  stored in, or recalled from, another speaker's tenant.

Since the id does not name the group, a speaker's memories (profile and events alike)
follow them into every group the same key (namespace) and friend serve; profile
memories also reach the namespace's other friends (seed 002 scopes, unchanged).

Name rules (:func:`check_speaker_name`), the OpenAI ``name`` pattern
(``^[a-zA-Z0-9_-]+$``, at most 64 characters, enforced by OpenAI's API for some models)
is *not* enforced here; memgate accepts any text that is a valid id:

- normalized to Unicode NFC first (``e`` + U+0301 and ``é`` are one speaker, as they are
  one text by the Unicode standard); no case folding and no compatibility (NFKC) folding:
  ``Alice`` / ``alice`` and ``Ａ`` / ``A`` are different speakers, as platform user ids are;
- then 1-64 characters, no control characters, no leading or trailing whitespace (the
  tenant id rules of :func:`gateway.memory.records.tenant_id_problem` plus the length);
- anything else is kept and made unambiguous by escaping ``%`` and ``/`` in the name
  (``a/b`` -> ``a%2Fb``): the part after the namespace's last ``/`` never contains a ``/``,
  so two different (namespace, name) pairs never give one id, and a name can never climb
  out of its namespace (``../x`` is the speaker ``<ns>/..%2Fx``).

Bad names are a 400 naming ``messages[i].name``; nothing goes upstream.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from gateway.memory.records import MAX_TENANT_ID_CHARS, tenant_id_problem
from gateway.runtime.errors import InvalidRequest
from gateway.runtime.principal import Principal

__all__ = ["MAX_SPEAKER_NAME_CHARS", "attribute", "check_speaker_name", "resolve_speaker", "speaker_user_id"]

#: Longest speaker name, in characters after NFC: OpenAI's own ``name`` limit (64).
MAX_SPEAKER_NAME_CHARS = 64


def check_speaker_name(value: object, param: str) -> str:
    """The speaker ``value`` names, NFC-normalized (see the module docstring for the rules).

    Raises:
        InvalidRequest: not a string, empty, longer than 64 characters, control
            characters, or leading/trailing whitespace (400, ``param`` named).
    """
    if not isinstance(value, str):
        raise InvalidRequest(f"{param}: a group key needs each speaker's name as a string", param=param)
    name = value if unicodedata.is_normalized("NFC", value) else unicodedata.normalize("NFC", value)
    problem = tenant_id_problem(name)
    if problem is None and len(name) > MAX_SPEAKER_NAME_CHARS:
        problem = f"is longer than {MAX_SPEAKER_NAME_CHARS} characters"
    if problem is not None:
        raise InvalidRequest(f"{param}: the speaker's name {problem}", param=param)
    return name


def speaker_user_id(namespace: str, name: str, param: str = "name") -> str:
    """The user id of speaker ``name`` (already checked) in ``namespace``:
    ``namespace + "/" + name`` with ``%`` and ``/`` of the name percent-encoded.

    >>> speaker_user_id("bot", "a/b"), speaker_user_id("bot/a", "b")
    ('bot/a%2Fb', 'bot/a/b')

    Raises:
        InvalidRequest: the id would pass 256 characters (a long namespace; 400, ``param``).
    """
    user_id = namespace + "/" + name.replace("%", "%25").replace("/", "%2F")
    if len(user_id) > MAX_TENANT_ID_CHARS:
        raise InvalidRequest(
            f"{param}: the speaker's id {namespace!r}/<name> would be longer than "
            f"{MAX_TENANT_ID_CHARS} characters", param=param,
        )
    return user_id


def attribute(messages: Sequence[Any]) -> list[str | None]:
    """For each message, the speaker it is filed under: a user message's checked ``name``
    (None without one, or when it is JSON ``null``), an assistant message the speaker of the nearest user message
    before it, anything else None. Linear in the number of messages.

    Raises:
        InvalidRequest: a user message's ``name`` that :func:`check_speaker_name` rejects
            (``param``: ``messages[i].name``).
    """
    out: list[str | None] = []
    current: str | None = None
    for i, message in enumerate(messages):
        role = message.get("role") if isinstance(message, dict) else None
        if role == "user":
            name = message.get("name")
            current = None if name is None else check_speaker_name(name, f"messages[{i}].name")
            out.append(current)
        elif role == "assistant":
            out.append(current)
        else:
            out.append(None)
    return out


def resolve_speaker(principal: Principal, body: dict[str, Any]) -> Principal:
    """For a group key, the principal acting as the speaker of the last user message
    (``user_id`` = :func:`speaker_user_id`, ``namespace`` = the key's user); any other
    key is returned as is. Every user message's ``name`` is checked.

    Raises:
        InvalidRequest: no user message (``messages``), the last one without ``name``, or a
            name :func:`check_speaker_name` rejects (``messages[i].name``); 400.
    """
    if not principal.group:
        return principal
    messages = body.get("messages")
    if not isinstance(messages, list):
        raise InvalidRequest("messages: a group key's request needs a list of messages", param="messages")
    speakers = attribute(messages)
    last = next((i for i in range(len(messages) - 1, -1, -1)
                 if isinstance(messages[i], dict) and messages[i].get("role") == "user"), None)
    if last is None:
        raise InvalidRequest("messages: a group key's request needs a user message (the one answered)",
                             param="messages")
    name = speakers[last]
    param = f"messages[{last}].name"
    if name is None:
        raise InvalidRequest(f"{param}: a group key needs the speaker's name on the message answered",
                             param=param)
    namespace = principal.namespace or principal.user_id
    return replace(principal, user_id=speaker_user_id(namespace, name, param), namespace=namespace)
