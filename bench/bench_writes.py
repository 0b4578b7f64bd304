"""Writes of one busy agent (issue 18): eight writers into one agent against eight writers
into eight agents, over HTTP.

Each memory first holds ``BENCH_WRITES_PRELOAD`` facts of real text (``bench.corpus``, one
in ten Turkish), so its common words have statistics rows that every write touches. Then
``BENCH_WRITES_WRITERS`` (8) clients, each its own run and connection, save real sentences
as fast as they can for ``BENCH_WRITES_SECONDS`` each: all into one agent, then each into
an agent of its own. gunicorn runs one sync worker per writer, so the server never queues
them itself. Figures: facts per second and p50/p95/p99 per write, for both, and their ratio;
the CPU milliseconds per write of gunicorn, PostgreSQL and the writers (what bounds the rate).
Under ``floor``: the same clients reading a fact that does not exist (auth, one indexed
query, a 404), the cheapest request a run makes: what any request costs, write or not.

``BENCH_WRITES_BEFORE``: a checkout of an earlier version, measured the same way on a
database its own migrations made (``before``), beside this tree's (``now``).
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from django.db import connection, connections

from bench import common, corpus

DATABASE = "memoryhub_bench_writes"
WRITERS = int(os.environ.get("BENCH_WRITES_WRITERS", "8"))
SECONDS = float(os.environ.get("BENCH_WRITES_SECONDS", "20"))
PRELOAD = int(os.environ.get("BENCH_WRITES_PRELOAD", "10000"))
SEED = 18


def _sentences() -> list[str]:
    english = corpus.english_sentences(20_000, SEED)
    turkish = corpus.turkish_sentences(SEED)
    mixed = [*english, *turkish[: len(english) // 9]]
    random.Random(SEED).shuffle(mixed)
    return mixed


def _migrate(root: Path, url: str) -> None:
    """The schema that ``root``'s code expects: its own migrations, in its own process."""
    subprocess.run(  # noqa: S603 - our own interpreter and manage.py
        [sys.executable, "manage.py", "migrate", "-v0"],
        cwd=root,
        env={
            **os.environ,
            "DATABASE_URL": url,
            "PYTHONPATH": str(root),
            "MEMORYHUB_ENV": "development",
        },  # fmt: skip
        check=True,
    )


def _setup(agents: int) -> tuple[list, list[list[str]]]:
    """``agents`` agents, each with ``WRITERS`` running runs; (agents, their run tokens)."""
    from memoryhub.principals import Principal
    from memoryhub.services.workspaces import create_workspace
    from tests.factories import create_agent
    from threads.services.runs import accept_run
    from threads.services.threads import create_thread

    principal = Principal.system(create_workspace("bench writes"))
    made, tokens = [], []
    for a in range(agents):
        agent = create_agent(principal, {"name": f"writer {a}"})
        made.append(agent)
        tokens.append(
            [
                accept_run(principal, create_thread(principal, agent.id, end_user=f"u{w}").id).token
                for w in range(WRITERS)
            ]
        )
    return made, tokens


def _preload(agents: list, sentences: list[str]) -> None:
    """``PRELOAD`` facts per agent in one statement each (the triggers count their terms),
    and the agent's fact counter."""
    from facts.search import fold

    for agent in agents:
        texts = [sentences[i % len(sentences)] for i in range(PRELOAD)]
        with connection.cursor() as cursor:
            cursor.execute(
                """
                INSERT INTO facts_fact (workspace_id, agent_id, scope, path, text, tags,
                    confidence, version, run_id, written_by, created_at, updated_at,
                    search_text)
                SELECT %s, %s, '', 'preload/', t, '{}', 1, 1, 'run_preload', 'code', now(),
                    now(), f
                FROM unnest(%s::text[], %s::text[]) AS u(t, f)
                """,
                [agent.workspace_id, agent.id, texts, [fold(t) for t in texts]],
            )
            # The same statement for every version: a shard, where there are, is 0.
            cursor.execute(
                "INSERT INTO facts_factquota (workspace_id, agent_id, scope, count) "
                "VALUES (%s, %s, '', %s)",
                [agent.workspace_id, agent.id, PRELOAD],
            )
            cursor.execute("ANALYZE")


def _cpu() -> Counter:
    """CPU seconds used so far by this machine's processes, by command name (Linux's
    /proc), and by this process (the writers) as ``"bench client"``."""
    ticks = os.sysconf("SC_CLK_TCK")
    used: Counter = Counter()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:  # gone meanwhile
            continue
        name, fields = text[text.index("(") + 1 : text.rindex(")")], text.rsplit(")", 1)[1].split()
        used[name] += (int(fields[11]) + int(fields[12])) / ticks  # utime, stime
    mine = os.times()
    used["bench client"] = mine.user + mine.system
    return used


def _cpu_per_call(before: Counter, after: Counter, calls: int) -> dict:
    """Milliseconds of CPU per call: the gunicorn workers, PostgreSQL's processes (when
    the server runs on this machine) and the clients; where a call's time goes."""
    return {
        name: round((after[name] - before[name]) * 1000 / max(calls, 1), 2)
        for name in ("gunicorn", "postgres", "bench client")
    }


def _write(base: str, tokens: list[str], sentences: list[str]) -> dict:
    """Each token's writer saves sentences for ``SECONDS``."""

    def save(client: common.Client, rng: random.Random) -> tuple[int, Any]:
        body = {"path": "notes/", "text": rng.choice(sentences)}
        return client.request("POST", "/v0/memory/facts", body)

    return _load(base, tokens, save, expected=201)


def _floor(base: str, tokens: list[str]) -> dict:
    """Each token's client reads a fact that no one has for ``SECONDS``."""

    def miss(client: common.Client, rng: random.Random) -> tuple[int, Any]:
        return client.request("GET", "/v0/memory/facts/m_100000000000000")

    return _load(base, tokens, miss, expected=404)


def _load(
    base: str,
    tokens: list[str],
    call: Callable[[common.Client, random.Random], tuple[int, Any]],
    expected: int,
) -> dict:
    """One client per token calling as fast as it can for ``SECONDS``: calls per second,
    latencies and the CPU each call took."""
    samples: list[list[float]] = [[] for _ in tokens]
    failures: list[str] = []
    start = threading.Barrier(len(tokens))

    def client_loop(w: int) -> None:
        client = common.Client(base, {"x-agentos-run-token": tokens[w]})
        rng = random.Random(w)
        start.wait()
        until = time.perf_counter() + SECONDS
        while time.perf_counter() < until:
            began = time.perf_counter()
            status, answer = call(client, rng)
            samples[w].append(time.perf_counter() - began)
            if status != expected:
                failures.append(f"{status} {answer}")

    threads = [threading.Thread(target=client_loop, args=(w,)) for w in range(len(tokens))]
    cpu = _cpu()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    every = [s for client_samples in samples for s in client_samples]
    return {
        "per_s": round(len(every) / SECONDS, 1),
        "latency": common.percentiles(every),
        "cpu_ms_each": _cpu_per_call(cpu, _cpu(), len(every)),
        "failures": len(failures),
        "first_failure": failures[0] if failures else None,
    }


def measure(root: Path, sentences: list[str]) -> dict:
    """Both workloads against the code of ``root``, on a database of its own migrations."""
    from facts.services import checks

    with common.own_database(DATABASE, migrate=False) as url:
        _migrate(root, url)
        agents, tokens = _setup(WRITERS)
        _preload(agents, sentences)
        connections.close_all()
        with common.server(url, workers=WRITERS, root=root) as base:
            one = _write(base, tokens[0], sentences)  # every writer into agent 0
            print(f"  one agent: {one['per_s']} facts/s", flush=True)
            each = _write(base, [t[0] for t in tokens], sentences)
            print(f"  {WRITERS} agents: {each['per_s']} facts/s", flush=True)
            floor = _floor(base, tokens[0])
            print(f"  a missing fact read: {floor['per_s']} requests/s", flush=True)
        differences = checks.counter_differences() + checks.term_differences()
    return {
        "one_agent": one,
        "own_agents": each,
        "floor": floor,
        "one_over_own": round(one["per_s"] / each["per_s"], 2),
        "statistics_exact_after": not differences,
    }


def run(results: dict) -> None:
    started = time.perf_counter()
    sentences = _sentences()
    versions = {"now": common.ROOT}
    if before := os.environ.get("BENCH_WRITES_BEFORE"):
        versions["before"] = Path(before)
    figures: dict = {"writers": WRITERS, "seconds_each": SECONDS, "preloaded_facts": PRELOAD}
    for label, root in versions.items():
        print(f"{label} ({root})", flush=True)
        figures[label] = measure(root, sentences)
    if "before" in figures:
        figures["one_agent_now_over_before"] = round(
            figures["now"]["one_agent"]["per_s"] / figures["before"]["one_agent"]["per_s"],
            2,
        )
    figures["seconds"] = round(time.perf_counter() - started, 1)
    results["writes"] = figures
