"""Redis stops under a live server and starts again (issue 19).

A private ``redis-server`` that this test stops and starts on the same port, a real
gunicorn using it as the broker. While it is down ``/healthz`` answers 503 naming the
broker (within its timeouts, never a hang) and the API that needs no broker keeps
answering; when it is back ``/healthz`` recovers by itself.
"""

from __future__ import annotations

import shutil
import subprocess
import time
from pathlib import Path

import pytest

from memoryhub.embedded import free_port, port_open
from memoryhub.services.workspaces import create_api_key, create_workspace
from tests import workers
from tests.faults.conftest import gunicorn, timed, until

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


class Redis:
    def __init__(self, folder: Path) -> None:
        self.port, self.folder, self.process = free_port(), folder, None

    def start(self) -> None:
        binary = shutil.which("redis-server") or pytest.fail("redis-server is not installed")
        self.process = subprocess.Popen(  # noqa: S603 - a fixed binary and arguments
            [binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no", "--dir", str(self.folder)],
            stdout=subprocess.DEVNULL,
        )  # fmt: skip
        deadline = time.monotonic() + 10
        while not port_open("127.0.0.1", self.port):
            assert time.monotonic() < deadline, "redis-server did not start"
            time.sleep(0.05)

    def stop(self) -> None:
        workers.stop(self.process)


def test_a_broker_outage_shows_in_healthz_and_the_api_keeps_answering(tmp_path):
    workspace = create_workspace("Broker outage")
    auth = {"Authorization": f"Bearer {create_api_key(workspace, 'write')[1]}"}
    redis = Redis(tmp_path)
    redis.start()
    try:
        broker = f"redis://127.0.0.1:{redis.port}/0"
        log = tmp_path / "server.log"
        with gunicorn(log, DATABASE_URL=workers.tests_database_url(), REDIS_URL=broker) as (url, _):
            redis.stop()
            health = timed("GET", url + "/healthz")
            assert health.status_code == 503
            checks = health.json()["checks"]
            assert checks["broker"].startswith("error") and checks["database"] == "ok"
            created = timed("POST", url + "/api/v1/agents", json={"name": "A"}, headers=auth)
            assert created.status_code == 201, created.text
            assert timed("GET", url + "/api/v1/agents", headers=auth).status_code == 200

            redis.start()
            assert until(200, "GET", url + "/healthz").json()["checks"]["broker"] == "ok"
        assert "Traceback" not in log.read_text(), log.read_text()[-3000:]
    finally:
        redis.stop()
