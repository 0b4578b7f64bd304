"""``python -m bench.load --fault redis|postgres|worker|mem0|all``: a load run during which a
dependency fails and comes back (issue 19).

The cluster runs on a private PostgreSQL (pgserver) and a private ``redis-server``, never the
shared ones. A third of the way through, the fault starts and lasts ``OUTAGE`` seconds, then
ends; the runtimes keep going. The API's answers are counted per phase (before, during,
recovering: the first ``RECOVER_WITHIN`` seconds after the end, after), and a probe asks
``/healthz`` twice a second. Then the checker runs, as after any load run.
"""

from __future__ import annotations

import os
import shutil
import signal
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import psutil
import requests
from django.core.management import call_command
from django.db import connection, connections

from bench.load import checker
from bench.load.cluster import Cluster, cluster
from bench.load.driver import drive, figures, prepare, wait_for_purges
from bench.load.journal import Journal
from bench.load.runtime import Runtime, Setup
from support.fakes.mem0 import is_purge
from support.outages import ANSWER_WITHIN, Postgres, Redis

OUTAGE = 8  # seconds a dependency stays down
RECOVER_WITHIN = 5  # seconds after it is back within which the API answers normally again
HANG = 60  # seconds mem0 holds a call it hangs: longer than any timeout of the caller
# The purge sweep and claim, short so that the worker-kill run finishes the purge in time.
FAST_PURGES = {"MEMORYHUB_PURGE_SWEEP_SECONDS": "1", "MEMORYHUB_PURGE_LEASE_SECONDS": "3"}
# The record memory's provider gives up on a hung mem0 after this (config read_timeout).
MEM0_TIMEOUTS = {"connect_timeout": 2, "read_timeout": 3}
NAMES = ("redis", "postgres", "worker", "mem0")
# A third of the run before, the outage, the recovery, and a few seconds after.
MIN_SECONDS = 1.5 * (OUTAGE + RECOVER_WITHIN) + 4


class Fault:
    """One dependency failing: ``down`` starts it, ``up`` ends it. ``dependency`` is what
    a 503 names, ``healthz`` the check of ``/healthz`` that fails (None: none does) and
    ``healthz_status`` its status then (a failing provider leaves it 200, ``degraded``)."""

    dependency = ""
    healthz: str | None = None
    healthz_status = 503
    provider_config: dict = {}  # added to the record memory's provider config

    def __init__(self, postgres: Postgres, redis: Redis, running: Cluster, setup: Setup) -> None:
        self.postgres, self.redis, self.running, self.setup = postgres, redis, running, setup
        self.figures: dict = {}

    def down(self, journal: Journal) -> None:
        raise NotImplementedError

    def up(self) -> None:
        raise NotImplementedError

    def finish(self) -> None:
        """Waits for what ``down`` left running, once the run is over."""

    def failures(self) -> list[str]:
        return []


class PostgresRestart(Fault):
    """PostgreSQL stopped and started. A keyed save sent during the outage is refused, and
    sent again with its key until it is answered: the checker then finds one version."""

    dependency = healthz = "database"

    def down(self, journal: Journal) -> None:
        self.journal, self.writer = journal, Runtime(97, self.setup, journal, seed=97)
        self.writer.start()
        self.writer.accept_run()
        self.postgres.stop()
        self.saving = threading.Thread(target=self.writer.keyed_save)
        self.saving.start()

    def up(self) -> None:
        self.postgres.start()

    def finish(self) -> None:
        self.saving.join()
        self.writer.http.close()
        self.writer.twin.close()

    def failures(self) -> list[str]:
        if not self.journal.resent_keys:
            return ["postgres: no keyed save refused during the outage was sent again"]
        return []


class RedisRestart(Fault):
    """Redis stopped (its queued messages lost: no persistence) and started. A record
    memory deleted meanwhile answers 204: its purge waits in the outbox, and beat's sweep
    sends it once the broker is back."""

    dependency = healthz = "broker"

    def down(self, journal: Journal) -> None:
        self.redis.stop()
        before = len(journal.purges)
        Runtime(98, self.setup, journal, seed=98).purge()
        self.figures["deleted_during_outage"] = len(journal.purges) - before

    def up(self) -> None:
        self.redis.start()


class Mem0HangThenRefuse(Fault):
    """Half the outage every call hangs (the provider's read timeout answers), the other
    half the connection is refused."""

    dependency = "memory:mem0_oss"
    healthz, healthz_status = "memory_providers", 200
    provider_config = MEM0_TIMEOUTS

    def down(self, journal: Journal) -> None:
        self.running.mem0.delay = HANG
        time.sleep(OUTAGE / 2)
        self.running.mem0.refuse()

    def up(self) -> None:
        self.running.mem0.delay = 0
        self.running.mem0.resume()


class WorkerKilledMidPurge(Fault):
    """mem0 hangs on purges; a record memory is deleted; the worker whose purge call is
    under way is SIGKILLed, and mem0 answers again. The other worker must finish the purge,
    exactly once, once the claim runs out (``FAST_PURGES``) and beat's sweep sends it
    again. The API needs no worker: it answers as usual throughout."""

    dependency = "none"

    def down(self, journal: Journal) -> None:
        mem0 = self.running.mem0
        mem0.delay_when, mem0.delay = is_purge, HANG
        before = len(journal.purges)
        deleter = Runtime(99, self.setup, journal, seed=99)
        deleter.purge()
        if len(journal.purges) == before:
            self.figures["error"] = "the scratch memory could not be deleted"
            return
        self.memory = journal.purges[-1][0]
        deadline = time.monotonic() + 20
        while not any(is_purge(r["method"], r["path"]) for r in list(mem0.requests)):
            if time.monotonic() > deadline:
                self.figures["error"] = "no purge call reached mem0 within 20 s"
                return
            time.sleep(0.05)
        victim = self._worker_calling(mem0.httpd.server_address[1])
        os.kill(victim.pid, signal.SIGKILL)
        victim.wait(timeout=10)
        self.figures["killed_worker"] = self.running.workers.index(victim)
        self.up()

    def _worker_calling(self, port: int):
        for worker in self.running.workers:
            connected = psutil.Process(worker.pid).net_connections(kind="tcp")
            if any(c.raddr and c.raddr.port == port for c in connected):
                return worker
        raise RuntimeError("no worker holds a connection to mem0")

    def up(self) -> None:
        self.running.mem0.delay_when, self.running.mem0.delay = None, 0

    def failures(self) -> list[str]:
        from records.models import PurgeAttempt, PurgeJob
        from records.services.purges import NO_OUTCOME

        if "error" in self.figures:
            return [f"worker: {self.figures['error']}"]
        job = PurgeJob.objects.get(memory_id=self.memory)
        tries = list(PurgeAttempt.objects.filter(job=job).values_list("ok", "error"))
        self.figures["purge"] = {"status": job.status, "tries": len(tries),
                                 "done_tries": sum(ok for ok, _ in tries)}  # fmt: skip
        failures = []
        if job.status != "done" or sum(ok for ok, _ in tries) != 1:
            failures.append(f"worker: the killed purge is {job.status}, tries {tries}")
        if (False, NO_OUTCOME) not in tries:
            failures.append(f"worker: the killed try left no trace: {tries}")
        return failures


FAULTS: dict[str, type[Fault]] = {
    "redis": RedisRestart,
    "postgres": PostgresRestart,
    "worker": WorkerKilledMidPurge,
    "mem0": Mem0HangThenRefuse,
}


@contextmanager
def pointed_at(postgres: Postgres) -> Iterator[None]:
    """Django in this process on the private PostgreSQL, migrated; as before afterwards."""
    shared = connections.settings["default"]
    previous = {key: shared.get(key) for key in ("HOST", "PORT", "NAME", "USER", "PASSWORD")}
    private = {"HOST": postgres.socket_dir, "PORT": postgres.port, "NAME": postgres.database,
               "USER": "postgres", "PASSWORD": ""}  # fmt: skip
    connections.close_all()
    shared.update(private)
    connection.settings_dict.update(private)
    try:
        call_command("migrate", verbosity=0)
        yield
    finally:
        connections.close_all()
        shared.update(previous)
        connection.settings_dict.update(previous)


class Probe(threading.Thread):
    """``/healthz`` of each web process in turn, twice a second, counted per phase."""

    def __init__(self, bases: list[str], journal: Journal) -> None:
        super().__init__(daemon=True)
        self.bases, self.journal = bases, journal
        self.seen: dict[str, Counter] = {}
        self.slowest: dict[str, float] = {}
        self.stopping = threading.Event()
        self.healthy_at: float | None = None  # first 200 after the fault ended

    def run(self) -> None:
        turn = 0
        while not self.stopping.wait(0.5):
            turn += 1
            started = time.monotonic()
            try:
                answer = requests.get(self.bases[turn % len(self.bases)] + "/healthz", timeout=30)
                failed = [k for k, v in answer.json()["checks"].items() if v != "ok"]
                seen = " ".join([str(answer.status_code), *failed])
            except (requests.RequestException, ValueError, KeyError):
                seen = "no answer"
            phase = self.journal.phase
            self.seen.setdefault(phase, Counter())[seen] += 1
            took = time.monotonic() - started
            self.slowest[phase] = max(self.slowest.get(phase, 0.0), took)
            if phase in ("recovering", "after") and seen == "200" and self.healthy_at is None:
                self.healthy_at = time.monotonic()


def _inject(fault: Fault, journal: Journal, at: float, timeline: dict) -> None:
    """The fault's life, on its own thread: before, during, recovering, after."""
    time.sleep(at)
    journal.phase = "during"
    timeline["down"] = time.monotonic()
    try:
        fault.down(journal)
        time.sleep(max(0.0, timeline["down"] + OUTAGE - time.monotonic()))
    finally:
        fault.up()
        timeline["up"] = time.monotonic()
        journal.phase = "recovering"
    time.sleep(RECOVER_WITHIN)
    journal.phase = "after"
    fault.finish()


def _names(seen: str, expected: str) -> bool:
    """Whether a probe's answer ("503 database memory_providers") has the expected status
    and names the expected check (a check that cannot run while the database is down may be
    named beside it)."""
    status, *failed = seen.split()
    want_status, *want = expected.split()
    return status == want_status and set(want) <= set(failed) and (bool(want) or not failed)


def _phase_failures(fault: Fault, journal: Journal, probe: Probe) -> list[str]:
    """The rules of issue 19 on what the API and ``/healthz`` answered in each phase."""
    failures = []
    documented = f"503 unavailable {fault.dependency}"
    for phase, answers in journal.answers.items():
        for seen, n in answers.items():
            outage = seen.startswith("503") or seen.startswith("409 conflict write_unconfirmed")
            wrong = seen.startswith("5") and seen != documented
            if wrong or (outage and phase in ("before", "after")):
                failures.append(f"{phase}: the API answered {seen} ({n} times)")
        if max(journal.slowest[phase], probe.slowest.get(phase, 0)) > ANSWER_WITHIN:
            failures.append(f"{phase}: an answer took more than {ANSWER_WITHIN} s")
    if not any(s.startswith("2") for s in journal.answers.get("after", {})):
        failures.append("after: no call succeeded once the dependency was back")
    during = probe.seen.get("during", Counter())
    expected = f"{fault.healthz_status} {fault.healthz}" if fault.healthz else "200"
    if not any(_names(seen, expected) for seen in during):
        failures.append(f"during: /healthz never answered {expected}: {dict(during)}")
    if set(probe.seen.get("after", {"200": 1})) != {"200"}:
        failures.append(f"after: /healthz answered {dict(probe.seen['after'])}")
    return failures


def _restarted(running: Cluster, fault: Fault) -> list[str]:
    """Recovery by itself: every process but the killed worker is the one that started."""
    killed = fault.figures.get("killed_worker")
    alive = [*running.servers, *(w for n, w in enumerate(running.workers) if n != killed)]
    ended = [process for process in alive if process.poll() is not None]
    return [f"restart: {p.args[2:5]} ended (code {p.returncode})" for p in ended]


def _report(fault: Fault, journal: Journal, probe: Probe, timeline: dict) -> dict:
    phases = {
        phase: {
            "answers": dict(journal.answers.get(phase, {}).most_common()),
            "slowest_ms": round(journal.slowest.get(phase, 0) * 1000),
            "healthz": dict(probe.seen.get(phase, {})),
            "healthz_slowest_ms": round(probe.slowest.get(phase, 0) * 1000),
        }
        for phase in ("before", "during", "recovering", "after")
    }
    healthy = probe.healthy_at
    return {
        "outage_seconds": round(timeline.get("up", 0) - timeline.get("down", 0), 1),
        "phases": phases,
        "healthz_recovered_in_s": round(healthy - timeline["up"], 1) if healthy else None,
        "refused_writes": len(journal.refused),
        "resent_keys": len(journal.resent_keys),
        **fault.figures,
    }


def run_fault(name: str, agents: int, seconds: float, seed: int = 1) -> dict:
    """One load run with the fault ``name``; its figures and the checker's verdict."""
    journal = Journal(outages=True, phase="before")
    folder = Path(tempfile.mkdtemp(prefix="memoryhub-fault-"))
    with ExitStack() as stack:
        stack.callback(shutil.rmtree, folder, ignore_errors=True)
        postgres = Postgres(folder / "pg", database="load")
        stack.callback(postgres.cleanup)
        redis = Redis(folder)
        redis.start()
        stack.callback(redis.stop)
        stack.enter_context(pointed_at(postgres))
        running = stack.enter_context(
            cluster(redis.url, database_url=postgres.url, env=FAST_PURGES, beat=True)
        )
        setup = prepare(running, FAULTS[name].provider_config)
        fault = FAULTS[name](postgres, redis, running, setup)
        probe, timeline = Probe(running.bases, journal), {}
        probe.start()
        injector = threading.Thread(target=_inject, args=(fault, journal, seconds / 3, timeline))
        injector.start()
        elapsed = drive(setup, journal, agents, seconds, seed)
        injector.join()
        probe.stopping.set()
        connections.close_all()  # this process's connection may have died with PostgreSQL
        wait_for_purges(journal)
        stored = {pk: record["memory"] for pk, record in dict(running.mem0.records).items()}
        failures = [
            *checker.check(journal, stored),
            *_phase_failures(fault, journal, probe),
            *fault.failures(),
            *_restarted(running, fault),
        ]
        return {
            "fault": name,
            "agents": agents,
            **figures(journal, elapsed),
            **_report(fault, journal, probe, timeline),
            "verdict": "clean" if not failures else "failed",
            "failures": failures,
        }
