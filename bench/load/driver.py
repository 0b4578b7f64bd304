"""A load run: the cluster, the workspace the runtimes share, the runtimes in threads for a
bounded time, then the checker; answers the figures for the benchmark JSON."""

from __future__ import annotations

import threading
import time

from bench.common import percentiles
from bench.load import checker
from bench.load.cluster import MEM0_ADMIN_KEY, MEM0_KEY, Cluster, cluster
from bench.load.http import Http
from bench.load.journal import Journal
from bench.load.runtime import Runtime, Setup

FILES = ["shared/log-0.md", "shared/log-1.md", "shared/log-2.md"]
PURGES_WITHIN = 60  # seconds the workers get to finish the purges once the runtimes stop


def _created(http: Http, key: str, path: str, body: dict) -> dict:
    headers = {"Authorization": f"Bearer {key}"}
    answer = http.request("PUT" if "/files/" in path else "POST", path, body, headers)
    if answer.status not in (200, 201):
        raise RuntimeError(f"setting up: {path} answered {answer.status}: {answer.body}")
    return answer.body


def prepare(running: Cluster, provider_config: dict | None = None) -> Setup:
    """A workspace (its keys made here, as an operator's ``create_api_key`` would), and over
    the API two agents, a file memory with shared files and a record memory on mem0
    (``provider_config`` adds to its provider's config: timeouts)."""
    from memoryhub.services.workspaces import create_api_key, create_workspace

    workspace = create_workspace("Load")
    write_key = create_api_key(workspace, "write")[1]
    run_key = create_api_key(workspace, "run")[1]
    http = Http(running.bases)
    agents = [
        _created(http, write_key, "/api/v1/agents", {"name": f"Agent {n}"})["id"] for n in (0, 1)
    ]
    files = _created(http, write_key, "/api/v1/memories", {"name": "Team notes"})["id"]
    for path in FILES:
        _created(http, write_key, f"/api/v1/memories/{files}/files/{path}", {"content": ""})
    config = {"base_url": running.mem0.url, **(provider_config or {})}
    provider = _created(http, write_key, "/api/v1/memory-providers", {
        "type": "mem0_oss", "name": "local mem0", "config": config,
        "credential": {"api_key": MEM0_KEY, "admin_api_key": MEM0_ADMIN_KEY},
    })["id"]  # fmt: skip
    body = {"name": "People", "type": "mem0_oss", "provider_id": provider}
    records = _created(http, write_key, "/api/v1/memories", body)["id"]
    http.close()
    return Setup(
        running.bases,
        write_key,
        run_key,
        agents,
        files,
        FILES,
        records,
        provider,
    )


def drive(setup: Setup, journal: Journal, agents: int, seconds: float, seed: int) -> float:
    """The runtimes, each in a thread, until ``seconds`` have passed; answers the time."""
    runtimes = [Runtime(n, setup, journal, seed + n) for n in range(agents)]
    for runtime in runtimes:
        runtime.start()
    started = time.monotonic()
    threads = [
        threading.Thread(target=runtime.until, args=(started + seconds,), daemon=True)
        for runtime in runtimes
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=seconds + 300)
        if thread.is_alive():
            journal.problem(f"{thread.name} did not stop within 300 s of its time")
    return time.monotonic() - started


def wait_for_purges(journal: Journal) -> None:
    from records.models import PurgeJob

    deadline = time.monotonic() + PURGES_WITHIN
    jobs = PurgeJob.objects.filter(memory_id__in=[memory for memory, _ in journal.purges])
    while jobs.exclude(status="done").exists() and time.monotonic() < deadline:
        time.sleep(0.5)


def figures(journal: Journal, elapsed: float) -> dict:
    """Throughput and p50/p95/p99 per operation."""
    total = sum(len(samples) for samples in journal.timings.values())
    return {
        "requests": total,
        "seconds": round(elapsed, 1),
        "requests_per_second": round(total / elapsed, 1),
        "operations": {
            name: {**percentiles(samples), "per_second": round(len(samples) / elapsed, 2)}
            for name, samples in sorted(journal.timings.items())
        },
        "retries": dict(sorted(journal.retries.items())),
        "acknowledged": {
            kind: len(getattr(journal, kind))
            for kind in ("facts", "keys", "tool_calls", "files", "records", "runs", "purges")
        },
    }


def run(redis_url: str, agents: int, seconds: float, seed: int = 1) -> dict:
    """One load run; its figures and the checker's verdict."""
    journal = Journal()
    with cluster(redis_url) as running:
        setup = prepare(running)
        elapsed = drive(setup, journal, agents, seconds, seed)
        wait_for_purges(journal)
        stored = {pk: record["memory"] for pk, record in dict(running.mem0.records).items()}
        failures = checker.check(journal, stored)
    return {
        "agents": agents,
        "web_processes": len(running.bases),
        "celery_workers": 2,
        **figures(journal, elapsed),
        "verdict": "clean" if not failures else "failed",
        "failures": failures,
    }
