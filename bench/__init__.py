"""memgate's benchmarks: ``python -m bench proxy|store|recall|memorize|locomo|threshold-study``
from a checkout (:mod:`bench.cli`). Not installed with the ``memgate`` package.

- :mod:`bench.proxy`: gateway overhead against a fixed-body upstream (nginx or built-in);
- :mod:`bench.store`: memory store latency and bytes per memory;
- :mod:`bench.recall`: latency of the recall side of the request phase;
- :mod:`bench.memorize`: enqueue cost and worker throughput;
- :mod:`bench.locomo`: LoCoMo evidence recall (store, or the whole loop via chat);
- :mod:`bench.threshold_study`: cosine scores behind ``high_relevance_threshold``.
"""
