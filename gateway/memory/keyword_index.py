"""Per-partition keyword postings in Redis for the vectorset backend's BM25 ranking.

One sorted set per (partition, term) (:meth:`KeySpace.postings`): member = record id,
score = the BM25 term-frequency weight (:func:`ranking.bm25_term_weight`). A query reads,
in one pipeline, the partition size (ZCARD of its listing), each term's document frequency
(ZCARD) and its best postings, and sums ``idf * weight`` per record. Everything stays
under the user's hash tag, so tenancy is by key here too.
"""

from __future__ import annotations

from collections.abc import Sequence

import redis.asyncio as aredis
from redis.asyncio.client import Pipeline

from gateway.memory.keys import KeySpace, Partition
from gateway.memory.ranking import bm25_idf, bm25_term_weight
from gateway.memory.records import MemoryRecord
from gateway.memory.tokenize import term_frequencies, tokenize

__all__ = ['KeywordIndex', 'MAX_QUERY_TERMS', 'POSTINGS_PER_TERM']

MAX_QUERY_TERMS = 32
POSTINGS_PER_TERM = 1000

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

    async def search(self, parts: Sequence[Partition], text: str, count: int) -> list[str]:
        """Record ids of ``parts`` best matching ``text`` by BM25, at most ``count``."""
        terms = list(dict.fromkeys(tokenize(text)))[:MAX_QUERY_TERMS]
        if not terms or not parts:
            return []
        pipe = self._client.pipeline(transaction=False)
        for part in parts:
            pipe.zcard(self._keys.listing(part))
            for term in terms:
                key = self._keys.postings(part, term)
                pipe.zcard(key)
                pipe.zrange(key, 0, POSTINGS_PER_TERM - 1, desc=True, withscores=True)
        replies = iter(await pipe.execute())
        scores: dict[str, float] = {}
        for _part in parts:
            total = next(replies)
            for _term in terms:
                idf = bm25_idf(next(replies), total)
                for member, weight in next(replies):
                    doc_id = member.decode()
                    scores[doc_id] = scores.get(doc_id, 0.0) + idf * weight
        return sorted(scores, key=lambda d: -scores[d])[:count]
