"""Every command: --json, --help, clear refusals; the bootstrap commands and API keys."""

from __future__ import annotations

import json

import pytest
from django.core.management import CommandError

from memoryhub.models import ApiKey, Workspace
from tests.commands.conftest import run, run_json
from tests.conftest import Api


def test_create_workspace_prints_its_id_or_json(db):
    workspace_id = run("create_workspace", "Acme").strip()
    assert Workspace.objects.get(pk=workspace_id).name == "Acme"
    made = run_json("create_workspace", "Beta")
    assert Workspace.objects.get(pk=made["id"]).name == made["name"] == "Beta"


def test_create_api_key_by_workspace_name_and_json(db):
    workspace_id = run("create_workspace", "Acme").strip()
    made = run_json("create_api_key", "--workspace", "Acme", "--permissions", "read")
    assert made["workspace"] == workspace_id
    assert Api(key=made["secret"]).get("/api/v1/agents").status_code == 200


def test_api_keys_are_listed_without_secrets_and_revoked(db):
    workspace_id = run("create_workspace", "Acme").strip()
    secret = run("create_api_key", "--workspace", workspace_id, "--permissions", "read").strip()
    listed = run_json("list_api_keys", workspace_id)
    assert [row["permission"] for row in listed] == ["read"]
    assert secret not in run("list_api_keys", workspace_id)
    key_id = listed[0]["id"]
    assert run_json("revoke_api_key", key_id, "--dry-run")["state"] == "would be revoked"
    assert Api(key=secret).get("/api/v1/agents").status_code == 200
    assert run("revoke_api_key", key_id).strip() == f"{key_id} revoked"
    assert Api(key=secret).get("/api/v1/agents").status_code == 401
    assert run_json("list_api_keys", workspace_id) == []
    assert run_json("list_api_keys", workspace_id, "--all")[0]["revoked_at"]


@pytest.mark.parametrize(
    "args",
    [
        ("create_api_key", "--workspace", "ws_nope", "--permissions", "read"),
        ("list_api_keys", "ws_nope"),
        ("revoke_api_key", "key_nope"),
        ("create_workspace", "  "),
        ("purges", "--retry", "pj_nope"),
    ],
)
def test_bad_arguments_are_refused_and_change_nothing(db, args):
    with pytest.raises(CommandError):
        run(*args)
    assert not Workspace.objects.exists()
    assert not ApiKey.objects.exists()


def test_purges_lists_as_json(db):
    assert run_json("purges", "--status", "all") == []
    assert run("purges").splitlines()[0].startswith("id\tstatus")


def test_processes_exit_non_zero_on_bad_arguments_and_print_json(manage):
    refused = manage("create_api_key", "--workspace", "ws_nope", "--permissions", "read")
    assert refused.returncode == 1
    assert "no workspace 'ws_nope'" in refused.stderr
    made = manage("create_workspace", "Acme", "--json")
    assert made.returncode == 0, made.stderr
    assert Workspace.objects.get(pk=json.loads(made.stdout)["id"]).name == "Acme"
    helped = manage("revoke_api_key", "--help")
    assert "--dry-run" in helped.stdout and "--json" in helped.stdout


def test_the_maintenance_commands_as_processes(manage, tenant):
    rebuilt = manage("rebuild_search", "--json")
    assert rebuilt.returncode == 0, rebuilt.stderr
    assert json.loads(rebuilt.stdout) == {"facts": 0, "refolded": 0, "terms_recounted": False}
    pruned = manage("prune_history", tenant.workspace.id, "--keep", "1", "--dry-run", "--json")
    assert pruned.returncode == 0, pruned.stderr
    assert json.loads(pruned.stdout) == {"memories": [], "dry_run": True}
    refused = manage("prune_history", tenant.workspace.id)
    assert refused.returncode == 1 and "--keep" in refused.stderr
    listed = manage("list_api_keys", tenant.workspace.id, "--json")
    assert {key["permission"] for key in json.loads(listed.stdout)} == {"read", "run", "write"}


def test_demo_setup_makes_its_directory_and_prints_the_same_login_again(db, tmp_path):
    data = tmp_path / "not" / "there"
    first = run_json("demo_setup", "--data-dir", str(data))
    assert (data / "demo-credentials.json").exists()
    assert Workspace.objects.filter(pk=first["workspace_id"]).count() == 1
    assert run_json("demo_setup", "--data-dir", str(data)) == first
    assert Workspace.objects.count() == 1


def test_demo_setup_that_cannot_write_its_credentials_leaves_no_workspace(db, tmp_path):
    (tmp_path / "file").write_text("")  # a file where the directory should be
    with pytest.raises(CommandError, match="cannot write .*demo-credentials.json"):
        run("demo_setup", "--data-dir", str(tmp_path / "file" / "data"))
    assert not Workspace.objects.exists()
