"""Run every benchmark script in this folder, one after another, each printing its own table."""

import runpy
import sys
from pathlib import Path

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))  # the scripts import their shared helpers (`_timing`) as when run directly

for script in sorted(HERE.glob("bench_*.py")):
    if len(sys.argv) > 1 and not any(name in script.stem for name in sys.argv[1:]):
        continue
    print(f"\n## {script.stem}\n", flush=True)
    runpy.run_path(str(script), run_name="__main__")
