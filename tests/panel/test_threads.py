"""Threads and runs in the panel: the list, a thread with its mounts and runs, and a run with
what it received at acceptance, its tool calls and its memory receipt."""

from __future__ import annotations

import pytest
from django.utils.html import escape

from memoryhub.models import Agent, Run
from tests.conftest import Api
from tests.facts.conftest import save
from tests.panel.conftest import logged_in
from tests.threads.test_run_memory import (  # noqa: F401  (fixtures)
    accept,
    call,
    file_memory,
    mem0_server,
    put_file,
    record_memory,
    record_provider,  # noqa: F401
)
from threads.services.runs import accept_run
from threads.services.threads import create_thread

pytestmark = pytest.mark.django_db

SCRIPT = "<script>alert('pwned')</script>"


def url(tenant, rest: str = "") -> str:
    return f"/panel/w/{tenant.workspace.id}/{rest}"


def mounted_thread(runner, agent, end_user: str, memory_id: str) -> str:
    mounts = [{"name": "team", "memory_id": memory_id, "access": "write"}]
    response = runner.post(
        "/api/v1/threads", {"agent_id": agent.id, "memories": mounts, "end_user": end_user}
    )
    assert response.status_code == 201, response.content
    return response.json()["id"]


@pytest.fixture
def team(owner) -> str:
    """A file memory whose always-loaded file holds a script."""
    memory_id = file_memory(owner, name="Team notes", always_load=["prefs.md"])
    put_file(owner, memory_id, "prefs.md", f"language: Türkçe\n{SCRIPT}\n")
    return memory_id


@pytest.fixture
def story(request, owner, runner, agent, team):
    """Ayşe's run: mounts the team notes and a record memory, then writes to all three."""
    provider = request.getfixturevalue("record_provider")  # on the fake mem0 server
    records = record_memory(owner, provider, name="Ayşe's records")
    owner.post(f"/api/v1/memories/{records}/records", {"text": "Ayşe prefers metric units"})
    mounts = [
        {"name": "team", "memory_id": team, "access": "write"},
        {"name": "records", "memory_id": records, "access": "write"},
    ]
    thread = runner.post(
        "/api/v1/threads", {"agent_id": agent.id, "memories": mounts, "end_user": "ayse"}
    ).json()["id"]
    run = accept(runner, thread, input="which units does Ayşe prefer?")
    facts = Api(run_token=run["token"])
    first = save(facts, "users/{user}/", "Ayşe çay sever")
    save(facts, "users/{user}/", "Ayşe çok çay sever", replaces=first["id"])
    gone = save(facts, "notes/", "a passing note")
    assert facts.delete(f"/v0/memory/facts/{gone['id']}").status_code == 204
    args = {"path": "ayse.md", "file_text": f"Ayşe: tea {SCRIPT}"}
    call(run, "memory_file_create", args, call_id="c1")
    call(run, "memory_file_view", {"path": "prefs.md"}, call_id="c2")
    call(run, "memory_record_add", {"text": "Ayşe lives in Izmir"}, call_id="c3")
    return run


# --- the thread list -------------------------------------------------------------------------


def test_the_list_shows_each_threads_mounts_and_runs_without_a_query_per_row(
    viewer, tenant, agent, team, owner, runner, django_assert_max_num_queries
):
    for n in range(30):
        thread_id = mounted_thread(runner, agent, f"person{n}", team)
        accept(runner, thread_id)
    client = logged_in(viewer)
    with django_assert_max_num_queries(7):
        response = client.get(url(tenant, "threads/"))
    body = response.content.decode()
    assert response.status_code == 200
    assert "Page 1 of 1 (30 threads)" in body and body.count("team · write") == 30
    rows = {t.end_user.external_id: t for t in response.context["page"]}
    assert rows["person7"].run_count == 1 and rows["person7"].last_run_at is not None
    assert 'aria-current="page">Threads</a>' in body


def test_the_list_pages_through_many_threads(viewer, tenant, agent):
    for n in range(55):
        create_thread(tenant.owner, agent.id, end_user=f"p{n}")
    client = logged_in(viewer)
    first = client.get(url(tenant, "threads/"), {"end_user": ""}).content.decode()
    assert "Page 1 of 2 (55 threads)" in first and "p54" in first and ">p0<" not in first
    second = client.get(url(tenant, "threads/"), {"page": 2}).content.decode()
    assert ">p0<" in second and "Page 2 of 2" in second


def test_the_list_filters_by_agent_status_and_person(viewer, tenant, agent, thread):
    other_agent = Agent.objects.create(workspace=tenant.workspace, name="Sales bot")
    create_thread(tenant.owner, other_agent.id, end_user="bob")
    client = logged_in(viewer)

    def shown(**params) -> set[str]:
        response = client.get(url(tenant, "threads/"), params)
        assert response.status_code == 200
        return {t.end_user.external_id for t in response.context["page"]}

    assert shown() == {"alice", "bob"}
    assert shown(agent_id=other_agent.id) == {"bob"}
    assert shown(end_user="alice") == {"alice"}
    assert shown(status="archived") == set()
    assert shown(agent_id="", status="", end_user="") == {"alice", "bob"}  # empty: no filter
    none = client.get(url(tenant, "threads/"), {"end_user": "nobody"}).content.decode()
    assert "No thread matches these filters." in none


def test_a_status_the_api_refuses_is_a_clear_message(viewer, tenant, thread):
    response = logged_in(viewer).get(url(tenant, "threads/"), {"status": "open"})
    assert response.status_code == 422
    assert "status must be one of: active, archived" in response.content.decode()


def test_no_threads_says_so(viewer, tenant):
    body = logged_in(viewer).get(url(tenant, "threads/")).content.decode()
    assert "No threads yet" in body


# --- a thread --------------------------------------------------------------------------------


def test_a_thread_shows_its_mounts_and_its_runs_newest_first(
    viewer, tenant, agent, team, owner, runner, django_assert_max_num_queries
):
    thread_id = mounted_thread(runner, agent, "ayse", team)
    runs = [accept(runner, thread_id, input=f"message {n}")["id"] for n in range(12)]
    client = logged_in(viewer)
    with django_assert_max_num_queries(7):
        response = client.get(url(tenant, f"threads/{thread_id}/"))
    body = response.content.decode()
    assert response.status_code == 200
    assert "Team notes" in body and team in body and "ayse" in body
    assert body.index(runs[-1]) < body.index(runs[0])  # newest first
    assert "message 11" in body
    assert [run.id for run, _ in response.context["runs"]] == runs[::-1]


def test_an_archived_thread_mounts_nothing(viewer, tenant, thread, runner):
    assert runner.post(f"/api/v1/threads/{thread.id}/archive").status_code == 200
    body = logged_in(viewer).get(url(tenant, f"threads/{thread.id}/")).content.decode()
    assert "An archived thread mounts no memories." in body and "No runs yet." in body


# --- a run -----------------------------------------------------------------------------------


def test_a_run_shows_the_exact_context_it_received_at_acceptance(
    viewer, tenant, agent, team, owner, runner
):
    thread_id = mounted_thread(runner, agent, "ayse", team)
    answered = accept(runner, thread_id, input={"message": "Merhaba"})
    # The memory changes afterwards: the page still shows what the run was given.
    put_file(owner, team, "later.md", "written after the run began")
    response = logged_in(viewer).get(url(tenant, f"runs/{answered['id']}/"))
    body = response.content.decode()
    assert response.status_code == 200
    assert "language: Türkçe" in answered["context"]
    shown = f'aria-labelledby="run-context-heading">{escape(answered["context"])}</pre>'
    assert shown in body
    assert "later.md" not in body
    assert f"{len(answered['context'].encode())} bytes" in body
    assert "&quot;message&quot;: &quot;Merhaba&quot;" in body  # the input, as JSON
    for tool in answered["tools"]:
        assert tool["function"]["name"] in body
        assert escape(tool["function"]["description"]) in body


def test_script_in_a_context_or_a_tool_result_is_text(viewer, tenant, story):
    body = logged_in(viewer).get(url(tenant, f"runs/{story['id']}/")).content.decode()
    assert SCRIPT in story["context"]
    assert "<script" not in body
    assert escape(SCRIPT) in body
    assert body.count(escape(SCRIPT)) >= 3  # the context, c1's arguments, c2's result


def test_a_run_shows_its_tool_calls_and_what_it_wrote(
    viewer, tenant, agent, story, django_assert_max_num_queries
):
    for n in range(10):  # more calls cost no more queries
        call(story, "memory_file_view", {"path": "ayse.md"}, call_id=f"v{n}")
    client = logged_in(viewer)
    with django_assert_max_num_queries(11):
        response = client.get(url(tenant, f"runs/{story['id']}/"))
    body = response.content.decode()
    assert response.status_code == 200
    # Tool calls with their arguments and results.
    calls = [row.call.call_id for row in response.context["received"].calls]
    assert calls == ["c1", "c2", "c3", *(f"v{n}" for n in range(10))]
    assert "memory_record_add" in body and "Ayşe lives in Izmir" in body
    assert "&quot;path&quot;: &quot;prefs.md&quot;" in body
    # The receipt: fact versions, the forgotten fact, the file revision, the record added.
    receipt = response.context["receipt"]
    assert [v.text for v, _ in receipt.fact_versions] == ["Ayşe çay sever", "Ayşe çok çay sever"]
    assert "Ayşe çok çay sever" in body and "users/ayse/" in body
    fact_id = receipt.fact_versions[0][1]
    assert f"/panel/w/{tenant.workspace.id}/agents/{agent.id}/facts/{fact_id}/" in body
    [(revision, memory)] = receipt.revisions
    assert (revision.path, revision.action, revision.tool_call_id) == ("ayse.md", "create", "c1")
    assert memory.name == "Team notes"
    revision_page = f"/panel/w/{tenant.workspace.id}/memories/{memory.id}/revisions/"
    assert f'href="{revision_page}{revision.public_id}/"' in body
    actions = [event.action for event, _ in receipt.events]
    assert actions == ["fact.delete", "record.add"]
    assert "Ayşe&#x27;s records" in body


def test_another_runs_writes_are_not_in_the_receipt(viewer, tenant, agent, story, runner, team):
    other = accept(runner, mounted_thread(runner, agent, "bob", team))
    save(Api(run_token=other["token"]), "users/{user}/", "Bob likes coffee")
    response = logged_in(viewer).get(url(tenant, f"runs/{other['id']}/"))
    receipt = response.context["receipt"]
    assert [v.text for v, _ in receipt.fact_versions] == ["Bob likes coffee"]
    assert receipt.revisions == [] and receipt.events == []
    assert "Ayşe" not in response.content.decode()


def test_a_run_without_mounts_says_what_it_did_not_get(viewer, tenant, agent):
    thread = create_thread(tenant.owner, agent.id)
    run = accept_run(tenant.owner, thread.id).run
    body = logged_in(viewer).get(url(tenant, f"runs/{run.id}/")).content.decode()
    assert "No memories were mounted." in body
    assert "Empty: the run's memories had nothing for it." in body
    assert "No tools." in body and "No tool calls." in body
    assert "This run wrote nothing to memory." in body
    assert "No input was given." in body


def test_an_erased_persons_run_keeps_nothing_they_gave_or_got(panel_admin, tenant, story):
    client = logged_in(panel_admin)
    confirm = client.get(url(tenant, "people/ayse/erase/")).content.decode()
    assert "<strong>1</strong> run cleared of what they said" in confirm
    client.post(url(tenant, "people/ayse/erase/"))
    run = Run.objects.get(pk=story["id"])
    assert (run.input, run.context, run.tools_offered) == (None, None, None)
    body = client.get(url(tenant, f"runs/{story['id']}/")).content.decode()
    assert "Not kept: the run's person was erased" in body
    assert 'id="run-context"' not in body and "language: Türkçe" not in body
    assert "Ayşe lives in Izmir" not in body and "which units" not in body
    assert "none (or erased)" in body
    assert "No tool calls kept: an erased person's calls go with them." in body


# --- who may see them ------------------------------------------------------------------------


@pytest.mark.parametrize("persona", ["viewer", "editor", "panel_admin", "superuser"])
def test_every_role_reads_threads_and_runs(request, persona, tenant, running_run, thread):
    client = logged_in(request.getfixturevalue(persona))
    run, _ = running_run
    for page in ("threads/", f"threads/{thread.id}/", f"runs/{run.id}/"):
        assert client.get(url(tenant, page)).status_code == 200, page


def test_another_workspaces_threads_and_runs_are_404(
    outsider, tenant, other_tenant, running_run, thread
):
    client = logged_in(outsider)
    run, _ = running_run
    for page in ("threads/", f"threads/{thread.id}/", f"runs/{run.id}/"):
        assert client.get(url(tenant, page)).status_code == 404, page
    # Nor through the outsider's own workspace.
    for page in (f"threads/{thread.id}/", f"runs/{run.id}/"):
        assert client.get(url(other_tenant, page)).status_code == 404, page


def test_a_login_is_needed(client, tenant, running_run):
    response = client.get(url(tenant, f"runs/{running_run[0].id}/"))
    assert response.status_code == 302 and "/panel/login/" in response["Location"]
