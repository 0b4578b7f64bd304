"""PostgreSQL stops under a live server and starts again (issue 19).

A private PostgreSQL (the pgserver package's, on a Unix socket of its own) that this test
stops and starts, a real gunicorn on it. While the database is down every API request
answers the documented 503 promptly, never a 500 or a hang, and ``/healthz`` names the
database; when it is back the same server answers again by itself, and what was
acknowledged before the outage is still there.
"""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest
from django.conf import settings

from support.outages import Postgres
from tests.faults.conftest import environment, gunicorn, timed, until

pytestmark = pytest.mark.slow


def _manage(url: str, *args: str) -> str:
    done = subprocess.run(  # noqa: S603 - our own interpreter and arguments
        [sys.executable, "manage.py", *args],
        env=environment(DATABASE_URL=url),
        cwd=settings.BASE_DIR,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


@pytest.fixture
def outage(tmp_path):
    postgres = Postgres(tmp_path / "pg")
    try:
        _manage(postgres.url, "migrate", "--verbosity", "0")
        _manage(postgres.url, "create_workspace", "Outage")
        key = _manage(
            postgres.url, "create_api_key", "--workspace", "Outage", "--permissions", "write"
        )
        secret = key.strip().splitlines()[-1]
        with gunicorn(tmp_path / "server.log", DATABASE_URL=postgres.url) as (url, server):
            yield postgres, url, {"Authorization": f"Bearer {secret}"}, server
    finally:
        postgres.cleanup()
        shutil.rmtree(tmp_path / "pg", ignore_errors=True)


def test_an_outage_answers_503_and_the_server_recovers_by_itself(outage, tmp_path):
    postgres, url, auth, server = outage
    created = timed("POST", url + "/api/v1/agents", json={"name": "Before"}, headers=auth)
    assert created.status_code == 201, created.text
    agent = created.json()["id"]

    postgres.stop()
    for method, path, body in [
        ("GET", f"/api/v1/agents/{agent}", None),
        ("POST", "/api/v1/agents", {"name": "During"}),
        ("GET", "/api/v1/agents", None),
        ("GET", f"/api/v1/agents/{agent}", None),  # again, on a connection known broken
    ]:
        answer = timed(method, url + path, json=body, headers=auth)
        assert answer.status_code == 503, (path, answer.status_code, answer.text[:300])
        assert answer.headers["Content-Type"].startswith("application/json")
        assert answer.headers["Retry-After"] == "5"
        error = answer.json()["error"]
        assert (error["code"], error["dependency"]) == ("unavailable", "database")
    health = timed("GET", url + "/healthz")
    assert health.status_code == 503
    assert health.json()["checks"]["database"].startswith("error")
    assert health.json()["checks"]["broker"] == "ok"

    postgres.start()
    answer = until(200, "GET", url + "/api/v1/agents", headers=auth)
    names = [a["name"] for a in answer.json()["results"]]
    assert names == ["Before"], "the acknowledged write is there, the refused one is not"
    assert timed("GET", url + "/healthz").status_code == 200
    assert server.poll() is None, "the same server recovered, without a restart"
    log = (tmp_path / "server.log").read_text()
    assert "database unavailable" in log  # a warning line per refusal, not a traceback
    assert "Traceback" not in log, log[-3000:]
