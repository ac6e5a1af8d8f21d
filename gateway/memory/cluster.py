"""Which Redis client a caller holds: a leaf module, so the store's low-level
modules (scripts, the embedding cache) can ask without importing the factory that builds
the clients (:mod:`gateway.memory.factory` imports them)."""

from __future__ import annotations

__all__ = ['is_cluster']


def is_cluster(client: object) -> bool:
    """True when ``client`` is a Redis Cluster client
    (:func:`gateway.memory.factory.cluster_client`: ``redis.asyncio.cluster.RedisCluster``)."""
    from redis.asyncio.cluster import RedisCluster

    return isinstance(client, RedisCluster)
