"""The self-hosted backend once against real mem0 (``mem0.Memory`` of the mem0ai package).

Needs the ``mem0`` extra (see the README); run these alone with ``pytest -m mem0``.
"""

from __future__ import annotations

import subprocess
import sys
import time

import pytest
from django.conf import settings

from memoryhub.models import Memory
from records import context
from records.models import PurgeJob
from records.services import providers
from tests import factories

pytestmark = [pytest.mark.mem0, pytest.mark.slow]

KEY, ADMIN_KEY = "m0sk_real-user-key", "real-admin-key"


@pytest.fixture(scope="module")
def real_mem0(tmp_path_factory):
    """The test server over mem0.Memory in its own process; yields its address."""
    data_dir = tmp_path_factory.mktemp("mem0")
    process = subprocess.Popen(
        [sys.executable, "-m", "support.fakes.real_mem0", str(data_dir), KEY, ADMIN_KEY],
        cwd=settings.BASE_DIR,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = process.stdout.readline()  # blocks until the model is loaded
        assert line.startswith("PORT "), process.stderr.read()[-3000:]
        yield f"http://127.0.0.1:{int(line.split()[1])}"
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()


@pytest.fixture
def provider(tenant, real_mem0):
    return factories.create_provider(
        tenant.owner,
        {
            "type": "mem0_oss",
            "name": "real mem0",
            "config": {"base_url": real_mem0, "read_timeout": 60},
            "credential": {"api_key": KEY, "admin_api_key": ADMIN_KEY},
        },
    )


def test_records_on_real_mem0_end_to_end(
    owner, runner, reader, provider, eager_celery, django_capture_on_commit_callbacks
):
    assert owner.post(f"/api/v1/memory-providers/{provider.id}/test").status_code == 200
    created = owner.post(
        "/api/v1/memories",
        {"name": "User facts", "type": "mem0_oss", "provider_id": provider.id},
    )
    assert created.status_code == 201, created.content
    memory = created.json()
    records_url = f"/api/v1/memories/{memory['id']}/records"

    texts = [
        "The user prefers metric units",
        "The user's favourite drink is green tea",
        "The user lives in Izmir, Turkey",
    ]
    added = []
    for text in texts:
        response = runner.post(records_url, {"text": text, "metadata": {"source": "test"}})
        assert response.status_code == 201, response.content
        added.append(response.json())
    assert [r["text"] for r in added] == texts
    assert all(r["metadata"] == {"source": "test"} for r in added)

    listed = reader.get(records_url + "?limit=2").json()
    assert listed["count"] == 3 and len(listed["results"]) == 2

    found = reader.post(records_url + "/search", {"query": "Which units of measure?", "k": 1})
    assert found.status_code == 200
    best = found.json()["results"][0]
    assert best["text"] == "The user prefers metric units"
    assert 0 < best["score"] <= 1

    tea = added[1]["id"]
    changed = runner.patch(f"{records_url}/{tea}", {"text": "The user's favourite drink is coffee"})
    assert changed.status_code == 200, changed.content
    assert reader.get(f"{records_url}/{tea}").json()["text"].endswith("coffee")
    assert runner.delete(f"{records_url}/{tea}").status_code == 204
    assert reader.get(f"{records_url}/{tea}").status_code == 404

    row = Memory.objects.select_related("provider").get(pk=memory["id"])
    block = context.recall(row, "Where does the user live?")
    assert 'trust="untrusted"' in block and "Izmir" in block

    with django_capture_on_commit_callbacks(execute=True):
        deleted = owner.delete(f"/api/v1/memories/{memory['id']}", HTTP_IF_MATCH=memory["etag"])
    assert deleted.status_code == 204
    job = PurgeJob.objects.get(memory_id=memory["id"])
    assert job.status == "done", job.last_error
    backend = providers.backend_of(provider)
    deadline = time.monotonic() + 10
    while backend.list(memory["namespace"], limit=10, offset=0).count and (
        time.monotonic() < deadline
    ):
        time.sleep(0.2)
    assert backend.list(memory["namespace"], limit=10, offset=0).count == 0
