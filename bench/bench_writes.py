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
database its own migrations made (``before``), beside this tree's (``now``). Both servers
run at once and each workload alternates between them, ``BENCH_WRITES_ROUNDS`` (4) slices
each, so that a shared machine's drifting speed (the same code moved by a third between
runs) weighs on both alike; ``*_now_over_before_by_round`` holds each round's ratio.
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
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.db import connection

from bench import common, corpus

DATABASE = "memoryhub_bench_writes"
WRITERS = int(os.environ.get("BENCH_WRITES_WRITERS", "8"))
SECONDS = float(os.environ.get("BENCH_WRITES_SECONDS", "20"))
PRELOAD = int(os.environ.get("BENCH_WRITES_PRELOAD", "10000"))
ROUNDS = int(os.environ.get("BENCH_WRITES_ROUNDS", "4"))
WARM_UP = 2.0  # seconds of each workload on each server before any is timed
SEED = 18

# The tokens of the clients, the request each makes, the status it expects.
Call = tuple[list[str], Callable[["common.Client", random.Random], tuple[int, Any]], int]


@dataclass
class Slice:
    """What one version's clients did in one slice of a round."""

    samples: list[float]  # seconds per call
    failures: list[str]
    cpu: Counter  # CPU seconds by command name
    seconds: float


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
    from memoryhub.services import agents
    from memoryhub.services.workspaces import create_workspace
    from threads.services.runs import accept_run
    from threads.services.threads import create_thread

    principal = Principal.system(create_workspace("bench writes"))
    made, tokens = [], []
    for a in range(agents):
        agent = agents.create(principal, name=f"writer {a}")
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


def _write(tokens: list[str], sentences: list[str]) -> Call:
    """Each token's writer saves sentences."""

    def save(client: common.Client, rng: random.Random) -> tuple[int, Any]:
        body = {"path": "notes/", "text": rng.choice(sentences)}
        return client.request("POST", "/v0/memory/facts", body)

    return tokens, save, 201


def _floor(tokens: list[str]) -> Call:
    """Each token's client reads a fact that no one has."""

    def miss(client: common.Client, rng: random.Random) -> tuple[int, Any]:
        return client.request("GET", "/v0/memory/facts/m_100000000000000")

    return tokens, miss, 404


def _slice(base: str, call: Call, seconds: float, seed: int) -> Slice:
    """One client per token calling as fast as it can for ``seconds``."""
    tokens, request, expected = call
    samples: list[list[float]] = [[] for _ in tokens]
    failures: list[str] = []
    start = threading.Barrier(len(tokens))

    def client_loop(w: int) -> None:
        client = common.Client(base, {"x-agentos-run-token": tokens[w]})
        rng = random.Random(seed * 100 + w)
        start.wait()
        until = time.perf_counter() + seconds
        while time.perf_counter() < until:
            began = time.perf_counter()
            status, answer = request(client, rng)
            samples[w].append(time.perf_counter() - began)
            if status != expected:
                failures.append(f"{status} {answer}")

    threads = [threading.Thread(target=client_loop, args=(w,)) for w in range(len(tokens))]
    cpu = _cpu()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return Slice([s for each in samples for s in each], failures, _cpu() - cpu, seconds)


def _summary(slices: list[Slice]) -> dict:
    """One version's slices of one workload together: calls per second, latencies and the
    CPU milliseconds each call took of the gunicorn workers, PostgreSQL's processes (when
    the server runs on this machine) and the clients (what bounds the rate)."""
    every = [s for part in slices for s in part.samples]
    failures = [f for part in slices for f in part.failures]
    cpu = sum((part.cpu for part in slices), Counter())
    calls = max(len(every), 1)
    return {
        "per_s": round(len(every) / sum(part.seconds for part in slices), 1),
        "latency": common.percentiles(every),
        "cpu_ms_each": {
            name: round(cpu[name] * 1000 / calls, 2)
            for name in ("gunicorn", "postgres", "bench client")
        },
        "failures": len(failures),
        "first_failure": failures[0] if failures else None,
    }


def _prepare(label: str, root: Path, sentences: list[str]) -> tuple[str, list[list[str]]]:
    """A database of ``root``'s own migrations with ``WRITERS`` preloaded agents: its URL,
    and each agent's run tokens."""
    with common.own_database(f"{DATABASE}_{label}", migrate=False) as url:
        _migrate(root, url)
        agents, tokens = _setup(WRITERS)
        _preload(agents, sentences)
    return url, tokens


def _interleaved(bases: dict[str, str], calls: dict[str, Call]) -> dict[str, list[Slice]]:
    """``ROUNDS`` slices of each version, alternating which goes first, after an untimed
    warm-up of each: a machine whose speed drifts (a shared host) weighs on every version
    alike, and their ratio stays true."""
    for label in bases:  # untimed: each worker's first requests (connections, caches)
        _slice(bases[label], calls[label], WARM_UP, -1)
    slices: dict[str, list[Slice]] = {label: [] for label in bases}
    labels = list(bases)
    for n in range(ROUNDS):
        for label in labels if n % 2 == 0 else labels[::-1]:
            slices[label].append(_slice(bases[label], calls[label], SECONDS / ROUNDS, n))
    return slices


def _by_round(slices: dict[str, list[Slice]]) -> list[float]:
    return [
        round(len(now.samples) / max(len(before.samples), 1), 2)
        for now, before in zip(slices["now"], slices["before"], strict=True)
    ]


def _measure(
    roots: dict[str, Path], prepared: dict[str, tuple[str, list[list[str]]]], sentences: list[str]
) -> dict:
    """Every workload, interleaved between the versions' servers: their figures by version,
    and each round's ratio."""
    workloads: dict[str, Callable[[list[list[str]]], Call]] = {
        "one_agent": lambda tokens: _write(tokens[0], sentences),  # every writer into agent 0
        "own_agents": lambda tokens: _write([t[0] for t in tokens], sentences),
        "floor": lambda tokens: _floor(tokens[0]),
    }
    figures: dict = {label: {"root": str(root)} for label, root in roots.items()}
    with ExitStack() as servers:
        bases = {
            label: servers.enter_context(common.server(url, workers=WRITERS, root=roots[label]))
            for label, (url, _) in prepared.items()
        }
        for workload, call in workloads.items():
            slices = _interleaved(bases, {label: call(t) for label, (_, t) in prepared.items()})
            for label, parts in slices.items():
                figures[label][workload] = _summary(parts)
                print(f"  {label}, {workload}: {figures[label][workload]['per_s']}/s", flush=True)
            if "before" in slices:
                figures[f"{workload}_now_over_before_by_round"] = _by_round(slices)
    return figures


def _checked(label: str) -> bool:
    """Whether the counters and the term statistics of ``label``'s database are exact."""
    from facts.services import checks

    with common.using_database(f"{DATABASE}_{label}"):
        return not (checks.counter_differences() + checks.term_differences())


def run(results: dict) -> None:
    started = time.perf_counter()
    sentences = _sentences()
    roots = {"now": common.ROOT}
    if before := os.environ.get("BENCH_WRITES_BEFORE"):
        roots["before"] = Path(before)
    prepared = {label: _prepare(label, root, sentences) for label, root in roots.items()}
    figures = {
        "writers": WRITERS,
        "seconds_each": SECONDS,
        "rounds": ROUNDS,
        "preloaded_facts": PRELOAD,
        **_measure(roots, prepared, sentences),
    }
    for label in roots:
        mine = figures[label]
        mine["one_over_own"] = round(mine["one_agent"]["per_s"] / mine["own_agents"]["per_s"], 2)
        mine["statistics_exact_after"] = _checked(label)
    if "before" in roots:
        figures["one_agent_now_over_before"] = round(
            figures["now"]["one_agent"]["per_s"] / figures["before"]["one_agent"]["per_s"],
            2,
        )
    figures["seconds"] = round(time.perf_counter() - started, 1)
    results["writes"] = figures
