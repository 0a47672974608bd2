"""tether's benchmarks. `make bench` (or `uv run python -m bench`) runs every `bench/bench_*.py` script."""
