# One command per task; every target sets up the pinned environment first (uv + uv.lock).
UV ?= uv
export UV_PYTHON_DOWNLOADS := never

.PHONY: setup lint typecheck test bench demo schemas

setup:
	@command -v $(UV) >/dev/null || python3 -m pip install --quiet 'uv==0.13.9'
	@$(UV) sync --frozen --all-extras --quiet

lint: setup
	$(UV) run --frozen ruff check src tests bench
	$(UV) run --frozen ruff format --check src tests bench

typecheck: setup
	$(UV) run --frozen pyright

test: setup
	$(UV) run --frozen pytest

bench: setup
	$(UV) sync --frozen --all-extras --group bench --quiet
	$(UV) run --frozen python -m bench

demo: setup
	$(UV) run --frozen tether demo
