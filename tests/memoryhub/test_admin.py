"""The Django admin: every change with a rule goes through its service, as the staff user.

Each test logs in a superuser and goes through the admin's own URLs, posting what a browser
would post (the change form's own fields, parsed from the page, with some of them changed).
"""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser

import pytest
from django.contrib.admin.utils import quote
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from facts.models import Fact, FactVersion
from memoryhub.ids import hash_secret
from memoryhub.models import (
    Agent,
    ApiKey,
    AuditEvent,
    EndUser,
    Memory,
    MemoryProvider,
    Run,
    Thread,
    Workspace,
)
from records.models import ProviderOutage, PurgeJob
from support.fakes.mem0 import OssServer
from tests import factories
from tests.conftest import Api, make_tenant
from tests.factories import create_agent
from tests.facts.conftest import run_for, save
from tests.records.conftest import OSS_ADMIN_KEY, OSS_KEY, record_memory
from threads.models import ToolCall
from threads.services.runs import accept_run
from threads.services.threads import create_thread

ADMIN = "/admin/memoryhub"


class _FormFields(HTMLParser):
    """The name=value pairs a browser would post from a page's forms."""

    def __init__(self) -> None:
        super().__init__()
        self.data: dict[str, str] = {}
        self._select: str | None = None
        self._selected = False
        self._textarea: str | None = None

    def handle_starttag(self, tag: str, attrs: list) -> None:
        a = dict(attrs)
        name = a.get("name")
        if tag == "input" and name and a.get("type") not in ("submit", "button", "file"):
            if a.get("type") != "checkbox" or "checked" in a:
                self.data[name] = a.get("value") or ("on" if a.get("type") == "checkbox" else "")
        elif tag == "select" and name:
            self._select, self._selected = name, False
        elif tag == "option" and self._select:
            if "selected" in a or self._select not in self.data:  # first option by default
                if not self._selected:
                    self.data[self._select] = a.get("value") or ""
                self._selected = self._selected or "selected" in a
        elif tag == "textarea" and name:
            self._textarea = name
            self.data[name] = ""

    def handle_endtag(self, tag: str) -> None:
        if tag == "select":
            self._select = None
        elif tag == "textarea" and self._textarea:
            # Browsers drop the newline that follows <textarea>.
            self.data[self._textarea] = self.data[self._textarea].removeprefix("\n")
            self._textarea = None

    def handle_data(self, data: str) -> None:
        if self._textarea:
            self.data[self._textarea] += data


def form_of(response) -> dict[str, str]:
    assert response.status_code == 200, response.status_code
    parser = _FormFields()
    parser.feed(response.content.decode())
    return parser.data


def post_change(staff: Client, url: str, **changes):
    """POST the change form at ``url`` as the page shows it, with ``changes``."""
    data = form_of(staff.get(url))
    data.update({k: str(v) for k, v in changes.items()})
    response = staff.post(url, data)
    assert response.status_code in (200, 302, 403), response.status_code
    return response


def messages_of(response) -> str:
    return " ".join(str(m) for m in response.context["messages"]) if response.context else ""


@pytest.fixture
def staff(db, django_user_model) -> Client:
    user = django_user_model.objects.create_superuser("ops", "ops@example.com", "pw")
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def provider(tenant, settings):
    """A self-hosted mem0 provider on the local fake server."""
    settings.MEMORYHUB_SETTINGS = {
        **settings.MEMORYHUB_SETTINGS,
        "outbound.allow_private": True,
        "outbound.allow_http": True,
    }
    server = OssServer(api_key=OSS_KEY, admin_key=OSS_ADMIN_KEY).start()
    yield factories.create_provider(
        tenant.owner,
        {
            "type": "mem0_oss",
            "name": "self-hosted",
            "config": {"base_url": server.url, "read_timeout": 1},
            "credential": {"api_key": OSS_KEY, "admin_api_key": OSS_ADMIN_KEY},
        },
    )
    server.stop()


def staff_events(action: str):
    return AuditEvent.objects.filter(action=action, principal_type="staff", principal_id="user:ops")


# -- end users ------------------------------------------------------------------------------


def _alice_with_memories(tenant, agent, run_api, running_run) -> EndUser:
    first = save(run_api, "users/{user}/", "alice likes tea")
    save(run_api, "users/{user}/", "alice likes green tea", replaces=first["id"])
    save(run_api, "notes/", "shared note")
    run = running_run[0]
    ToolCall.objects.create(
        workspace_id=run.workspace_id,
        run=run,
        call_id="c1",
        name="memory_file_view",
        arguments_digest="x",
        status="done",
        content="alice said her SSN",
    )
    return EndUser.objects.get(external_id="alice")


def test_deleting_an_end_user_erases_them_after_a_confirmation_with_counts(
    staff, tenant, agent, run_api, running_run
):
    alice = _alice_with_memories(tenant, agent, run_api, running_run)
    facts = Fact.objects.filter(owner_id=alice.id).count()
    versions = FactVersion.objects.filter(fact__owner_id=alice.id).count()
    assert facts == 1 and versions == 2
    url = f"{ADMIN}/enduser/{quote(alice.pk)}/delete/"

    page = staff.get(url).content.decode()
    for line in (
        "facts (in users/&lt;id&gt;/, every agent): 1",
        "fact versions: 2",
        "threads archived: 1",
        "running runs ended: 1",
        "runs scrubbed (input, context, tools): 1",
        "tool-call answers: 1",
    ):
        assert line in page, line
    assert EndUser.objects.filter(pk=alice.pk).exists()  # a GET changes nothing

    response = staff.post(url, {"post": "yes"})
    assert response.status_code == 302
    assert not EndUser.objects.filter(pk=alice.pk).exists()
    assert not Fact.objects.filter(owner_id=alice.id).exists()
    assert not FactVersion.objects.filter(fact__owner_id=alice.id).exists()
    assert set(Fact.objects.values_list("text", flat=True)) == {"shared note"}
    run = Run.objects.get(pk=running_run[0].pk)
    assert run.input is None and run.status == "ended"
    assert not ToolCall.objects.filter(run=run).exists()
    assert Thread.objects.get(pk=run.thread_id).status == "archived"
    assert staff_events("end_user.erase").filter(object_id=alice.id).count() == 1


def test_a_staff_user_with_the_longest_username_can_erase(
    tenant, agent, run_api, running_run, django_user_model
):
    """Django allows 150-character usernames: the audit's principal id must hold them."""
    name = "o" * 150
    client = Client()
    client.force_login(django_user_model.objects.create_superuser(name, "o@example.com", "pw"))
    alice = _alice_with_memories(tenant, agent, run_api, running_run)
    response = client.post(f"{ADMIN}/enduser/{quote(alice.pk)}/delete/", {"post": "yes"})
    assert response.status_code == 302
    assert not EndUser.objects.filter(pk=alice.pk).exists()
    assert AuditEvent.objects.get(action="end_user.erase").principal_id == f"user:{name}"


def test_bulk_delete_of_end_users_erases_each_of_them(staff, tenant, agent, run_api, running_run):
    alice = _alice_with_memories(tenant, agent, run_api, running_run)
    _, bob = run_for(tenant, agent, "bob")
    save(bob, "users/{user}/", "bob likes coffee")
    chosen = list(EndUser.objects.values_list("pk", flat=True))
    url = f"{ADMIN}/enduser/"

    page = staff.post(url, {"action": "delete_selected", "_selected_action": chosen})
    assert page.status_code == 200 and "fact versions: 2" in page.content.decode()
    assert EndUser.objects.count() == 2

    staff.post(url, {"action": "delete_selected", "_selected_action": chosen, "post": "yes"})
    assert not EndUser.objects.exists()
    assert not Fact.objects.filter(owner_id__isnull=False).exists()
    assert Run.objects.get(pk=running_run[0].pk).input is None
    assert staff_events("end_user.erase").count() == 2
    # A person who comes back starts with nothing of the old one.
    _, again = run_for(tenant, agent, "alice")
    assert again.get("/v0/memory/facts?path=users/{user}/").json()["facts"] == []
    assert alice.id not in set(Fact.objects.values_list("owner_id", flat=True))


# -- memories -------------------------------------------------------------------------------


def test_deleting_a_record_memory_writes_its_purge_job(staff, tenant, provider):
    memory = record_memory(tenant, provider)
    url = f"{ADMIN}/memory/{quote(memory.pk)}/delete/"
    page = staff.get(url).content.decode()
    assert "will be purged" in page and "ns-1" in page

    assert staff.post(url, {"post": "yes"}).status_code == 302
    assert not Memory.objects.filter(pk=memory.pk).exists()
    job = PurgeJob.objects.get(memory_id=memory.pk)
    assert (job.provider_id, job.namespace, job.status) == (provider.pk, "ns-1", "pending")
    assert staff_events("memory.delete").filter(object_id=memory.pk).exists()


def test_bulk_delete_of_memories_goes_through_the_service(staff, tenant, owner, provider):
    records = record_memory(tenant, provider)
    files = owner.post("/api/v1/memories", {"name": "Team"}).json()["id"]
    put = owner.put(f"/api/v1/memories/{files}/files/notes.md", {"content": "hello"})
    assert put.status_code == 201
    url = f"{ADMIN}/memory/"
    chosen = [records.pk, files]

    page = staff.post(url, {"action": "delete_selected", "_selected_action": chosen})
    text = page.content.decode()
    assert "will be purged" in text and "Files: 1 (5 bytes)" in text and "Revisions: 1" in text

    staff.post(url, {"action": "delete_selected", "_selected_action": chosen, "post": "yes"})
    assert not Memory.objects.exists()
    assert PurgeJob.objects.filter(memory_id=records.pk).exists()
    assert staff_events("memory.delete").count() == 2


def test_a_file_memory_keeps_its_counters_and_workspace(staff, tenant, other_tenant, owner):
    memory_id = owner.post("/api/v1/memories", {"name": "Team"}).json()["id"]
    owner.put(f"/api/v1/memories/{memory_id}/files/notes.md", {"content": "hello"})
    before = Memory.objects.get(pk=memory_id)
    url = f"{ADMIN}/memory/{quote(memory_id)}/change/"
    page = staff.get(url).content.decode()
    for field in ("workspace", "file_count", "content_bytes", "history_bytes", "kind", "type"):
        assert f'name="{field}"' not in page, field
    post_change(
        staff,
        url,
        labels='["x"]',
        always_load='["notes.md"]',
        workspace=other_tenant.workspace.pk,
        file_count=0,
        content_bytes=0,
        history_bytes=0,
        kind="record",
        type="mem0_oss",
        version=1,
    )
    after = Memory.objects.get(pk=memory_id)
    fields = ("workspace_id", "file_count", "content_bytes", "history_bytes", "kind", "type")
    assert [getattr(after, f) for f in fields] == [getattr(before, f) for f in fields]
    assert after.files.get().workspace_id == tenant.workspace.pk
    assert (after.labels, after.version) == (["x"], before.version + 1)


def test_a_record_memory_keeps_its_provider_and_namespace(staff, tenant, other_tenant, provider):
    memory = record_memory(tenant, provider)
    other = MemoryProvider.objects.create(workspace=other_tenant.workspace, type="mem0_oss")
    url = f"{ADMIN}/memory/{quote(memory.pk)}/change/"
    page = staff.get(url).content.decode()
    for field in ("workspace", "provider", "namespace", "kind", "type"):
        assert f'name="{field}"' not in page, field
    post_change(
        staff,
        url,
        labels='["x"]',
        namespace="someone-elses",
        provider=other.pk,
        workspace=other_tenant.workspace.pk,
    )
    after = Memory.objects.get(pk=memory.pk)
    assert (after.namespace, after.provider_id, after.workspace_id) == (
        "ns-1",
        provider.pk,
        tenant.workspace.pk,
    )


def test_editing_a_memory_goes_through_its_service(staff, tenant, owner):
    memory_id = owner.post("/api/v1/memories", {"name": "Team"}).json()["id"]
    url = f"{ADMIN}/memory/{quote(memory_id)}/change/"
    post_change(staff, url, name="Team notes", labels='["ops"]')
    memory = Memory.objects.get(pk=memory_id)
    assert (memory.name, memory.labels, memory.version) == ("Team notes", ["ops"], 2)
    assert staff_events("memory.update").filter(object_id=memory_id).exists()
    # What the service refuses is an error message on the page, never a 500.
    response = post_change(staff, url, labels='"not a list"')
    assert Memory.objects.get(pk=memory_id).labels == ["ops"]
    assert "labels must be a list" in messages_of(staff.get(response.get("Location") or url))


# -- runs, threads, agents ------------------------------------------------------------------


def test_an_ended_run_cannot_be_set_running_again(staff, ended_run):
    run, token = ended_run
    post_change(
        staff,
        f"{ADMIN}/run/{quote(run.pk)}/change/",
        status="running",
        ended_at_0="",
        ended_at_1="",
    )
    assert Run.objects.get(pk=run.pk).status == "ended"
    write = Api(run_token=token).post("/v0/memory/facts", {"path": "notes/", "text": "again"})
    assert write.status_code == 401


@pytest.mark.parametrize("model", ["agent", "thread", "run"])
def test_the_workspace_of_agents_threads_and_runs_never_changes(
    staff, tenant, other_tenant, running_run, model
):
    run = running_run[0]
    obj = {"agent": run.agent, "thread": run.thread, "run": run}[model]
    extra = {}
    if model == "agent":  # the form needs a mount to be valid today
        team = Memory.objects.create(workspace=tenant.workspace, kind="file", type="postgres")
        extra["memory_mounts"] = json.dumps([{"name": "team", "memory_id": team.pk}])
    url = f"{ADMIN}/{model}/{quote(obj.pk)}/change/"
    post_change(staff, url, workspace=other_tenant.workspace.pk, **extra)
    assert type(obj).objects.get(pk=obj.pk).workspace_id == tenant.workspace.pk


def test_ending_runs_and_archiving_threads_are_actions_of_their_services(
    staff, tenant, thread, running_run
):
    run, token = running_run
    page = staff.post(f"{ADMIN}/run/", {"action": "end_runs", "_selected_action": [run.pk]})
    assert page.status_code == 200 and Run.objects.get(pk=run.pk).status == "running"
    staff.post(f"{ADMIN}/run/", {"action": "end_runs", "_selected_action": [run.pk], "post": "yes"})
    assert Run.objects.get(pk=run.pk).status == "ended"
    write = Api(run_token=token).post("/v0/memory/facts", {"path": "notes/", "text": "x"})
    assert write.status_code == 401
    assert staff_events("run.end").filter(object_id=run.pk).exists()

    data = {"action": "archive_threads", "_selected_action": [thread.pk], "post": "yes"}
    staff.post(f"{ADMIN}/thread/", data)
    assert Thread.objects.get(pk=thread.pk).status == "archived"
    assert staff_events("thread.archive").filter(object_id=thread.pk).exists()


def test_agents_change_and_delete_through_their_service(staff, tenant, other_tenant, agent):
    url = f"{ADMIN}/agent/{quote(agent.pk)}/change/"
    post_change(staff, url, name="Helper")
    assert Agent.objects.get(pk=agent.pk).version == 2
    assert staff_events("agent.update").filter(object_id=agent.pk).exists()
    # A mount of another workspace's memory is refused, as the API refuses it.
    foreign = Memory.objects.create(workspace=other_tenant.workspace, kind="file", type="postgres")
    mounts = f'[{{"name": "x", "memory_id": "{foreign.pk}", "access": "read"}}]'
    response = post_change(staff, url, memory_mounts=mounts)
    assert Agent.objects.get(pk=agent.pk).memory_mounts == []
    assert "names no memory of this workspace" in messages_of(
        staff.get(response.get("Location") or url)
    )

    assert staff.get(f"{ADMIN}/agent/{quote(agent.pk)}/delete/").status_code == 200
    staff.post(f"{ADMIN}/agent/{quote(agent.pk)}/delete/", {"post": "yes"})
    assert not Agent.objects.filter(pk=agent.pk).exists()
    assert staff_events("agent.delete").filter(object_id=agent.pk).exists()


def test_adding_agents_memories_and_workspaces_goes_through_their_services(staff, tenant, provider):
    def add(model: str, **fields):
        data = form_of(staff.get(f"{ADMIN}/{model}/add/"))
        data.update({k: str(v) for k, v in fields.items()})
        return staff.post(f"{ADMIN}/{model}/add/", data)

    assert add("workspace", name="  Beta  ").status_code == 302
    assert Workspace.objects.filter(name="Beta").exists()  # the service strips the name

    add("agent", workspace=tenant.workspace.pk, name="Helper")
    agent = Agent.objects.get(name="Helper")
    assert agent.toolset == {"enabled": True, "disabled_tools": []}  # the service's default
    assert staff_events("agent.create").filter(object_id=agent.pk).exists()

    add(
        "memory", workspace=tenant.workspace.pk, type="mem0_oss", name="Prefs", provider=provider.pk
    )
    memory = Memory.objects.get(name="Prefs")
    assert (memory.kind, memory.provider_id) == ("record", provider.pk)
    assert memory.namespace.startswith("a13n-")  # named by the service, from the memory's id
    assert staff_events("memory.create").filter(object_id=memory.pk).exists()

    # What the service refuses is an error message, and nothing is made.
    response = add("memory", workspace=tenant.workspace.pk, type="nope", name="Bad")
    assert not Memory.objects.filter(name="Bad").exists()
    assert "type must be one of" in messages_of(staff.get(response["Location"]))


# -- API keys -------------------------------------------------------------------------------


def test_adding_an_api_key_shows_its_secret_once(staff, tenant):
    url = f"{ADMIN}/apikey/add/"
    data = form_of(staff.get(url))
    data.update(workspace=tenant.workspace.pk, name="ci", permission="read")
    response = staff.post(url, data)
    match = re.search(r'id="api-key-secret">([^<]+)<', response.content.decode())
    assert match, response.content.decode()[:2000]
    secret = match.group(1)
    assert "no-store" in response["Cache-Control"]
    assert Api(key=secret).get("/api/v1/agents").status_code == 200

    key = ApiKey.objects.get(name="ci")
    assert key.secret_hash == hash_secret(secret) and key.permission == "read"
    for page in (f"{ADMIN}/apikey/{quote(key.pk)}/change/", f"{ADMIN}/apikey/"):
        assert secret not in staff.get(page).content.decode()
    assert staff_events("api_key.create").filter(object_id=key.pk).exists()


def test_revoking_api_keys_is_a_confirmed_action(staff, tenant):
    secret = tenant.keys["write"]
    key = ApiKey.objects.get(secret_hash=hash_secret(secret))
    url = f"{ADMIN}/apikey/"

    page = staff.post(url, {"action": "revoke_keys", "_selected_action": [key.pk]})
    assert page.status_code == 200 and key.pk in page.content.decode()
    assert Api(key=secret).get("/api/v1/agents").status_code == 200

    staff.post(url, {"action": "revoke_keys", "_selected_action": [key.pk], "post": "yes"})
    assert Api(key=secret).get("/api/v1/agents").status_code == 401
    assert staff_events("api_key.revoke").filter(object_id=key.pk).exists()
    # Nor can the date be cleared by hand to bring the key back.
    post_change(staff, f"{ADMIN}/apikey/{quote(key.pk)}/change/", revoked_at_0="", revoked_at_1="")
    assert ApiKey.objects.get(pk=key.pk).revoked_at is not None
    post_change(
        staff, f"{ADMIN}/apikey/{quote(key.pk)}/change/", permission="read", secret_hash="0"
    )
    stored = ApiKey.objects.get(pk=key.pk)
    assert (stored.permission, stored.secret_hash) == ("write", hash_secret(secret))


# -- audit, workspaces, providers, purges ---------------------------------------------------


def test_audit_events_cannot_be_added_changed_or_deleted(staff, tenant, agent):
    event = AuditEvent.objects.get(action="agent.create")
    before = list(AuditEvent.objects.values())
    assert staff.get(f"{ADMIN}/auditevent/{quote(event.pk)}/change/").status_code == 200  # readable
    assert staff.get(f"{ADMIN}/auditevent/add/").status_code == 403
    add = {"workspace": tenant.workspace.pk, "principal_type": "x", "principal_id": "x"}
    assert staff.post(f"{ADMIN}/auditevent/add/", {**add, "action": "forged"}).status_code == 403
    change = staff.post(
        f"{ADMIN}/auditevent/{quote(event.pk)}/change/", {**add, "action": "forged"}
    )
    assert change.status_code == 403
    assert staff.get(f"{ADMIN}/auditevent/{quote(event.pk)}/delete/").status_code == 403
    assert (
        staff.post(f"{ADMIN}/auditevent/{quote(event.pk)}/delete/", {"post": "yes"}).status_code
        == 403
    )
    bulk = {"action": "delete_selected", "_selected_action": [event.pk], "post": "yes"}
    staff.post(f"{ADMIN}/auditevent/", bulk)
    assert list(AuditEvent.objects.values()) == before


def test_a_workspace_cannot_be_deleted_in_the_admin(staff, tenant):
    url = f"{ADMIN}/workspace/{quote(tenant.workspace.pk)}/delete/"
    assert staff.get(url).status_code == 403
    assert staff.post(url, {"post": "yes"}).status_code == 403
    bulk = {"action": "delete_selected", "_selected_action": [tenant.workspace.pk], "post": "yes"}
    staff.post(f"{ADMIN}/workspace/", bulk)
    assert Workspace.objects.filter(pk=tenant.workspace.pk).exists()


def test_providers_change_through_their_service_and_never_show_credentials(staff, provider):
    url = f"{ADMIN}/memoryprovider/{quote(provider.pk)}/change/"
    page = staff.get(url).content.decode()
    assert OSS_KEY not in page and OSS_ADMIN_KEY not in page
    assert 'name="credential' not in page and provider.credential_encrypted not in page
    data = form_of(staff.get(url))
    data.pop("enabled", None)  # unticked
    data["credential_encrypted"] = "forged"
    staff.post(url, data)
    provider.refresh_from_db()
    assert (provider.enabled, provider.version) == (False, 2)
    assert provider.credential_encrypted != "forged"
    assert staff_events("memory_provider.update").filter(object_id=provider.pk).exists()
    # The outbound policy holds in the admin too.
    response = post_change(staff, url, config='{"base_url": "ftp://example.com"}')
    provider.refresh_from_db()
    assert provider.config["base_url"].startswith("http://127.0.0.1")
    assert "config.base_url" in messages_of(staff.get(response.get("Location") or url))


def test_service_refusals_are_admin_error_messages(staff, tenant, provider):
    record_memory(tenant, provider)
    url = f"{ADMIN}/memoryprovider/{quote(provider.pk)}/delete/"
    response = staff.post(url, {"post": "yes"}, follow=True)
    assert response.status_code == 200
    assert "record memories still use this provider" in messages_of(response)
    assert MemoryProvider.objects.filter(pk=provider.pk).exists()


def test_purge_jobs_are_read_only_and_retried_by_an_action(staff, tenant, provider):
    job = PurgeJob.objects.create(
        workspace=tenant.workspace,
        provider=provider,
        namespace="gone",
        memory_id="mem_gone",
        status="failed",
        attempts=5,
    )
    url = "/admin/records/purgejob/"
    assert staff.post(f"{url}{quote(job.pk)}/change/", {"status": "done"}).status_code == 403
    assert staff.get(f"{url}add/").status_code == 403
    assert staff.get(f"{url}{quote(job.pk)}/delete/").status_code == 403

    staff.post(url, {"action": "retry_purges", "_selected_action": [job.pk]})
    job.refresh_from_db()
    assert (job.status, job.attempts) == ("pending", 0)

    PurgeJob.objects.filter(pk=job.pk).update(status="done")
    response = staff.post(
        url, {"action": "retry_purges", "_selected_action": [job.pk]}, follow=True
    )
    assert response.status_code == 200 and "done already" in messages_of(response)


def test_failing_providers_are_listed_by_name_and_read_only(staff, tenant, provider):
    now = timezone.now()
    ProviderOutage.objects.create(
        provider=provider,
        dependency="memory:mem0_oss",
        reason="the connection failed",
        since=now,
        last_failed_at=now,
    )
    url = "/admin/records/provideroutage/"
    page = staff.get(url)
    assert page.status_code == 200
    assert (
        provider.name in page.content.decode() and "the connection failed" in page.content.decode()
    )
    assert staff.get(f"{url}add/").status_code == 403
    assert staff.get(f"{url}{provider.pk}/delete/").status_code == 403


# -- a staff tool ---------------------------------------------------------------------------

PAGES = [
    "workspace",
    "apikey",
    "agent",
    "enduser",
    "thread",
    "run",
    "memory",
    "memoryprovider",
    "auditevent",
]


def _populate(name: str) -> None:
    """A tenant with some of everything (a run, a thread, a memory, a provider, a purge)."""
    tenant = make_tenant(name)
    agent = create_agent(tenant.owner, {"name": "bot"})
    for person in ("alice", "bob"):
        thread = create_thread(tenant.owner, agent.id, end_user=person)
        accept_run(tenant.owner, thread.id, input={"message": "hi"})
    provider = MemoryProvider.objects.create(workspace=tenant.workspace, type="mem0_oss")
    Memory.objects.create(
        workspace=tenant.workspace,
        kind="record",
        type="mem0_oss",
        provider=provider,
        namespace=name,
    )
    Memory.objects.create(workspace=tenant.workspace, kind="file", type="postgres", name="f")
    PurgeJob.objects.create(workspace=tenant.workspace, provider=provider, namespace="x")
    now = timezone.now()
    ProviderOutage.objects.create(
        provider=provider, dependency="memory:mem0_oss", since=now, last_failed_at=now
    )


def test_list_pages_cost_the_same_queries_for_more_rows(staff):
    _populate("one")
    records = ["/admin/records/purgejob/", "/admin/records/provideroutage/"]
    urls = [f"{ADMIN}/{page}/" for page in PAGES] + records

    def costs() -> list[int]:
        counts = []
        for url in urls:
            with CaptureQueriesContext(connection) as queries:
                assert staff.get(url).status_code == 200, url
            counts.append(len(queries))
        return counts

    few = costs()
    for n in range(3):
        _populate(f"more-{n}")
    assert dict(zip(urls, costs(), strict=True)) == dict(zip(urls, few, strict=True))
    for url in urls:  # and each kind of object's own page opens
        first = staff.get(url).context["cl"].result_list[0]
        assert staff.get(f"{url}{quote(first.pk)}/change/").status_code == 200, url
