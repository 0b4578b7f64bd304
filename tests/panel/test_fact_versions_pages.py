"""A fact's page shows its versions a page at a time: an agent may write any number of them
(every ``replaces`` adds one), and a page that printed them all with a diff each took seconds
and megabytes for a few thousand. The newest 20 come first with their diffs and the count of
all; "Older" pages on to the oldest, like a file's history, and no query loads them all."""

from __future__ import annotations

import re
import time
from datetime import timedelta

import pytest
from django.utils import timezone

from facts.models import Fact, FactVersion
from tests.facts.conftest import run_for, save
from tests.panel.conftest import logged_in

pytestmark = pytest.mark.django_db

VERSIONS = 300
PER_PAGE = 20  # panel.services.facts.VERSIONS_PER_PAGE
LAST_PAGE = VERSIONS // PER_PAGE  # 15


def text_of(n: int) -> str:
    return f"The counter in the hall reads {n} today"


@pytest.fixture
def long_history(tenant, agent) -> str:
    """A fact written once over the API, then replaced 299 times (inserted in one statement,
    as the API would have stored them); its public id."""
    _, run = run_for(tenant, agent, "mallory")
    fact = Fact.objects.get(pk=int(save(run, "notes/", text_of(1))["id"].removeprefix("m_")))
    first = FactVersion.objects.get(fact=fact, version=1)
    start = first.created_at
    FactVersion.objects.bulk_create(
        FactVersion(
            workspace_id=fact.workspace_id,
            agent_id=fact.agent_id,
            fact=fact,
            version=n,
            path=first.path,
            text=text_of(n),
            tags=[],
            confidence=1.0,
            run_id=first.run_id,
            written_by=first.written_by,
            created_at=start + timedelta(seconds=n),
        )
        for n in range(2, VERSIONS + 1)
    )
    Fact.objects.filter(pk=fact.pk).update(
        text=text_of(VERSIONS), version=VERSIONS, updated_at=timezone.now()
    )
    return fact.public_id


def fact_url(tenant, agent, fact_id: str) -> str:
    return f"/panel/w/{tenant.workspace.id}/agents/{agent.id}/facts/{fact_id}/"


def shown_versions(body: str) -> list[int]:
    return [int(n) for n in re.findall(r"<strong>Version (\d+)</strong>", body)]


def older_link(body: str) -> str | None:
    found = re.search(r'<a href="(\?page=\d+)">Older', body)
    return found.group(1) if found else None


@pytest.mark.timeout(30)
def test_the_newest_versions_come_first_with_their_diffs_and_the_count(
    viewer, tenant, agent, long_history
):
    client = logged_in(viewer)
    started = time.monotonic()
    response = client.get(fact_url(tenant, agent, long_history))
    took = time.monotonic() - started
    body = response.content.decode()
    assert response.status_code == 200
    assert took < 2, f"the fact page took {took:.1f} s"
    assert shown_versions(body) == list(range(VERSIONS, VERSIONS - PER_PAGE, -1))
    assert "300 versions" in body
    assert f"Page 1 of {LAST_PAGE}" in body
    # Every version on the page has its diff, the page's oldest too (against version 280).
    assert body.count("<ins>") == PER_PAGE
    assert "<del>280</del><ins>281</ins>" in body
    assert text_of(280) not in body
    assert older_link(body) == "?page=2"


def test_older_pages_lead_to_the_oldest_version(viewer, tenant, agent, long_history):
    client = logged_in(viewer)
    url = fact_url(tenant, agent, long_history)
    second = client.get(url + older_link(client.get(url).content.decode())).content.decode()
    assert shown_versions(second) == list(range(280, 260, -1))
    assert "← Newer" in second and older_link(second) == "?page=3"
    last = client.get(url, {"page": LAST_PAGE}).content.decode()
    assert shown_versions(last) == list(range(PER_PAGE, 0, -1))
    assert f'<p class="diff">{text_of(1)}</p>' in last  # the first version, whole
    assert last.count("<ins>") == PER_PAGE - 1
    assert older_link(last) is None


@pytest.mark.parametrize(
    ("page", "first_shown"),
    [("999", PER_PAGE), ("-1", PER_PAGE), ("abc", VERSIONS), ("", VERSIONS)],
)
def test_a_page_out_of_range_clamps_as_a_files_history_does(
    viewer, tenant, agent, long_history, page, first_shown
):
    response = logged_in(viewer).get(fact_url(tenant, agent, long_history), {"page": page})
    assert response.status_code == 200
    assert shown_versions(response.content.decode())[0] == first_shown


def test_the_page_never_loads_every_version(
    viewer, tenant, agent, long_history, django_assert_max_num_queries
):
    client = logged_in(viewer)
    with django_assert_max_num_queries(10) as captured:
        response = client.get(fact_url(tenant, agent, long_history), {"page": "7"})
    assert response.status_code == 200
    reads = [
        q["sql"]
        for q in captured.captured_queries
        if "facts_factversion" in q["sql"] and "COUNT(" not in q["sql"]
    ]
    assert reads and all("LIMIT" in sql for sql in reads), reads


def test_forgetting_counts_the_versions_without_loading_them(
    editor, tenant, agent, long_history, django_assert_max_num_queries
):
    client = logged_in(editor)
    url = fact_url(tenant, agent, long_history) + "forget/"
    with django_assert_max_num_queries(10) as captured:
        confirm = client.get(url)
    assert confirm.status_code == 200
    assert f"all its {VERSIONS} versions" in confirm.content.decode()
    assert not [
        q["sql"]
        for q in captured.captured_queries
        if "facts_factversion" in q["sql"] and "COUNT(" not in q["sql"]
    ]
    done = client.post(url, follow=True)
    assert f"Forgot {long_history} and its {VERSIONS} versions." in done.content.decode()
    assert not FactVersion.objects.filter(fact_id=int(long_history.removeprefix("m_"))).exists()


def test_a_fact_of_one_version_shows_it_without_a_pager_link(viewer, tenant, agent):
    _, run = run_for(tenant, agent, "mallory")
    fact = save(run, "notes/", text_of(1))
    body = logged_in(viewer).get(fact_url(tenant, agent, fact["id"])).content.decode()
    assert shown_versions(body) == [1]
    assert "1 version<" in body and "(1 version)" in body
    assert older_link(body) is None and "Newer" not in body


def test_each_version_links_the_run_that_wrote_it(viewer, tenant, agent):
    _, run = run_for(tenant, agent, "mallory")
    fact = save(run, "notes/", text_of(1))
    run_id = FactVersion.objects.get(fact__pk=int(fact["id"].removeprefix("m_"))).run_id
    body = logged_in(viewer).get(fact_url(tenant, agent, fact["id"])).content.decode()
    assert f'href="/panel/w/{tenant.workspace.id}/runs/{run_id}/"' in body
