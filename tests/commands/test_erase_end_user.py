"""erase_end_user: the API's erasure from the command line, with a receipt and verification."""

from __future__ import annotations

import json

import pytest
from django.core.management import CommandError

from facts.models import Fact, FactVersion
from memoryhub import audit
from memoryhub.models import AuditEvent, EndUser, Run, Thread, ToolCall
from tests.commands.conftest import run, run_json
from tests.facts.conftest import run_for, save


@pytest.fixture
def alice(tenant, agent):
    """Alice with two facts (one rewritten), a run that said something, a tool call, audit."""
    run_, api = run_for(tenant, agent, "alice", input={"message": "my SSN is 123"})
    first = save(api, "users/{user}/", "alice likes tea")
    save(api, "users/{user}/", "alice likes green tea", replaces=first["id"])
    save(api, "users/{user}/", "alice lives in Oslo")
    save(api, "notes/", "shared note")
    ToolCall.objects.create(
        workspace=tenant.workspace, run=run_, call_id="c", name="memory_file_view",
        arguments_digest="x", status="done", content="SSN 123",
    )  # fmt: skip
    audit.record(tenant.owner, "file.write", "file", "mem_x:users/alice/notes.md")
    return run_


def _state() -> tuple:
    return (
        Fact.objects.count(),
        FactVersion.objects.count(),
        ToolCall.objects.count(),
        EndUser.objects.count(),
        sorted(Thread.objects.values_list("status", flat=True)),
        list(AuditEvent.objects.order_by("id").values_list("object_id", flat=True)),
    )


def test_the_receipt_counts_what_went_and_the_search_finds_nothing(tenant, alice):
    versions = FactVersion.objects.filter(fact__owner_id__isnull=False).count()
    receipt = run_json("erase_end_user", tenant.workspace.id, "alice")
    assert receipt["facts"] == 2 and receipt["versions"] == versions > 0
    assert receipt["threads_archived"] == 1 and receipt["runs_ended"] == 1
    assert receipt["runs_scrubbed"] == 1 and receipt["tool_call_answers"] == 1
    assert receipt["audit_details_pseudonymised"] >= 1
    assert receipt["verified"] is True and receipt["remaining"] == {}
    assert list(Fact.objects.values_list("text", flat=True)) == ["shared note"]
    assert Run.objects.get(pk=alice.id).input is None
    assert not AuditEvent.objects.filter(object_id__contains="users/alice").exists()


def test_the_text_receipt_says_it_was_verified(tenant, alice):
    text = run("erase_end_user", "Acme", "alice")  # the workspace by name
    assert "fact versions" in text and "tool-call answers" in text
    assert "verified: a search afterwards found nothing of theirs" in text
    assert "alice" not in text.replace("erase_end_user", "")


def test_dry_run_counts_exactly_and_changes_nothing(tenant, alice):
    before = _state()
    receipt = run_json("erase_end_user", tenant.workspace.id, "alice", "--dry-run")
    assert receipt["dry_run"] is True and receipt["facts"] == 2
    assert _state() == before
    assert "nothing changed" in run("erase_end_user", tenant.workspace.id, "alice", "--dry-run")


@pytest.mark.parametrize(
    ("workspace", "person", "message"),
    [("ws_nope", "alice", "no workspace"), ("Acme", "zoe", "no end user 'zoe'")],
)
def test_unknown_workspace_or_person_is_refused(tenant, alice, workspace, person, message):
    before = _state()
    with pytest.raises(CommandError, match=message):
        run("erase_end_user", workspace, person)
    assert _state() == before


def test_as_a_process(manage, tenant, agent):
    run_for(tenant, agent, "alice")
    refused = manage("erase_end_user", tenant.workspace.id, "zoe")
    assert refused.returncode == 1 and "no end user 'zoe'" in refused.stderr
    done = manage("erase_end_user", tenant.workspace.id, "alice", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["verified"] is True
    assert not EndUser.objects.exists()


def test_the_api_answers_the_same_receipt(tenant, alice, owner):
    response = owner.delete("/api/v1/end-users/alice")
    assert response.status_code == 200
    receipt = response.json()
    assert (receipt["facts"], receipt["tool_call_answers"], receipt["verified"]) == (2, 1, True)


def test_the_verification_reports_what_an_erase_left_behind(tenant, alice, monkeypatch):
    from memoryhub import extensions

    kept = [e for e in extensions.end_user_erasers if "facts" not in e.__module__]
    monkeypatch.setattr(extensions, "end_user_erasers", kept)  # an eraser that went missing
    with pytest.raises(CommandError, match="still found"):
        run("erase_end_user", tenant.workspace.id, "alice")
    assert Fact.objects.filter(text="alice lives in Oslo").exists()
