# One command per task; every target sets up the pinned environment first (uv + uv.lock).
UV ?= $(shell command -v uv 2>/dev/null || echo python3 -m uv)
export UV_PYTHON_DOWNLOADS := never
export PYRIGHT_PYTHON_IGNORE_WARNINGS := 1

.PHONY: setup lint typecheck test check bench demo serve

setup:
	@$(UV) --version >/dev/null 2>&1 || python3 -m pip install --quiet 'uv==0.13.9' \
		|| python3 -m pip install --quiet --break-system-packages 'uv==0.13.9'
	@$(UV) sync --frozen --all-extras --quiet

lint: setup
	$(UV) run --frozen ruff check src tests bench
	$(UV) run --frozen ruff format --check src tests bench

typecheck: setup
	$(UV) run --frozen pyright

test: setup
	$(UV) run --frozen pytest

check: lint typecheck test

bench: setup
	$(UV) run --frozen --all-extras --group bench python -m bench $(ONLY)

demo: setup
	$(UV) run --frozen tether demo

serve: setup
	$(UV) run --frozen tether serve --open
