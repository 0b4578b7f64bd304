"""``make run``: memoryhub on http://127.0.0.1:8000 with everything it needs.

Starts an embedded PostgreSQL when ``DATABASE_URL`` is unset (and nothing answers on
127.0.0.1:5432), migrates, creates the demo workspace, prints a demo API key and a panel
login, and runs a Celery worker and Celery beat (the periodic tasks: the purge sweep)
beside the web server (uvicorn serving ``hub.asgi``: the API, the panel and the MCP
server at ``/mcp``) until Ctrl-C. Once it answers, the demo data is seeded over the API
(``memoryhub.demo``), the first time only. Beat keeps its schedule file under the data folder.

Ctrl-C or SIGTERM stops everything it started within ``STOP_WITHIN`` seconds, whatever it
is doing (starting PostgreSQL, migrating, seeding, serving), also when started as a
background job, whose SIGINT a shell ignores: the handlers are set here, not inherited.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING

import requests

from memoryhub import demo
from memoryhub.conf import env
from memoryhub.embedded import data_dir, ensure_database, running_database_url

if TYPE_CHECKING:
    from memoryhub.embedded import EmbeddedServer

STOP_WITHIN = 5  # seconds from Ctrl-C or SIGTERM until everything this run started is gone
GRACE = 2  # of which the children have this long to end on SIGTERM before SIGKILL


class Children:
    """The processes this run started, each leading a process group of its own: a stop
    reaches whatever they started in turn, and a terminal's Ctrl-C reaches only this
    process, which stops them in order."""

    def __init__(self) -> None:
        self.processes: list[subprocess.Popen] = []

    def start(self, args: Sequence[str], environ: dict[str, str]) -> subprocess.Popen:
        process = subprocess.Popen(args, env=environ, process_group=0)  # noqa: S603
        self.processes.append(process)
        return process

    def run(self, args: Sequence[str], environ: dict[str, str]) -> None:
        """One to its end, as ``subprocess.run(check=True)``."""
        process = self.start(args, environ)
        if process.wait() != 0:
            raise subprocess.CalledProcessError(process.returncode, list(args))
        self.processes.remove(process)

    def alive(self) -> bool:
        return all(process.poll() is None for process in self.processes)

    def stop(self, grace: float) -> None:
        """SIGTERM to every group, SIGKILL to what is left after ``grace`` seconds."""
        for process in self.processes:
            _signal_group(process, signal.SIGTERM)
        deadline = time.monotonic() + grace
        for process in self.processes:
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=max(deadline - time.monotonic(), 0))
        for process in self.processes:
            _signal_group(process, signal.SIGKILL)  # its own children too, if it left any
            process.wait()


def _signal_group(process: subprocess.Popen, signum: int) -> None:
    with contextlib.suppress(ProcessLookupError):  # the group has ended
        os.killpg(process.pid, signum)


def _stop_on_signals() -> None:
    """Ctrl-C and SIGTERM raise KeyboardInterrupt, even when SIGINT came in ignored."""
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.default_int_handler)


def _hold_signals() -> None:
    """While stopping: a second Ctrl-C must not cut the stop short and leave processes."""

    def ignore(signum: int, frame: FrameType | None) -> None:
        pass

    signal.signal(signal.SIGINT, ignore)
    signal.signal(signal.SIGTERM, ignore)


def _database(environ: dict[str, str]) -> EmbeddedServer | None:
    """The embedded PostgreSQL, started or reused; a stop while it starts stops it too."""
    pgdata = data_dir() / "pg"
    reused = environ.get("DATABASE_URL") or running_database_url() is not None
    first = not (pgdata / "PG_VERSION").exists()
    try:
        return ensure_database(environ)
    except KeyboardInterrupt:
        if not reused:
            _stop_postgres_in(pgdata)
            if first:  # an initdb cut short leaves a folder no later start can use
                shutil.rmtree(pgdata, ignore_errors=True)
        raise


def _stop_postgres_in(pgdata: Path) -> None:
    """What works on ``pgdata`` (initdb, pg_ctl, the postmaster pg_ctl left running): a
    postmaster's fast shutdown, then SIGKILL for what is still there after a second."""
    import psutil  # installed with pgserver

    def on_pgdata(process: psutil.Process) -> bool:
        return process.pid != os.getpid() and any(
            str(pgdata) in part for part in process.info["cmdline"] or ()
        )

    found = [p for p in psutil.process_iter(["cmdline"]) if on_pgdata(p)]
    for process in found:
        with contextlib.suppress(psutil.NoSuchProcess):
            process.send_signal(signal.SIGINT)
    _, alive = psutil.wait_procs(found, timeout=1)
    for process in alive:
        with contextlib.suppress(psutil.NoSuchProcess):
            process.kill()


def _wait_until_serving(base_url: str, children: Children) -> None:
    for _ in range(120):
        if not children.alive():
            return  # the loop below sees it and ends the run
        try:
            if requests.get(f"{base_url}/healthz", timeout=5).ok:
                return
        except requests.RequestException:  # not listening yet, or still booting
            pass
        time.sleep(0.5)


def _seed_once(base_url: str) -> None:
    """Seed the demo workspace (the server answers by now); remembered in its credentials.

    A stop while seeding leaves it unmarked: the next run seeds again."""
    path = data_dir() / "demo-credentials.json"
    credentials = json.loads(path.read_text())
    if credentials.get("seeded"):
        return
    print("seeding the demo (the first run only)", flush=True)
    made = demo.seed(base_url, credentials["api_key"])
    path.write_text(json.dumps({**credentials, "seeded": True}, indent=2))
    print(
        f"demo seeded: agent {made.agent_id} with {len(made.facts)} facts, "
        f"a file memory with history, {len(made.thread_ids)} threads",
        flush=True,
    )


def _serve(environ: dict[str, str], children: Children) -> int:
    """Migrate, set up the demo, start the worker, beat and uvicorn, seed, then wait."""
    port = env("PORT", 8000, environ=environ)
    base_url = f"http://127.0.0.1:{port}"
    python = sys.executable
    children.run([python, "manage.py", "migrate", "--no-input", "-v", "0"], environ)
    children.run(
        [python, "manage.py", "demo_setup", "--data-dir", str(data_dir()), "--base-url", base_url],
        environ,
    )
    broker = "Redis" if environ.get("REDIS_URL") else "the embedded filesystem broker"
    print(f"Celery worker and beat starting on {broker}", flush=True)
    celery = [python, "-m", "celery", "-A", "memoryhub"]
    children.start([*celery, "worker", "--pool=threads", "--concurrency=2", "--loglevel=WARNING"],
                   environ)  # fmt: skip
    # Beat only sends messages, through the same broker (the filesystem one too).
    schedule = str(data_dir() / "celerybeat-schedule")
    children.start([*celery, "beat", "--loglevel=WARNING", "--schedule", schedule], environ)
    # One uvicorn process serves hub.asgi: the API and the panel through Django, and the MCP
    # server at /mcp, whose sessions live in that process.
    children.start(
        [python, "-m", "uvicorn", "hub.asgi:application", "--host", "127.0.0.1",
         "--port", str(port)],
        environ,
    )  # fmt: skip
    _wait_until_serving(base_url, children)
    if children.alive():
        _seed_once(base_url)
        print(f"memoryhub serving on {base_url} (Ctrl-C stops it)", flush=True)
    while children.alive():
        time.sleep(0.5)
    return 1  # one of them ended: stop the others


def main() -> int:
    _stop_on_signals()
    children = Children()
    server: EmbeddedServer | None = None
    try:
        environ = dict(os.environ)
        environ.setdefault("MEMORYHUB_ENV", "development")
        environ.setdefault("DEBUG", "1")
        environ.setdefault("MEMORYHUB_BROKER_DIR", str(data_dir() / "broker"))
        environ.setdefault("ALLOWED_HOSTS", "localhost,127.0.0.1")
        server = _database(environ)
        return _serve(environ, children)
    except KeyboardInterrupt:
        return 0
    finally:
        _hold_signals()
        children.stop(GRACE)
        if server is not None:
            server.cleanup()


if __name__ == "__main__":
    sys.exit(main())
