"""``python -m bench proxy``: the gateway's overhead against a fixed-body upstream.

:mod:`bench.proxy.run` measures the gateway's added latency
and throughput against a fixed-body upstream. Its parts, one concern per module:

- :mod:`bench.proxy.bodies`: the fixed upstream replies and the client requests;
- :mod:`bench.proxy.nginx` / :mod:`bench.proxy.upstream`: the fixed-body upstream
  (nginx when installed, else a small built-in asyncio server);
- :mod:`bench.proxy.loadgen`: a Python HTTP/1.1 client (own process) for latency and
  time-to-first-byte at low concurrency;
- :mod:`bench.proxy.wrk`: ``wrk`` for throughput at high concurrency;
- :mod:`bench.proxy.targets`: the proxies under test (memgate, LiteLLM) as processes;
- :mod:`bench.proxy.process`: child processes, their readiness and CPU time;
- :mod:`bench.proxy.cells`: what is measured, in which order, pooled how;
- :mod:`bench.proxy.stats`: percentiles; :mod:`bench.proxy.report`: table and checks.

Nothing here runs at import time; every process is started and stopped by ``main``.
"""
