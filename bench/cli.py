"""``python -m bench``: the benchmarks behind the README's figures, run from a checkout.

Not part of the installed ``memgate`` package (``pyproject.toml`` packages only
``gateway`` and ``plugins``); the benchmarks use the checkout's test support
(``tests/support``: the upstream model double, the loopback server) and fixtures.
"""

from __future__ import annotations

import logging

import click

from bench.assistant.cli import command as assistant
from bench.console_screenshots import command as console_screenshots
from bench.context import command as context
from bench.failover import command as failover
from bench.fairness import command as fairness
from bench.irc_data import command as irc_convert
from bench.load import command as load
from bench.locomo.cli import command as locomo
from bench.locomo.probes import command as locomo_probes
from bench.locomo.sweep import command as locomo_sweep
from bench.memorize import command as memorize
from bench.outage import command as outage
from bench.profile_budget import command as profile_budget
from bench.proxy.run import command as proxy
from bench.recall import command as recall
from bench.store import command as store
from bench.threshold_study import command as threshold_study
from bench.verbatim import command as verbatim
from bench.warmstart import command as warmstart
from bench.worldbook import command as worldbook


@click.group()
@click.option("-v", "--verbose", is_flag=True, help="Debug logging.")
def main(verbose: bool) -> None:
    """memgate benchmarks (figures for the README and issue notes)."""
    logging.basicConfig(
        level=logging.DEBUG if verbose else logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )


for _command in (proxy, store, recall, memorize, locomo, threshold_study, outage, load, context, worldbook,
                 console_screenshots, verbatim, failover, locomo_sweep, locomo_probes, irc_convert, fairness, assistant,
                 warmstart, profile_budget):
    main.add_command(_command)
