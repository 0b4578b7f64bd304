"""Faults with the load running (issue 19): ``python -m bench.load --fault NAME``, small.

Three runtimes for 25 s on a private PostgreSQL and Redis; a third of the way through a
dependency fails for 8 s. During it the API answers what it always does or the documented
503 naming the dependency, never a 500 or a hang; ``/healthz`` names the failed check; the
same processes answer normally again within seconds of its return; and the checker finds
every acknowledged write once (``bench.load.faults`` asserts each of these rules too: a
run that broke one exits 1).
"""

from __future__ import annotations

import pytest

from tests.load.runs import load_run

pytestmark = pytest.mark.slow


def _fault(tmp_path, name: str) -> dict:
    load = load_run(tmp_path / "results.json", "--agents", "3", "--seconds", "25",
                    "--fault", name)  # fmt: skip
    figures = load["faults"][name]
    assert figures["verdict"] == "clean" and figures["failures"] == []
    assert figures["outage_seconds"] >= 8
    return figures["phases"]


def _statuses(answers: dict) -> set[str]:
    return {seen.split()[0] for seen in answers}


def _normal(phase: dict) -> None:
    """Only the answers of a healthy service: successes and the load's expected 4xx."""
    assert _statuses(phase["answers"]) <= {"200", "201", "204", "401", "412"}, phase
    assert set(phase["healthz"]) == {"200"}, phase


def test_postgres_restarted_answers_503_database_then_recovers(tmp_path):
    phases = _fault(tmp_path, "postgres")
    during = phases["during"]
    assert during["answers"]["503 unavailable database"] > 0
    assert _statuses(during["answers"]) <= {"200", "201", "401", "412", "503"}
    # The providers' check cannot run without the database: it says so beside it.
    assert during["healthz"]["503 database memory_providers"] > 0
    assert during["slowest_ms"] < 15_000
    _normal(phases["after"])


def test_redis_restarted_shows_in_healthz_while_the_api_answers(tmp_path):
    phases = _fault(tmp_path, "redis")
    during = phases["during"]
    assert _statuses(during["answers"]) <= {"200", "201", "204", "401", "412"}, during
    assert during["healthz"]["503 broker"] > 0
    _normal(phases["after"])


def test_a_worker_killed_mid_purge_leaves_it_to_the_other_exactly_once(tmp_path):
    load = load_run(tmp_path / "results.json", "--agents", "3", "--seconds", "25",
                    "--fault", "worker")  # fmt: skip
    figures = load["faults"]["worker"]
    assert figures["verdict"] == "clean", figures["failures"]
    assert figures["purge"] == {"status": "done", "tries": 2, "done_tries": 1}
    for phase in ("before", "during", "after"):
        _normal(figures["phases"][phase])


def test_mem0_hanging_then_refusing_answers_503_naming_it(tmp_path):
    phases = _fault(tmp_path, "mem0")
    during = phases["during"]
    assert during["answers"]["503 unavailable memory:mem0_oss"] > 0
    assert _statuses(during["answers"]) <= {"200", "201", "204", "401", "409", "412", "503"}
    # Still 200 (everything else works), naming the failing providers' check.
    assert during["healthz"]["200 memory_providers"] > 0, during["healthz"]
    _normal(phases["after"])
