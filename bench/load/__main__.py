"""``python -m bench.load --agents 8 --seconds 60``: a load run (``make load``); its figures
and the checker's verdict go under "load" in the benchmark JSON. ``--fault NAME`` (or
``all``: each in turn) makes a dependency fail during the run, on private servers; its
figures go under "load" -> "faults" -> NAME. Exits 1 when a check failed."""

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
        "--fault",
        choices=["redis", "postgres", "worker", "mem0", "all"],
        help="restart Redis or PostgreSQL, kill a worker mid-purge, or hang then refuse mem0",
    )
    parser.add_argument(
        "--out", type=Path, default=Path(os.environ.get("BENCH_OUT", "bench/results.json"))
    )
    args = parser.parse_args(argv)
    redis_url = os.environ.get("REDIS_URL")
    if not redis_url and not args.fault:
        parser.error("REDIS_URL must name the Redis the cluster shares (make load sets it)")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryhub.settings")
    os.environ.setdefault("MEMORYHUB_ENV", "development")
    django.setup()
    results = json.loads(args.out.read_text()) if args.out.exists() else {}
    if args.fault:
        return _faults(args, results)
    from bench.load.driver import run

    figures = run(redis_url, args.agents, args.seconds, args.seed)
    results["load"] = {**figures, "faults": results.get("load", {}).get("faults", {})}
    return _written(args.out, results, figures, "load")


def _faults(args: argparse.Namespace, results: dict) -> int:
    from bench.load.faults import MIN_SECONDS, NAMES, run_fault

    if args.seconds < MIN_SECONDS:
        raise SystemExit(f"--fault needs --seconds {MIN_SECONDS:g} or more (the outage and after)")
    failed = 0
    for name in NAMES if args.fault == "all" else [args.fault]:
        figures = run_fault(name, args.agents, args.seconds, args.seed)
        results.setdefault("load", {}).setdefault("faults", {})[name] = figures
        failed |= _written(args.out, results, figures, f"fault {name}")
    return failed


def _written(out: Path, results: dict, figures: dict, name: str) -> int:
    out.write_text(json.dumps(results, indent=2))
    print(json.dumps(figures, indent=2))
    print(f"figures written to {out}; {name}: checker {figures['verdict']}")
    for failure in figures["failures"]:
        print("FAILED", failure, file=sys.stderr)
    return 0 if figures["verdict"] == "clean" else 1


if __name__ == "__main__":
    sys.exit(main())
