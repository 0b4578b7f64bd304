"""Real concurrency for the tests: work in threads, each on its own database connection."""

from __future__ import annotations

import threading
from collections.abc import Callable

from django.db import connection


def in_parallel(count: int, work: Callable[[int], object]) -> list:
    """``work(i)`` in ``count`` threads released together; each result, or its exception."""
    barrier = threading.Barrier(count)
    results: list = [None] * count

    def run(index: int) -> None:
        try:
            barrier.wait(timeout=30)
            results[index] = work(index)
        except Exception as exc:  # noqa: BLE001 - reported by the caller's assertions
            results[index] = exc
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    return results
