"""Redis stops under a live server and starts again (issue 19).

A private ``redis-server`` that this test stops and starts on the same port, a real
gunicorn using it as the broker. While it is down ``/healthz`` answers 503 naming the
broker (within its timeouts, never a hang) and the API that needs no broker keeps
answering; when it is back ``/healthz`` recovers by itself.
"""

from __future__ import annotations

import pytest

from memoryhub.services.workspaces import create_api_key, create_workspace
from support import workers
from support.outages import Redis
from tests.faults.conftest import gunicorn, timed, until

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def test_a_broker_outage_shows_in_healthz_and_the_api_keeps_answering(tmp_path):
    workspace = create_workspace("Broker outage")
    auth = {"Authorization": f"Bearer {create_api_key(workspace, 'write')[1]}"}
    redis = Redis(tmp_path)
    redis.start()
    try:
        broker = redis.url
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
