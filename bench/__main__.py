"""``make bench``: runs every ``bench/bench_*.py`` and writes the figures to a JSON file.

Each module has ``run(results: dict) -> None`` that adds its figures under its own key.
"""

from __future__ import annotations

import importlib
import json
import os
import pkgutil
import sys
import time
from pathlib import Path

import django


def main() -> int:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryhub.settings")
    # Benchmarks make and drop their own databases: development defaults, no SECRET_KEY needed.
    os.environ.setdefault("MEMORYHUB_ENV", "development")
    django.setup()
    out = Path(os.environ.get("BENCH_OUT", "bench/results.json"))
    only = sys.argv[1:]
    results: dict = {"started_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    for module in sorted(m.name for m in pkgutil.iter_modules([str(Path(__file__).parent)])):
        if not module.startswith("bench_") or (only and module not in only):
            continue
        print(f"== {module}", flush=True)
        importlib.import_module(f"bench.{module}").run(results)
        out.write_text(json.dumps(results, indent=2))
    print(json.dumps(results, indent=2))
    print(f"figures written to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
