"""``make bench``'s share of ``make load``: four runtimes for 20 seconds against two web
processes and two Celery workers, then the checker (``make load`` for a longer run)."""

from __future__ import annotations

import os


def run(results: dict) -> None:
    from bench.load.driver import run as load

    results["load"] = load(os.environ["REDIS_URL"], agents=4, seconds=20)
