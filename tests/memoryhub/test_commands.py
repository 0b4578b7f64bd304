"""Operators bootstrap with create_workspace and create_api_key."""

from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from memoryhub.models import ApiKey, Workspace
from tests.conftest import Api


def _run(*args) -> str:
    out = StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def test_create_workspace_prints_its_id(db):
    workspace_id = _run("create_workspace", "Acme").strip()
    assert Workspace.objects.get(pk=workspace_id).name == "Acme"


def test_create_api_key_prints_the_secret_alone(db):
    workspace_id = _run("create_workspace", "Acme").strip()
    output = _run("create_api_key", "--workspace", workspace_id, "--permissions", "run")
    lines = output.splitlines()
    assert len(lines) == 1
    secret = lines[0]
    assert ApiKey.objects.get(workspace_id=workspace_id).permission == "run"
    client = Api(key=secret)
    assert client.get("/api/v1/agents").status_code == 200
    assert client.post("/api/v1/agents", {"name": "x"}).status_code == 403


def test_create_api_key_refuses_bad_input(db):
    with pytest.raises(CommandError):
        _run("create_api_key", "--workspace", "ws_nope", "--permissions", "read")
    workspace_id = _run("create_workspace", "Acme").strip()
    with pytest.raises(CommandError):
        _run("create_api_key", "--workspace", workspace_id, "--permissions", "admin")
    with pytest.raises(CommandError):
        _run("create_workspace", "  ")
    assert not ApiKey.objects.exists()
