"""Per-partition keyword postings in Redis for the vectorset backend's BM25 ranking.

One sorted set per (partition, term) (:meth:`KeySpace.postings`): member = record id,
score = the BM25 term-frequency weight (:func:`ranking.bm25_term_weight`). Everything
stays under the user's hash tag, so tenancy is by key here too.

A query is scored inside Redis by one read-only Lua script (:data:`BM25_SCRIPT`, run with
``EVALSHA``): for each partition it reads the partition size (ZCARD of its listing), each
term's document frequency (ZCARD) and its best :data:`POSTINGS_PER_TERM` postings, sums
``idf * weight`` per record (idf as :func:`ranking.bm25_idf`) and returns only the best
``count`` ids. Before, the postings (~1,600 per 4-term query at 100k memories) travelled
to Python and were summed there, the largest cost of a hybrid search at that size. Ties
go to the larger id (the newer record, ids start with their creation time). Queue the
script on a pipeline with :meth:`KeywordIndex.queue_search` so it shares a round trip
with the vector query; a server that lost its script cache (restart) answers
``NOSCRIPT``, and :func:`execute_with_script` loads the script and runs the pipeline again.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence

import redis.asyncio as aredis
from redis.asyncio.client import Pipeline
from redis.exceptions import NoScriptError

from gateway.memory.keys import KeySpace, Partition
from gateway.memory.ranking import bm25_term_weight
from gateway.memory.records import MemoryRecord
from gateway.memory.tokenize import term_frequencies, tokenize

__all__ = ['MAX_QUERY_TERMS', 'POSTINGS_PER_TERM', 'KeywordIndex']

MAX_QUERY_TERMS = 32
POSTINGS_PER_TERM = 1000

#: KEYS: for each partition its listing key then its postings key of each term.
#: ARGV: number of terms, count, postings read per term. Reply: up to ``count`` ids.
BM25_SCRIPT = """#!lua flags=no-writes
local nterms, count, cap = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local scores, ids = {}, {}
for base = 1, #KEYS, nterms + 1 do
  local total = redis.call('ZCARD', KEYS[base])
  for t = 1, nterms do
    local key = KEYS[base + t]
    local df = redis.call('ZCARD', key)
    if df > 0 then
      local idf = math.log(1 + (math.max(total - df, 0) + 0.5) / (df + 0.5))
      local rows = redis.call('ZRANGE', key, 0, cap - 1, 'REV', 'WITHSCORES')
      for j = 1, #rows, 2 do
        local id, gain = rows[j], idf * tonumber(rows[j + 1])
        local old = scores[id]
        if old == nil then
          ids[#ids + 1] = id
          scores[id] = gain
        else
          scores[id] = old + gain
        end
      end
    end
  end
end
-- the best count, by insertion into a sorted array (a full sort of every id cost 2x)
local out, n = {}, 0
for _, id in ipairs(ids) do
  local s, last = scores[id], out[n]
  if n < count or s > scores[last] or (s == scores[last] and id > last) then
    local k = (n < count) and n + 1 or n
    while k > 1 do
      local prev = out[k - 1]
      local sp = scores[prev]
      if sp > s or (sp == s and prev > id) then break end
      out[k] = prev
      k = k - 1
    end
    out[k] = id
    if n < count then n = n + 1 end
  end
end
return out
"""
BM25_SHA = hashlib.sha1(BM25_SCRIPT.encode()).hexdigest()


async def execute_with_script(client: aredis.Redis, build: Callable[[Pipeline], None]) -> list:
    """Queue commands with ``build`` on a fresh non-transactional pipeline and run it; on
    ``NOSCRIPT`` (the server's script cache is empty, e.g. after a restart) load
    :data:`BM25_SCRIPT` and run a rebuilt pipeline once more."""
    for attempt in (1, 2):
        pipe = client.pipeline(transaction=False)
        build(pipe)
        try:
            return await pipe.execute()
        except NoScriptError:
            if attempt == 2:
                raise
            await client.script_load(BM25_SCRIPT)
    raise AssertionError("unreachable")


def query_terms(text: str) -> list[str]:
    """Unique tokens of ``text`` in order, at most :data:`MAX_QUERY_TERMS`."""
    return list(dict.fromkeys(tokenize(text)))[:MAX_QUERY_TERMS]

#: A record's postings in one command (issue 10, item 3: a ZADD per term cost the worker
#: more client time than the rest of the write). KEYS[1] = the user's key registry,
#: KEYS[2..] = postings keys; ARGV[1] = record id, ARGV[i] = weight for KEYS[i]. Sent
#: with EVAL (no NOSCRIPT round trip inside MULTI); every key has the user's hash tag.
_PUT_POSTINGS = """
for i = 2, #KEYS do
  redis.call('ZADD', KEYS[i], ARGV[i], ARGV[1])
  redis.call('SADD', KEYS[1], KEYS[i])
end
return #KEYS - 1
"""


class KeywordIndex:
    """See module docstring."""

    def __init__(self, client: aredis.Redis, keys: KeySpace):
        self._client = client
        self._keys = keys

    def queue_put(self, pipe: Pipeline, record: MemoryRecord) -> None:
        counts = term_frequencies(record.text, record.keywords)
        length = sum(counts.values())
        part = Partition.of(record)
        keys, weights = [], []
        for term, tf in counts.items():
            keys.append(self._keys.postings(part, term))
            weights.append(repr(bm25_term_weight(tf, length)))
        if keys:  # one command for the record's postings instead of one ZADD per term
            pipe.eval(_PUT_POSTINGS, len(keys) + 1, self._keys.registry(record.user_id), *keys, record.id, *weights)

    def queue_remove(self, pipe: Pipeline, record: MemoryRecord) -> None:
        part = Partition.of(record)
        for term in term_frequencies(record.text, record.keywords):
            pipe.zrem(self._keys.postings(part, term), record.id)

    def queue_search(self, pipe: Pipeline, parts: Sequence[Partition], text: str, count: int) -> bool:
        """Queue the BM25 script for ``text`` over ``parts`` on ``pipe`` (run it with
        :func:`execute_with_script`); False, and nothing queued, when ``text`` has no
        terms. Its reply goes to :func:`search_reply`."""
        terms = query_terms(text)
        if not terms or not parts:
            return False
        keys = []
        for part in parts:
            keys.append(self._keys.listing(part))
            keys.extend(self._keys.postings(part, term) for term in terms)
        pipe.evalsha(BM25_SHA, len(keys), *keys, len(terms), count, POSTINGS_PER_TERM)
        return True

    async def search(self, parts: Sequence[Partition], text: str, count: int) -> list[str]:
        """Record ids of ``parts`` best matching ``text`` by BM25, at most ``count``, one
        round trip."""
        queued = []
        replies = await execute_with_script(
            self._client, lambda pipe: queued.append(self.queue_search(pipe, parts, text, count))
        )
        return search_reply(replies[0]) if queued[-1] else []


def search_reply(reply: Sequence[bytes | str]) -> list[str]:
    """The BM25 script's reply -> record ids, best first."""
    return [m.decode() if isinstance(m, bytes) else m for m in reply]
