"""The panel probed as an attacker would: another workspace's ids in this workspace's URLs,
writes above one's role, forms without their CSRF token, markup in everything a page shows,
secrets, malformed input and logged-out visits. Each answers what a user would notice (the
status) and checks that nothing changed."""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import quote

import pytest
from django.test import Client

from facts.models import Fact
from filememory.models import File, Revision
from filememory.representations import file_etag
from filememory.services import files
from filememory.services.writes import Actor
from memoryhub import audit
from memoryhub.errors import ApiError
from memoryhub.etags import etag_for
from memoryhub.models import (
    Agent,
    ApiKey,
    EndUser,
    Memory,
    MemoryProvider,
    Run,
    Thread,
    ToolCall,
)
from panel.views.base import CSP
from records.models import PurgeJob
from records.services import records
from tests import factories
from tests.conftest import Api, Tenant
from tests.facts.conftest import save, token_for
from tests.panel.conftest import PASSWORD, logged_in
from tests.records import conftest as mem0_fixtures
from tests.records.conftest import OSS_ADMIN_KEY, OSS_KEY, record_memory

pytestmark = pytest.mark.django_db

allow_loopback, oss_server = mem0_fixtures.allow_loopback, mem0_fixtures.oss_server

XSS = "\"'><img src=x onerror=alert(1)><script>alert(1)</script>"


@dataclass
class Side:
    """One workspace's objects: every kind of id a panel URL takes."""

    tenant: Tenant
    agent: Agent
    other_agent: Agent  # of the same workspace, without facts
    fact: str
    files: Memory  # a file memory with notes.md changed twice
    other_files: Memory  # a second file memory of the same workspace
    revision: str  # the first revision of notes.md
    records: Memory
    record: str
    provider: MemoryProvider
    thread: Thread
    run: Run
    token: str  # the run's token
    person: str
    job: PurgeJob

    @property
    def ws(self) -> str:
        return self.tenant.workspace.id


def build(tenant: Tenant, server, tag: str) -> Side:
    owner = tenant.owner
    agent = factories.create_agent(owner, {"name": f"{tag} bot"})
    run, token = token_for(tenant, agent, f"{tag}-person", input={"message": "hi"})
    fact = save(Api(run_token=token), "notes/", f"{tag} likes tea")["id"]
    memory = factories.create_memory(owner, {"name": f"{tag} notes", "type": "postgres"})
    other = factories.create_memory(owner, {"name": f"{tag} more", "type": "postgres"})
    first, _ = files.put_file(Actor(owner), memory.id, "notes.md", f"{tag} v1", None)
    files.put_file(Actor(owner), memory.id, "notes.md", f"{tag} v2", file_etag(first))
    files.put_file(Actor(owner), other.id, "notes.md", f"{tag} other", None)
    provider = factories.create_provider(
        owner,
        {
            "type": "mem0_oss",
            "name": f"{tag} mem0",
            "config": {"base_url": server.url, "read_timeout": 1},
            "credential": {"api_key": OSS_KEY, "admin_api_key": OSS_ADMIN_KEY},
        },
    )
    kept = record_memory(tenant, provider, namespace=f"ns-{tag}")
    record = records.add_record(owner, kept, f"{tag} prefers metric units").id
    job = PurgeJob.objects.create(
        workspace=tenant.workspace,
        provider=provider,
        namespace=f"gone-{tag}",
        memory_id=f"mem_gone_{tag}",
        memory_name="Old records",
        status=PurgeJob.Status.FAILED,
        attempts=5,
    )
    return Side(
        tenant=tenant,
        agent=agent,
        other_agent=factories.create_agent(owner, {"name": f"{tag} helper"}),
        fact=fact,
        files=memory,
        other_files=other,
        revision=Revision.objects.filter(memory=memory).order_by("id").first().public_id,
        records=kept,
        record=record,
        provider=provider,
        thread=run.thread,
        run=run,
        token=token,
        person=f"{tag}-person",
        job=job,
    )


@pytest.fixture
def acme(tenant, oss_server) -> Side:
    return build(tenant, oss_server, "acme")


@pytest.fixture
def other(other_tenant, oss_server) -> Side:
    return build(other_tenant, oss_server, "other")


def record_texts(side: Side) -> list[str]:
    try:
        page = records.list_records(side.tenant.owner, side.records, limit=10, offset=0)
    except ApiError as error:  # the provider disabled
        return [error.message]
    return [r.text for r in page.records]


def state(side: Side) -> tuple:
    """Everything a write of the panel could change on one side."""
    fact = Fact.objects.filter(pk=side.fact.removeprefix("m_")).values_list("text", "version")
    provider = MemoryProvider.objects.get(pk=side.provider.pk)
    return (
        list(fact),
        sorted(
            File.objects.filter(workspace=side.tenant.workspace).values_list(
                "memory_id", "path", "version"
            )
        ),
        Revision.objects.filter(workspace=side.tenant.workspace).count(),
        sorted(Memory.objects.filter(workspace=side.tenant.workspace).values_list("id", "version")),
        record_texts(side),
        (provider.name, provider.enabled, provider.version, provider.credential_encrypted),
        PurgeJob.objects.filter(pk=side.job.pk).values_list("status", "attempts").get(),
        EndUser.objects.filter(workspace=side.tenant.workspace).count(),
        Thread.objects.filter(workspace=side.tenant.workspace).values_list("status").first(),
    )


# --- every URL with an id ---------------------------------------------------------------------
# Each as (name, path after /panel/w/<workspace>/, form data of its POST), the ids taken from
# ``of``: the side whose objects the URL names.


def pages(of: Side) -> dict[str, str]:
    agent, fm, rm = of.agent.id, of.files.id, of.records.id
    return {
        "facts": f"agents/{agent}/facts/",
        "fact": f"agents/{agent}/facts/{of.fact}/",
        "fact-edit": f"agents/{agent}/facts/{of.fact}/edit/",
        "fact-forget": f"agents/{agent}/facts/{of.fact}/forget/",
        "erase": f"people/{of.person}/erase/",
        "purge-retry": f"purges/{of.job.pk}/retry/",
        "records": f"memories/{rm}/records/",
        "record-edit": f"memories/{rm}/records/{of.record}/edit/",
        "record-delete": f"memories/{rm}/records/{of.record}/delete/",
        "provider-edit": f"providers/{of.provider.id}/edit/",
        "provider-enabled": f"providers/{of.provider.id}/enabled/",
        "provider-test": f"providers/{of.provider.id}/test/",
        "memory": f"memories/{fm}/",
        "memory-edit": f"memories/{fm}/edit/",
        "memory-delete": f"memories/{fm}/delete/",
        "files": f"memories/{fm}/files/",
        "file-new": f"memories/{fm}/files/new/",
        "file": f"memories/{fm}/file/?path=notes.md",
        "file-edit": f"memories/{fm}/file/edit/?path=notes.md",
        "file-delete": f"memories/{fm}/file/delete/?path=notes.md",
        "history": f"memories/{fm}/history/?path=notes.md",
        "history-purge": f"memories/{fm}/history/purge/",
        "revision": f"memories/{fm}/revisions/{of.revision}/",
        "revision-restore": f"memories/{fm}/revisions/{of.revision}/restore/",
        "thread": f"threads/{of.thread.id}/",
        "run": f"runs/{of.run.id}/",
    }


def form(name: str, of: Side) -> dict:
    """What the page's own form would send, with the object's real ETag where it takes one."""
    file = File.objects.filter(memory=of.files, path="notes.md").first()
    forms = {
        "fact-edit": {"text": "hacked", "tags": "", "confidence": "1"},
        "record-edit": {"text": "hacked", "metadata": ""},
        "provider-edit": {
            "name": "hacked",
            "etag": etag_for(of.provider.version),
            **{k: str(v) for k, v in of.provider.config.items()},
        },
        "provider-enabled": {"enabled": "false", "etag": etag_for(of.provider.version)},
        "memory-edit": {
            "name": "hacked",
            "etag": etag_for(of.files.version),
            "inherit_guide": "on",
        },
        "memory-delete": {"etag": etag_for(of.files.version)},
        "file-new": {"path": "new.md", "content": "hacked"},
        "file-edit": {"content": "hacked", "etag": file_etag(file) if file else ""},
        "file-delete": {"etag": file_etag(file) if file else ""},
        "revision-restore": {"etag": file_etag(file) if file else ""},
    }
    return forms.get(name, {})


WRITES = (
    *("fact-edit", "fact-forget", "erase", "purge-retry", "record-edit", "record-delete"),
    *("provider-edit", "provider-enabled", "provider-test", "memory-edit", "memory-delete"),
    *("file-new", "file-edit", "file-delete", "history-purge", "revision-restore"),
)
READS = (
    *("facts", "fact", "records", "memory", "files", "file", "history", "revision"),
    *("thread", "run"),
)
NAMES = READS + WRITES
POST_ONLY = ("purge-retry", "provider-test")  # their GET is 405
ADMIN_ONLY = (
    *("erase", "purge-retry", "history-purge", "memory-delete"),
    *("provider-edit", "provider-enabled", "provider-test"),
)


NEW = {"provider-new": "providers/new/", "memory-new": "memories/new/"}
NEW_FORMS = {
    "provider-new": {"type": "mem0_oss", "name": "new", "base_url": "http://127.0.0.1:9"},
    "memory-new": {"name": "new", "inherit_guide": "on"},
}


def post_forms(side: Side) -> dict[str, tuple[str, dict]]:
    """Every write of the panel: its URL and the form its page would send."""
    forms = {name: (url(side, name), form(name, side)) for name in WRITES}
    forms.update(
        {name: (f"/panel/w/{side.ws}/{path}", NEW_FORMS[name]) for name, path in NEW.items()}
    )
    return forms


def logged_in_strict(user) -> Client:
    """A browser that sends no CSRF token unless a form gave it one."""
    client = Client(enforce_csrf_checks=True)
    client.force_login(user)
    return client


def url(here: Side, name: str, of: Side | None = None) -> str:
    return f"/panel/w/{here.ws}/{pages(of or here)[name]}"


# --- another workspace's ids ------------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_another_workspaces_ids_under_ones_own_workspace_are_404(
    name, panel_admin, outsider, acme, other
):
    """Ada (admin of Acme) names Other's objects under Acme, Otto (admin of Other) names
    Acme's under Other: 404 for the page and its POST, and neither side changes."""
    assert set(NAMES) == set(pages(acme))  # every URL with an id is probed
    before = state(acme), state(other)
    for user, here, there in ((panel_admin, acme, other), (outsider, other, acme)):
        client = logged_in(user)
        get = client.get(url(here, name, there))
        assert get.status_code == (405 if name in POST_ONLY else 404)
        assert client.post(url(here, name, there), form(name, there)).status_code == 404
    assert (state(acme), state(other)) == before


FILE_PAGES = [n for n in NAMES if n.startswith(("file", "history", "revision"))]
RECORD_PAGES = ["records", "record-edit", "record-delete"]


@pytest.mark.parametrize(
    ("name", "swap"),
    [(n, "record memory") for n in FILE_PAGES]
    + [(n, "file memory") for n in RECORD_PAGES]
    + [("revision", "other memory"), ("revision-restore", "other memory")]
    + [(n, "other agent") for n in ("fact", "fact-edit", "fact-forget")],
)
def test_an_id_of_the_wrong_kind_or_memory_is_404(name, swap, panel_admin, acme):
    """A record memory's id in a file page, a file memory's in a record page, a revision of
    one file memory under another, a fact under another agent: 404, and nothing changes."""
    path = pages(acme)[name]
    if swap == "other agent":
        path = path.replace(acme.agent.id, acme.other_agent.id)
    elif swap == "file memory":
        path = path.replace(acme.records.id, acme.files.id)
    else:
        memory = {"record memory": acme.records, "other memory": acme.other_files}[swap]
        path = path.replace(acme.files.id, memory.id)
    client, before = logged_in(panel_admin), state(acme)
    assert client.get(f"/panel/w/{acme.ws}/{path}").status_code == 404
    assert client.post(f"/panel/w/{acme.ws}/{path}", form(name, acme)).status_code == 404
    assert state(acme) == before


# --- roles ------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", WRITES + tuple(NEW))
def test_a_viewer_can_change_nothing(name, viewer, acme):
    client, before = logged_in(viewer), state(acme)
    to, data = post_forms(acme)[name]
    assert client.post(to, data).status_code == 403
    if name not in POST_ONLY:
        assert client.get(to).status_code == 403
    assert state(acme) == before
    assert not Memory.objects.filter(name="new").exists()


@pytest.mark.parametrize("name", (*ADMIN_ONLY, "provider-new"))
def test_an_editor_cannot_erase_purge_or_manage_providers(name, editor, acme):
    client, before = logged_in(editor), state(acme)
    to, data = post_forms(acme)[name]
    assert client.post(to, data).status_code == 403
    assert state(acme) == before
    assert not MemoryProvider.objects.filter(name="new").exists()


@pytest.mark.parametrize("name", WRITES + tuple(NEW))
def test_the_same_forms_do_change_things_for_an_admin(name, panel_admin, acme):
    """The control for the tests above: these forms are real, an admin's POST works."""
    before = state(acme), Memory.objects.count(), MemoryProvider.objects.count()
    to, data = post_forms(acme)[name]
    response = logged_in(panel_admin).post(to, data)
    assert response.status_code in (200, 302), response.content[:2000]
    after = state(acme), Memory.objects.count(), MemoryProvider.objects.count()
    assert (after == before) == (name == "provider-test")  # a test changes nothing


# --- the Content-Security-Policy ----------------------------------------------------------------


def test_every_answer_of_the_panel_has_the_csp_even_an_error(viewer, outsider, acme):
    viewer_client = logged_in(viewer)
    answers = {
        "login": Client().get("/panel/login/"),
        "logged out": Client().get(url(acme, "memory")),
        "404 of a workspace": logged_in(outsider).get(url(acme, "memory")),
        "404 of an id": viewer_client.get(f"/panel/w/{acme.ws}/memories/mem_nope/"),
        "404 of no route": viewer_client.get("/panel/nothing-here/"),
        "403 of a role": viewer_client.get(url(acme, "erase")),
        "403 of a service": viewer_client.get(url(acme, "memory-edit")),
        "405": viewer_client.get(url(acme, "provider-test")),
        "403 of CSRF": logged_in_strict(viewer).post(url(acme, "memory-edit"), {}),
    }
    missing = {
        what: r.status_code
        for what, r in answers.items()
        if r.get("Content-Security-Policy") != CSP
    }
    assert missing == {}


# --- malformed input --------------------------------------------------------------------------

AGENT_FACTS = "agents/{agent}/facts/"
NUL_URLS = [
    "%00/",
    "memories/{files}%00/",
    "memories/{files}%00/files/",
    "memories/{records}%00/records/",
    "agents/{agent}%00/facts/",
    "people/a%00/erase/",
    "providers/x%00/edit/",
    "providers/x%00/enabled/",
    "threads/t%00/",
    "runs/r%00/",
    "memories/{files}/revisions/r%00/",
    "memories/{files}/revisions/r%00/restore/",
    "memories/?label=a%00",
    "threads/?agent_id=a%00",
    "threads/?end_user=a%00",
    "memories/{files}/file/?path=a%00",
    "memories/{files}/files/new/?prefix=a%00",
]


def filled(side: Side, path: str) -> str:
    ids = {"agent": side.agent.id, "files": side.files.id, "records": side.records.id}
    return f"/panel/w/{side.ws}/{path.format(**ids)}"


@pytest.mark.parametrize("path", NUL_URLS)
def test_a_nul_in_a_url_is_400_not_500(path, panel_admin, acme):
    response = logged_in(panel_admin).get(filled(acme, path))
    assert response.status_code == 400
    assert "NUL characters are not allowed" in response.content.decode()


@pytest.mark.parametrize(
    ("name", "field"),
    [
        ("memory-edit", "name"),
        ("memory-edit", "description"),
        ("memory-edit", "labels"),
        ("provider-edit", "name"),
        ("file-edit", "content"),
        ("record-edit", "text"),  # the backend would have taken it: the API's rule refuses it
        ("fact-edit", "text"),
    ],
)
def test_a_nul_in_a_form_is_400_and_changes_nothing(name, field, panel_admin, acme):
    before = state(acme)
    data = {**form(name, acme), field: "a\x00b"}
    assert logged_in(panel_admin).post(url(acme, name), data).status_code == 400
    assert state(acme) == before


@pytest.mark.parametrize(
    ("page", "params", "status"),
    [
        ("memories/{files}/files/", "page=abc", 200),
        ("memories/{files}/files/", "page=99999999999999999999999", 200),
        ("memories/{files}/history/", "page=-1", 200),
        ("memories/", "page=1e99", 200),
        ("people/", "page=abc", 200),
        ("threads/", "page=99999999999999999999", 200),
        ("purges/", "page=abc", 200),
        ("audit/", "page=abc", 200),
        ("memories/", "kind=bogus", 422),
        ("threads/", "status=bogus", 422),
        ("audit/", "since=2020-13-45", 422),
        ("audit/", "since=abc&until=99999-01-01", 422),
        ("audit/", "since=0001-01-01&until=9999-12-31", 200),
        ("memories/{files}/file/", "path=../notes.md", 422),
        ("memories/{files}/file/", "path=" + "x" * 5000, 422),
        ("memories/{files}/files/", "prefix=../", 422),
        ("memories/{files}/history/", "path=../notes.md", 422),
        ("memories/{files}/history/", "path=", 422),
        ("memories/{files}/history/purge/", "path=", 422),
        (AGENT_FACTS, "path=..", 422),
        (AGENT_FACTS, "query=x&k=abc", 422),
        (AGENT_FACTS, "before=abc", 422),
        ("memories/{records}/records/", "limit=abc", 422),
        ("memories/{records}/records/", "offset=-1", 422),
        ("memories/{records}/records/", "offset=99999999999999999999999", 422),
        ("memories/{records}/records/", "query=" + "x" * 20000, 422),
        ("memories/" + "x" * 5000 + "/", "", 404),
    ],
)
def test_malformed_input_is_a_clear_answer_never_a_500(page, params, status, panel_admin, acme):
    response = logged_in(panel_admin).get(f"{filled(acme, page)}?{params}")
    assert response.status_code == status


def test_invalid_json_metadata_is_422_and_changes_nothing(panel_admin, acme):
    before = state(acme)
    data = {"text": "hacked", "metadata": "{not json"}
    response = logged_in(panel_admin).post(url(acme, "record-edit"), data)
    assert response.status_code == 422
    assert "metadata is not valid JSON" in response.content.decode()
    assert state(acme) == before


# --- CSRF, logging in and out -----------------------------------------------------------------


def test_every_post_without_its_csrf_token_is_refused(panel_admin, acme):
    client, before = logged_in_strict(panel_admin), state(acme)
    refused = {
        name: client.post(to, data).status_code for name, (to, data) in post_forms(acme).items()
    }
    refused["logout"] = client.post("/panel/logout/").status_code
    refused["login"] = Client(enforce_csrf_checks=True).post("/panel/login/", {}).status_code
    assert set(refused.values()) == {403}, refused
    assert state(acme) == before
    assert Memory.objects.filter(name="new").count() == 0
    assert MemoryProvider.objects.filter(name="new").count() == 0


FORM = re.compile(r"<form\b[^>]*>.*?</form>", re.S | re.I)


@pytest.mark.parametrize("name", sorted(set(WRITES) - set(POST_ONLY)) + ["providers", "purges"])
def test_every_post_form_carries_its_csrf_token(name, panel_admin, acme):
    page = f"/panel/w/{acme.ws}/{name}/" if name in ("providers", "purges") else url(acme, name)
    body = logged_in(panel_admin).get(page).content.decode()
    posts = [f for f in FORM.findall(body) if re.search(r'method="post"', f, re.I)]
    assert posts, "the page has a form"
    assert all('name="csrfmiddlewaretoken"' in f for f in posts)


LISTS = ("", "memories/", "people/", "threads/", "purges/", "providers/", "audit/")


def test_every_page_sends_a_logged_out_visitor_to_the_login(acme):
    seen = [url(acme, name) for name in NAMES if name not in POST_ONLY]
    seen += [f"/panel/w/{acme.ws}/{path}" for path in LISTS] + ["/panel/"]
    for page in seen:
        response = Client().get(page)
        assert response.status_code == 302, page
        assert response["Location"].startswith("/panel/login/?next=/panel/"), page
    before = state(acme)
    for to, data in post_forms(acme).values():
        response = Client().post(to, data)
        assert response.status_code == 302 and response["Location"].startswith("/panel/login/")
    assert state(acme) == before


@pytest.mark.parametrize(
    "next_url",
    [
        "https://evil.example/",
        "//evil.example/",
        "/\\evil.example/",
        "\\\\evil.example",
        "https:evil.example",
        "javascript:alert(1)",
        "http://testserver@evil.example/",
        " //evil.example",
    ],
)
def test_the_login_never_sends_anyone_elsewhere(next_url, viewer, tenant):
    page = Client().get("/panel/login/", {"next": next_url})
    assert page.status_code == 200
    answer = Client().post(
        "/panel/login/", {"username": "vera", "password": PASSWORD, "next": next_url}
    )
    assert answer.status_code == 302 and answer["Location"] == "/panel/"
    already = logged_in(viewer).get("/panel/login/", {"next": next_url})
    assert already.status_code == 302 and already["Location"] == "/panel/"
    out = logged_in(viewer).post("/panel/logout/", {"next": next_url})
    assert out.status_code == 302 and out["Location"] == "/panel/login/"


# --- markup and secrets -----------------------------------------------------------------------

XSS_NAME = "\"'><img src=x onerror=alert(1)>.md"  # a file name: no "/"
RAW = ("<script>alert(1)</script>", "<img src=x onerror=alert(1)>")


@pytest.fixture
def marked(acme) -> dict[str, str]:
    """Markup in everything a page shows, in Acme; the pages that show it, by what."""
    owner, ws = acme.tenant.owner, acme.ws
    agent = factories.create_agent(owner, {"name": XSS})
    run, token = token_for(acme.tenant, agent, "mallory", input={"message": XSS})
    fact = save(Api(run_token=token), "notes/", XSS)["id"]
    memory = factories.create_memory(
        owner,
        {"name": XSS, "type": "postgres", "description": XSS, "labels": ["x"], "guide": XSS},
    )
    first, _ = files.put_file(Actor(owner), memory.id, XSS_NAME, XSS, None)
    files.put_file(Actor(owner), memory.id, XSS_NAME, f"{XSS}\n{XSS}", file_etag(first))
    revision = Revision.objects.filter(memory=memory).order_by("id").first().public_id
    record = records.add_record(owner, acme.records, XSS, {"k": XSS}).id
    MemoryProvider.objects.filter(pk=acme.provider.pk).update(name=XSS)
    tool = {"type": "function", "function": {"name": XSS, "description": XSS, "parameters": {}}}
    Run.objects.filter(pk=run.pk).update(context=XSS, tools_offered=[tool])
    ToolCall.objects.create(
        workspace=acme.tenant.workspace,
        run=run,
        call_id="c1",
        name="recall",
        arguments={"query": XSS},
        status="done",
        content=XSS,
    )
    audit.record(owner, "note.xss", "memory", XSS, detail=XSS)
    PurgeJob.objects.filter(pk=acme.job.pk).update(memory_name=XSS, last_error=XSS)
    here, mem, path = f"/panel/w/{ws}/", f"/panel/w/{ws}/memories/{memory.id}/", quote(XSS_NAME)
    facts_of = f"{here}agents/{agent.id}/facts/"
    return {
        "agent name": here,
        "memory name": f"{here}memories/",
        "memory guide": mem,
        "memory form": f"{mem}edit/",
        "memory delete": f"{mem}delete/",
        "file path": f"{mem}files/",
        "file content": f"{mem}file/?path={path}",
        "file form": f"{mem}file/edit/?path={path}",
        "file delete": f"{mem}file/delete/?path={path}",
        "file history": f"{mem}history/?path={path}",
        "memory history": f"{mem}history/",
        "revision": f"{mem}revisions/{revision}/",
        "revision restore": f"{mem}revisions/{revision}/restore/",
        "purge history": f"{mem}history/purge/?path={path}",
        "fact list": facts_of,
        "fact": f"{facts_of}{fact}/",
        "fact form": f"{facts_of}{fact}/edit/",
        "fact forget": f"{facts_of}{fact}/forget/",
        "record list": url(acme, "records"),
        "record form": url(acme, "records") + f"{record}/edit/",
        "record delete": url(acme, "records") + f"{record}/delete/",
        "provider list": f"{here}providers/",
        "provider form": url(acme, "provider-edit"),
        "provider disable": url(acme, "provider-enabled"),
        "run": f"{here}runs/{run.id}/",
        "thread": f"{here}threads/{run.thread_id}/",
        "threads": f"{here}threads/",
        "purges": f"{here}purges/",
        "audit": f"{here}audit/",
    }


def shows_no_markup(response) -> str:
    body = response.content.decode()
    assert not [raw for raw in RAW if raw in body]
    assert not re.search(r"(href|src|action)=[\"']?\s*javascript:", body, re.I)
    return body


def test_markup_in_anything_stored_is_shown_as_text(panel_admin, marked):
    client = logged_in(panel_admin)
    for what, page in marked.items():
        response = client.get(page)
        assert response.status_code == 200, what
        assert "&lt;img src=x onerror=alert(1)&gt;" in shows_no_markup(response), what


@pytest.mark.parametrize(
    ("page", "params"),
    [
        (AGENT_FACTS, {"query": XSS, "path": XSS, "tags": XSS}),
        (AGENT_FACTS, {"path": XSS}),
        ("memories/{records}/records/", {"query": XSS}),
        ("memories/{records}/records/", {"limit": XSS, "offset": XSS}),
        ("memories/", {"label": XSS, "kind": XSS}),
        ("threads/", {"end_user": XSS, "agent_id": XSS, "status": XSS}),
        ("audit/", {"actor": XSS, "action": XSS, "object": XSS, "since": XSS}),
        ("memories/{files}/files/", {"prefix": XSS}),
        ("memories/{files}/files/new/", {"prefix": XSS}),
        ("memories/{files}/file/", {"path": XSS}),
        ("memories/{files}/history/", {"path": XSS}),
        ("memories/{files}/history/purge/", {"path": XSS}),
    ],
)
def test_markup_in_a_query_is_shown_as_text(page, params, panel_admin, acme):
    shows_no_markup(logged_in(panel_admin).get(filled(acme, page), params))


@pytest.mark.parametrize(
    ("name", "refused"),
    [
        ("file-new", {"path": f"{XSS}/..", "content": XSS}),
        ("memory-edit", {"name": XSS, "labels": XSS, "guide": XSS, "etag": '"stale"'}),
        ("record-edit", {"text": XSS, "metadata": XSS}),
        ("fact-edit", {"text": XSS, "tags": XSS}),
        ("provider-edit", {"name": XSS, "base_url": XSS}),
        (
            "provider-new",
            {"name": XSS, "base_url": "javascript:alert(1)//<img src=x onerror=alert(1)>"},
        ),
    ],
)
def test_markup_in_a_refused_form_is_shown_as_text(name, refused, panel_admin, acme):
    to, data = post_forms(acme)[name]
    response = logged_in(panel_admin).post(to, {**data, **refused})
    assert response.status_code in (412, 422)
    assert "&lt;img src=x onerror=alert(1)&gt;" in shows_no_markup(response)


@pytest.mark.parametrize(
    ("name", "given"),
    [
        ("file-new", {"path": f"{XSS}.md"}),
        ("memory-edit", {"name": XSS}),
        ("provider-edit", {"name": XSS}),
        ("memory-new", {"name": XSS}),
    ],
)
def test_markup_in_a_saved_form_is_text_in_the_message_after_it(name, given, panel_admin, acme):
    to, data = post_forms(acme)[name]
    response = logged_in(panel_admin).post(to, {**data, **given}, follow=True)
    assert response.redirect_chain and response.status_code == 200
    assert "&lt;img src=x onerror=alert(1)&gt;" in shows_no_markup(response)


def test_markup_in_the_logins_next_is_shown_as_text():
    shows_no_markup(Client().get("/panel/login/", {"next": XSS}))


def test_no_page_shows_a_secret(panel_admin, acme, marked):
    """Provider keys (plain and encrypted), API key secrets and hashes, run tokens and
    their hashes appear on no page, including a provider form refused with a typed key."""
    secrets = [OSS_KEY, OSS_ADMIN_KEY, acme.token, *acme.tenant.keys.values()]
    secrets += [r.token_hash for r in Run.objects.all()]
    secrets += list(ApiKey.objects.values_list("secret_hash", flat=True))
    secrets += [p.credential_encrypted for p in MemoryProvider.objects.all()]
    client = logged_in(panel_admin)
    seen = [url(acme, name) for name in NAMES if name not in POST_ONLY]
    seen += [f"/panel/w/{acme.ws}/{path}" for path in LISTS] + list(marked.values())
    answers = [client.get(page) for page in seen]
    typed = {**form("provider-edit", acme), "api_key": "typed-secret", "read_timeout": "x"}
    answers.append(client.post(url(acme, "provider-edit"), typed))
    assert answers[-1].status_code == 422
    for response in answers:
        body = response.content.decode()
        assert not [s for s in (*secrets, "typed-secret") if s and s in body]
