"""What erasing an end user leaves behind: audit rows name only a pseudonym, and the
threads it changed carry a new ETag."""

from __future__ import annotations

import logging
import re
from datetime import datetime

import pytest
from django.db import connection

from memoryhub import audit
from memoryhub.models import AuditEvent, EndUser, Thread
from tests.conftest import make_tenant
from tests.facts.conftest import run_for, save
from threads.services.threads import archive_thread, create_thread

ALICE = "alice@example.com"
PSEUDONYM_RE = re.compile(r"erased-[0-9a-f]{16}")


def rows_naming(workspace, text: str) -> list[tuple]:
    """Audit rows of the workspace holding ``text`` anywhere, as the erase test asks it."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT action, object_id, details::text FROM memoryhub_auditevent"
            " WHERE workspace_id = %s AND (details::text LIKE %s OR object_id LIKE %s)",
            [workspace.id, f"%{text}%", f"%{text}%"],
        )
        return cursor.fetchall()


def _time(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


def erase(api, external_id: str) -> None:
    response = api.delete(f"/api/v1/end-users/{external_id}")
    assert response.status_code == 200, response.content
    assert response.json()["verified"] is True, response.json()["remaining"]


def test_erasure_pseudonymises_the_person_in_audit_rows(tenant, agent, owner):
    _, alice = run_for(tenant, agent, ALICE)
    mine = save(alice, "users/{user}/", "alice v1")
    save(alice, "users/{user}/deep/", "alice v2", replaces=mine["id"])
    gone = save(alice, "users/{user}/old/", "short-lived")
    assert alice.delete(f"/v0/memory/facts/{gone['id']}").status_code == 204
    save(alice, "notes/", "a shared note")
    # A detail naming the person, and a file path in their folder, as other apps may write.
    audit.record(tenant.owner, "test.named", "thing", "t1", end_user=ALICE)
    audit.record(tenant.owner, "file.write", "file", f"mem_x:users/{ALICE}/notes.md")
    _, bob = run_for(tenant, agent, "bob@example.com")
    save(bob, "users/{user}/", "bob's")
    elsewhere = make_tenant("Elsewhere")
    _, other_alice = run_for(elsewhere, agent_of(elsewhere), ALICE)
    save(other_alice, "users/{user}/", "the other workspace's alice")
    assert len(rows_naming(tenant.workspace, ALICE)) == 6
    before = AuditEvent.objects.count()

    erase(owner, ALICE)

    assert rows_naming(tenant.workspace, ALICE) == []
    # The rows stay, under one pseudonym, so an operator can still follow the erased person.
    assert AuditEvent.objects.count() == before + 1  # + end_user.erase
    erased = AuditEvent.objects.get(workspace=tenant.workspace, action="end_user.erase")
    pseudonym = erased.details["pseudonym"]
    assert PSEUDONYM_RE.fullmatch(pseudonym)
    writes = AuditEvent.objects.filter(workspace=tenant.workspace, action="fact.write")
    paths = sorted(e.details["path"] for e in writes)
    assert paths == [
        "notes/",
        "users/bob@example.com/",
        f"users/{pseudonym}/",
        f"users/{pseudonym}/deep/",
        f"users/{pseudonym}/old/",
    ]
    deleted = AuditEvent.objects.get(workspace=tenant.workspace, action="fact.delete")
    assert deleted.details == {"path": f"users/{pseudonym}/old/"}
    assert deleted.object_id == gone["id"]
    named = AuditEvent.objects.get(action="test.named")
    assert named.details == {"end_user": pseudonym}
    assert AuditEvent.objects.get(action="file.write").object_id == (
        f"mem_x:users/{pseudonym}/notes.md"
    )
    # Another workspace's person of the same id is untouched.
    assert len(rows_naming(elsewhere.workspace, ALICE)) == 1
    # The pseudonym is keyed per workspace: the same id elsewhere gets another.
    erase(elsewhere.api(), ALICE)
    other = AuditEvent.objects.get(workspace=elsewhere.workspace, action="end_user.erase")
    assert other.details["pseudonym"] != pseudonym
    assert rows_naming(elsewhere.workspace, ALICE) == []


def agent_of(tenant):
    from tests.factories import create_agent

    return create_agent(tenant.owner, {"name": "Bot"})


@pytest.mark.parametrize(
    ("person", "neighbour"),
    [
        ("alice", "alice.smith"),
        ("alice", "x:alice"),
        ("alice", "alice-2"),
        ("alice", "Alice"),
        ("alice", "bob_alice"),
        ("j.doe@example.com", "jxdoe@example.com"),  # "." is no wildcard
        ("a_b", "axb"),  # nor "_"
        ("Ayşe_Yılmaz", "Ayşe_Yılmaz2"),
    ],
)
def test_erasure_leaves_neighbouring_ids_alone(tenant, agent, owner, person, neighbour):
    _, erased = run_for(tenant, agent, person)
    save(erased, "users/{user}/", "the person's")
    _, other = run_for(tenant, agent, neighbour)
    save(other, "users/{user}/", "the neighbour's")
    save(other, f"users/{{user}}/{person}/", "a subfolder named like the person")
    save(other, f"{person}/", "a shared folder named like the person")

    erase(owner, person)

    paths = set(
        AuditEvent.objects.filter(action="fact.write").values_list("details__path", flat=True)
    )
    pseudonym = AuditEvent.objects.get(action="end_user.erase").details["pseudonym"]
    assert paths == {
        f"users/{pseudonym}/",
        f"users/{neighbour}/",
        f"users/{neighbour}/{person}/",
        f"{person}/",  # a shared folder is not theirs: erasure leaves it (and its rows)
    }


def test_erasure_bumps_the_etag_of_every_thread_of_the_person(tenant, agent, owner, thread):
    done = create_thread(tenant.owner, agent.id, end_user="alice")
    archive_thread(tenant.owner, done.id, None)  # archived already: its end_user changes too
    before = {t: owner.get(f"/api/v1/threads/{t}") for t in (thread.id, done.id)}

    erase(owner, "alice")

    for thread_id, old in before.items():
        new = owner.get(f"/api/v1/threads/{thread_id}")
        assert new["ETag"] != old["ETag"]
        assert new.json()["etag"] == new["ETag"]
        assert _time(new.json()["updated_at"]) > _time(old.json()["updated_at"])
        assert new.json()["status"] == "archived" and new.json()["end_user"] is None
    stored = Thread.objects.get(pk=thread.id)
    assert stored.version == int(before[thread.id]["ETag"].strip('"')) + 1


def test_a_stale_etag_after_erasure_is_412(tenant, owner, thread):
    old = owner.get(f"/api/v1/threads/{thread.id}")["ETag"]
    erase(owner, "alice")
    response = owner.post(f"/api/v1/threads/{thread.id}/archive", HTTP_IF_MATCH=old)
    assert response.status_code == 412


def test_a_mount_change_after_erasure_is_refused(tenant, owner, thread):
    old = owner.get(f"/api/v1/threads/{thread.id}/memories")["ETag"]
    erase(owner, "alice")
    response = owner.post(
        f"/api/v1/threads/{thread.id}/memories",
        {"name": "team", "memory_id": "mem_x"},
        HTTP_IF_MATCH=old,
    )
    # An archived thread answers 409 before any If-Match is looked at (RFC 9110 13.2.1).
    assert response.status_code == 409
    assert owner.get(f"/api/v1/threads/{thread.id}/memories")["ETag"] != old


def test_erasure_logs_no_id(tenant, agent, owner, caplog):
    _, alice = run_for(tenant, agent, ALICE)
    save(alice, "users/{user}/", "alice's")
    with caplog.at_level(logging.DEBUG):
        erase(owner, ALICE)
        assert owner.delete(f"/api/v1/end-users/{ALICE}").status_code == 404
    assert ALICE not in caplog.text


def test_erasing_in_the_admin_leaves_no_log_entry_naming_the_person(
    tenant, agent, django_user_model
):
    from django.contrib.admin.models import LogEntry
    from django.test import Client

    run_for(tenant, agent, ALICE)
    person = EndUser.objects.get(external_id=ALICE)
    staff = Client()
    staff.force_login(django_user_model.objects.create_superuser("ops", "ops@x.test", "pw"))
    url = f"/admin/memoryhub/enduser/{person.pk}/delete/"
    assert staff.post(url, {"post": "yes"}).status_code == 302
    assert not EndUser.objects.exists()
    entry = LogEntry.objects.get(object_id=person.pk)  # the deletion is still logged
    assert entry.object_repr == person.pk  # by the internal id alone
    assert not LogEntry.objects.filter(object_repr__contains=ALICE).exists()


def test_an_unhandled_error_logs_the_route_not_the_persons_id(owner, monkeypatch, caplog):
    """The request that erases a person must not leave their id in the error log."""
    from memoryhub.services import end_users

    def fail(*args, **kwargs):
        raise RuntimeError("database went away")

    monkeypatch.setattr(end_users, "erase_end_user", fail)
    owner.raise_request_exception = False
    response = owner.delete("/api/v1/end-users/alice@example.com")
    assert response.status_code == 500 and response.json()["error"]["code"]
    logged = "\n".join(record.getMessage() for record in caplog.records)
    assert "Internal Server Error: api/v1/end-users/<str:end_user>" in logged
    assert "alice@example.com" not in logged


def test_a_file_path_full_of_the_id_cannot_block_the_erasure(tenant, agent, owner):
    """A pseudonym is longer than a short id: a 1,024-byte path repeating it must still fit."""
    run_for(tenant, agent, "a")
    audit.record(tenant.owner, "file.write", "file", "mem_x:" + "users/a/" * 127 + "f")
    response = owner.delete("/api/v1/end-users/a")
    assert response.status_code == 200, response.content
    assert not EndUser.objects.filter(external_id="a").exists()
    row = AuditEvent.objects.get(action="file.write")
    assert "users/a/" not in row.object_id and row.object_id.startswith("mem_x:users/erased-")
