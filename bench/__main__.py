"""``python -m bench ...`` (see :mod:`bench.cli`).

Progress bars (huggingface_hub, transformers' ``Loading weights``, tqdm) and transformers'
info logs are off in the benchmark process, set before anything imports those libraries:
the reports are JSON, and a bar on the terminal of a first run (a model derived from the
packaged weights) is noise. Benchmarks that tests parse also write their report to a file
(``--json-out``)."""

import os

for _name, _value in (("HF_HUB_DISABLE_PROGRESS_BARS", "1"), ("TQDM_DISABLE", "1"), ("TRANSFORMERS_VERBOSITY", "error")):
    os.environ.setdefault(_name, _value)

from bench.cli import main  # noqa: E402  (after the environment above)

main(prog_name="python -m bench")
