"""Benchmarks behind ``memgate bench``: figures for the README and issue notes.

``memgate bench proxy`` (:mod:`gateway.bench.proxy`) measures the gateway's added latency
and throughput against a fixed-body upstream. Its parts, one concern per module:

- :mod:`gateway.bench.bodies`: the fixed upstream replies and the client requests;
- :mod:`gateway.bench.nginx` / :mod:`gateway.bench.upstream`: the fixed-body upstream
  (nginx when installed, else a small built-in asyncio server);
- :mod:`gateway.bench.loadgen`: a Python HTTP/1.1 client (own process) for latency and
  time-to-first-byte at low concurrency;
- :mod:`gateway.bench.wrk`: ``wrk`` for throughput at high concurrency;
- :mod:`gateway.bench.targets`: the proxies under test (memgate, LiteLLM) as processes;
- :mod:`gateway.bench.process`: child processes, their readiness and CPU time;
- :mod:`gateway.bench.cells`: what is measured, in which order, pooled how;
- :mod:`gateway.bench.stats`: percentiles; :mod:`gateway.bench.report`: table and checks.

Nothing here runs at import time; every process is started and stopped by ``main``.
"""
