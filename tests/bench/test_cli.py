"""The benchmarks run as ``python -m bench`` from a checkout and stay out of the product."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from bench.cli import main as bench_main
from gateway.cli import main as memgate_main

ROOT = Path(__file__).resolve().parents[2]


def test_python_m_bench_lists_every_benchmark():
    done = subprocess.run([sys.executable, "-m", "bench", "--help"], cwd=ROOT, capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert "Usage: python -m bench" in done.stdout
    for name in ("proxy", "store", "recall", "memorize", "locomo", "threshold-study"):
        assert f"  {name}" in done.stdout


def test_the_product_cli_has_no_bench_command_and_imports_no_bench_code():
    assert "bench" not in memgate_main.commands
    done = subprocess.run([sys.executable, "-c", "import sys, gateway.cli, gateway.app; "
                           "print(sorted(m for m in sys.modules if m == 'bench' or m.startswith(('bench.', 'tests'))))"],
                          cwd=ROOT, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_locomo_refuses_an_unknown_variant_naming_the_option(tmp_path):
    data = tmp_path / "locomo.json"
    data.write_text("[]")
    result = CliRunner().invoke(bench_main, ["locomo", str(data), "--variant", "nope"])
    assert result.exit_code == 2
    assert "--variant" in result.output and "nope" in result.output
