"""`make bench`: run every benchmark at the spec's scale, one after the other.

Each script measures its figure and its floor in one process and writes
`bench/results/<name>.json`; this prints them at the end. Not a test: nothing is asserted.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent


def main() -> int:
    for script in sorted(BENCH.glob("bench_*.py")):
        print(f"== {script.name}", flush=True)
        subprocess.run([sys.executable, str(script), *sys.argv[1:]], check=True)
    for result in sorted((BENCH / "results").glob("*.json")):
        print(f"== {result.name}\n{json.dumps(json.loads(result.read_text()), indent=1)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
