"""``make run``: memoryhub on http://127.0.0.1:8000 with everything it needs.

Starts an embedded PostgreSQL when ``DATABASE_URL`` is unset (and nothing answers on
127.0.0.1:5432), migrates, creates the demo workspace, prints a demo API key and a panel
login, and runs a Celery worker and Celery beat (the periodic tasks: the purge sweep)
beside the web server (uvicorn serving ``hub.asgi``: the API, the panel and the MCP
server at ``/mcp``) until Ctrl-C. Once it answers, the demo data is seeded over the API
(``memoryhub.demo``), the first time only. Beat keeps its schedule file under the data folder.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import requests

from memoryhub import demo
from memoryhub.embedded import data_dir, ensure_database


def _manage(environ: dict, *args: str) -> None:
    subprocess.run([sys.executable, "manage.py", *args], env=environ, check=True)  # noqa: S603


def _wait_until_serving(base_url: str) -> None:
    for _ in range(120):
        try:
            if requests.get(f"{base_url}/healthz", timeout=5).ok:
                return
        except requests.RequestException:  # not listening yet, or still booting
            pass
        time.sleep(0.5)


def _seed_once(base_url: str) -> None:
    """Seed the demo workspace (the server answers by now); remembered in its credentials."""
    path = data_dir() / "demo-credentials.json"
    credentials = json.loads(path.read_text())
    if credentials.get("seeded"):
        return
    made = demo.seed(base_url, credentials["api_key"])
    path.write_text(json.dumps({**credentials, "seeded": True}, indent=2))
    print(
        f"demo seeded: agent {made.agent_id} with {len(made.facts)} facts, "
        f"a file memory with history, {len(made.thread_ids)} threads",
        flush=True,
    )


def main() -> int:
    environ = dict(os.environ)
    environ.setdefault("MEMORYHUB_ENV", "development")
    environ.setdefault("DEBUG", "1")
    environ.setdefault("MEMORYHUB_BROKER_DIR", str(data_dir() / "broker"))
    server = ensure_database(environ)
    port = environ.get("PORT", "8000")
    environ.setdefault("ALLOWED_HOSTS", "localhost,127.0.0.1")
    processes: list[subprocess.Popen] = []
    try:
        _manage(environ, "migrate", "--no-input", "-v", "0")
        base_url = f"http://127.0.0.1:{port}"
        _manage(environ, "demo_setup", "--data-dir", str(data_dir()), "--base-url", base_url)
        broker = "Redis" if environ.get("REDIS_URL") else "the embedded filesystem broker"
        print(f"Celery worker and beat starting on {broker}", flush=True)
        processes.append(
            subprocess.Popen(  # noqa: S603
                [
                    sys.executable,
                    "-m",
                    "celery",
                    "-A",
                    "memoryhub",
                    "worker",
                    "--pool=threads",
                    "--concurrency=2",
                    "--loglevel=WARNING",
                ],
                env=environ,
            )
        )
        # Beat only sends messages, through the same broker (the filesystem one too).
        processes.append(
            subprocess.Popen(  # noqa: S603
                [
                    sys.executable,
                    "-m",
                    "celery",
                    "-A",
                    "memoryhub",
                    "beat",
                    "--loglevel=WARNING",
                    "--schedule",
                    str(data_dir() / "celerybeat-schedule"),
                ],
                env=environ,
            )
        )
        # One uvicorn process serves hub.asgi: the API and the panel through Django, and
        # the MCP server at /mcp, whose sessions live in that process.
        processes.append(
            subprocess.Popen(  # noqa: S603
                [
                    sys.executable,
                    "-m",
                    "uvicorn",
                    "hub.asgi:application",
                    "--host",
                    "127.0.0.1",
                    "--port",
                    port,
                ],
                env=environ,
            )
        )
        _wait_until_serving(base_url)
        _seed_once(base_url)
        print(f"memoryhub serving on {base_url} (Ctrl-C stops it)", flush=True)
        while all(p.poll() is None for p in processes):
            time.sleep(0.5)
        return 1
    except KeyboardInterrupt:
        return 0
    finally:
        for process in processes:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        for process in processes:
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()
        if server is not None:
            server.cleanup()


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    sys.exit(main())
