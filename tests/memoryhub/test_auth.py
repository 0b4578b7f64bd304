"""Credentials and permissions: who may call what, and what the others get."""

import pytest
from django.utils import timezone

from memoryhub.models import ApiKey
from tests.conftest import Api, error_of


def test_missing_credentials_are_401_with_a_challenge(anonymous):
    response = anonymous.get("/api/v1/agents")
    assert response.status_code == 401
    assert error_of(response)["code"] == "unauthenticated"
    assert response["WWW-Authenticate"] == "Bearer"


@pytest.mark.parametrize(
    "header",
    ["Bearer mh_not-a-real-key", "Basic dXNlcjpwYXNz", "Bearer", "Token abc", "bearer  "],
)
def test_bad_credentials_are_401(db, header):
    client = Api()
    client.credentials(HTTP_AUTHORIZATION=header)
    response = client.get("/api/v1/agents")
    assert response.status_code == 401
    assert error_of(response)["code"] == "unauthenticated"


def test_revoked_key_is_401(tenant):
    key = ApiKey.objects.get(workspace=tenant.workspace, permission="write")
    key.revoked_at = timezone.now()
    key.save()
    assert tenant.api("write").get("/api/v1/agents").status_code == 401


def test_using_a_key_records_when_it_was_last_used(tenant, owner):
    assert owner.get("/api/v1/agents").status_code == 200
    key = ApiKey.objects.get(workspace=tenant.workspace, permission="write")
    assert key.last_used_at is not None


def test_the_secret_is_not_stored(tenant):
    for key in ApiKey.objects.filter(workspace=tenant.workspace):
        assert tenant.keys[key.permission] not in key.secret_hash


def test_a_run_token_is_no_api_key(run_api):
    response = run_api.get("/api/v1/agents")
    assert response.status_code == 401


# (method, path template, body, the weakest permission that may do it)
MATRIX = [
    ("get", "/api/v1/agents", None, "read"),
    ("post", "/api/v1/agents", {"name": "New"}, "write"),
    ("get", "/api/v1/agents/{agent}", None, "read"),
    ("patch", "/api/v1/agents/{agent}", {"name": "Renamed"}, "write"),
    ("delete", "/api/v1/agents/{agent}", None, "write"),
    ("get", "/api/v1/threads", None, "read"),
    ("post", "/api/v1/threads", {"agent_id": "{agent}"}, "run"),
    ("get", "/api/v1/threads/{thread}", None, "read"),
    ("post", "/api/v1/threads/{thread}/fork", None, "run"),
    ("post", "/api/v1/threads/{thread}/archive", None, "run"),
    ("post", "/api/v1/threads/{thread}/runs", {"input": "hi"}, "run"),
    ("get", "/api/v1/runs/{run}", None, "read"),
    ("post", "/api/v1/runs/{run}/end", None, "run"),
    ("get", "/api/v1/end-users", None, "read"),
    ("delete", "/api/v1/end-users/alice", None, "write"),
]
LEVELS = ["read", "run", "write"]


def _call(client, method, template, data, ids, etag='"1"'):
    path = template.format(**ids)
    if isinstance(data, dict):
        data = {k: v.format(**ids) if isinstance(v, str) else v for k, v in data.items()}
    return getattr(client, method)(path, data, HTTP_IF_MATCH=etag)


@pytest.mark.parametrize(("method", "template", "data", "needed"), MATRIX)
def test_each_endpoint_refuses_too_little_permission(
    tenant, agent, thread, running_run, method, template, data, needed
):
    ids = {"agent": agent.id, "thread": thread.id, "run": running_run[0].id}
    for level in LEVELS[: LEVELS.index(needed)]:
        response = _call(tenant.api(level), method, template, data, ids)
        assert response.status_code == 403, (level, response.content)
        assert error_of(response)["code"] == "forbidden"
    response = _call(tenant.api(needed), method, template, data, ids)
    assert response.status_code in (200, 201, 204), response.content


# The calls that name an object (listings are covered by the next test).
SCOPED = [row for row in MATRIX if "{" in row[1] + "".join(map(str, (row[2] or {}).values()))]


@pytest.mark.parametrize(("method", "template", "data", "needed"), SCOPED)
def test_another_workspace_cannot_see_or_touch_anything(
    stranger, agent, thread, running_run, method, template, data, needed
):
    ids = {"agent": agent.id, "thread": thread.id, "run": running_run[0].id}
    response = _call(stranger, method, template, data, ids)
    if method == "post" and template == "/api/v1/threads":
        assert response.status_code == 422  # the agent does not exist for them
    else:
        assert response.status_code == 404, response.content
        assert error_of(response)["code"] == "not_found"


def test_listings_are_scoped_by_workspace(stranger, agent, thread):
    for path in ("/api/v1/agents", "/api/v1/threads", "/api/v1/end-users"):
        response = stranger.get(path)
        assert response.status_code == 200
        assert response.json()["results"] == [], path


def test_a_run_token_sees_only_its_own_run(tenant, thread, running_run, ended_run):
    run, token = running_run
    client = Api(run_token=token)
    assert client.get(f"/api/v1/runs/{run.id}").json()["status"] == "running"
    assert client.get(f"/api/v1/runs/{ended_run[0].id}").status_code == 404
    assert client.post(f"/api/v1/runs/{ended_run[0].id}/end").status_code == 404


def test_a_run_token_can_end_its_own_run_and_then_only_read(running_run):
    run, token = running_run
    client = Api(run_token=token)
    assert client.post(f"/api/v1/runs/{run.id}/end").json()["status"] == "ended"
    assert client.get(f"/api/v1/runs/{run.id}").status_code == 200


def test_an_unknown_run_token_is_401(db):
    response = Api(run_token="rt_unknown").get("/api/v1/runs/run_abc")
    assert response.status_code == 401
