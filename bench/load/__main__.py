"""``python -m bench.load --agents 8 --seconds 60``: a load run (``make load``); its figures
and the checker's verdict go under "load" in the benchmark JSON. Exits 1 when a check
failed."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

import django


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.load", description=__doc__)
    parser.add_argument("--agents", type=int, default=8, help="simulated agent runtimes")
    parser.add_argument("--seconds", type=float, default=60, help="how long they run")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--out", type=Path, default=Path(os.environ.get("BENCH_OUT", "bench/results.json"))
    )
    args = parser.parse_args(argv)
    redis_url = os.environ.get("REDIS_URL")
    if not redis_url:
        parser.error("REDIS_URL must name the Redis the cluster shares (make load sets it)")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryhub.settings")
    os.environ.setdefault("MEMORYHUB_ENV", "development")
    django.setup()
    from bench.load.driver import run

    figures = run(redis_url, args.agents, args.seconds, args.seed)
    results = json.loads(args.out.read_text()) if args.out.exists() else {}
    results["load"] = figures
    args.out.write_text(json.dumps(results, indent=2))
    print(json.dumps(figures, indent=2))
    print(f"figures written to {args.out}; checker: {figures['verdict']}")
    for failure in figures["failures"]:
        print("FAILED", failure, file=sys.stderr)
    return 0 if figures["verdict"] == "clean" else 1


if __name__ == "__main__":
    sys.exit(main())
