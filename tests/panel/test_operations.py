"""Purge jobs (with their tries, and retry) and the audit log in the panel."""

from __future__ import annotations

import pytest

from memoryhub import audit
from memoryhub.models import MemoryProvider
from records.models import PurgeAttempt, PurgeJob
from tests.panel.conftest import logged_in

pytestmark = pytest.mark.django_db


def url(tenant, rest: str) -> str:
    return f"/panel/w/{tenant.workspace.id}/{rest}"


@pytest.fixture
def failed_job(tenant):
    provider = MemoryProvider.objects.create(
        workspace=tenant.workspace,
        type="mem0_oss",
        name="Local mem0",
        config={"base_url": "http://127.0.0.1:9"},
    )
    job = PurgeJob.objects.create(
        workspace=tenant.workspace,
        provider=provider,
        namespace="gone-ns",
        memory_id="mem_gone",
        memory_name="Old records",
        status=PurgeJob.Status.FAILED,
        attempts=5,
        last_error="mem0 did not answer: <b>timeout</b>",
    )
    for number in (1, 2):
        PurgeAttempt.objects.create(
            job=job, workspace=tenant.workspace, number=number, error=f"try {number} failed"
        )
    return job


def test_purge_jobs_show_their_tries_and_errors(viewer, tenant, failed_job):
    response = logged_in(viewer).get(url(tenant, "purges/"))
    body = response.content.decode()
    assert response.status_code == 200
    assert "Old records" in body and "failed" in body
    assert "try 2 failed" in body and "try 1 failed" in body
    assert "&lt;b&gt;timeout&lt;/b&gt;" in body  # an error is text, never markup
    assert "Retry</button>" not in body  # a viewer is offered no retry


def test_the_purge_list_runs_no_query_per_job(
    viewer, tenant, failed_job, django_assert_max_num_queries
):
    for n in range(20):
        job = PurgeJob.objects.create(
            workspace=tenant.workspace,
            provider=failed_job.provider,
            namespace=f"ns-{n}",
            memory_id=f"mem_{n}",
        )
        PurgeAttempt.objects.create(job=job, workspace=tenant.workspace, number=1, error="x")
    client = logged_in(viewer)
    with django_assert_max_num_queries(9):
        response = client.get(url(tenant, "purges/"))
    assert response.status_code == 200


def test_only_an_admin_retries_and_it_is_audited(
    viewer, editor, panel_admin, tenant, failed_job, settings
):
    settings.CELERY_TASK_ALWAYS_EAGER = False  # the retry is sent, not run here
    retry = url(tenant, f"purges/{failed_job.id}/retry/")
    assert logged_in(viewer).post(retry).status_code == 403
    assert logged_in(editor).post(retry).status_code == 403
    assert logged_in(panel_admin).get(retry).status_code == 405
    done = logged_in(panel_admin).post(retry, follow=True)
    assert f"Purge {failed_job.id} starts over." in done.content.decode()
    failed_job.refresh_from_db()
    assert (failed_job.status, failed_job.attempts) == (PurgeJob.Status.PENDING, 0)
    event = tenant.workspace.audit_events.get(action="purge.retry")
    assert event.principal_id == "user:ada" and event.object_id == failed_job.id


def test_another_workspaces_purge_is_404(outsider, panel_admin, tenant, other_tenant, failed_job):
    assert logged_in(outsider).get(url(tenant, "purges/")).status_code == 404
    theirs = url(other_tenant, f"purges/{failed_job.id}/retry/")
    assert logged_in(outsider).post(theirs).status_code == 404


def test_the_audit_log_filters_by_who_what_object_and_time(viewer, tenant):
    system, key = tenant.owner, tenant.owner
    audit.record(system, "fact.write", "fact", "m_1", path="notes/")
    audit.record(system, "end_user.erase", "end_user", "usr_1")
    audit.record(key, "memory.create", "memory", "mem_9")
    client = logged_in(viewer)
    everything = client.get(url(tenant, "audit/")).content.decode()
    assert "fact.write" in everything and "memory.create" in everything
    only = client.get(url(tenant, "audit/"), {"action": "end_user."}).content.decode()
    assert "end_user.erase" in only and "fact.write" not in only
    by_object = client.get(url(tenant, "audit/"), {"object": "mem_9"}).content.decode()
    assert "memory.create" in by_object and "fact.write" not in by_object
    nobody = client.get(url(tenant, "audit/"), {"actor": "user:nobody"}).content.decode()
    assert "No event matches." in nobody
    future = client.get(url(tenant, "audit/"), {"since": "2999-01-01"}).content.decode()
    assert "No event matches." in future
    bad = client.get(url(tenant, "audit/"), {"since": "yesterday"})
    assert bad.status_code == 422 and "since" in bad.content.decode()


def test_the_audit_log_is_per_workspace(outsider, tenant):
    assert logged_in(outsider).get(url(tenant, "audit/")).status_code == 404


def test_the_audit_logs_pages_keep_the_filter_and_name_one_page(viewer, tenant):
    for n in range(120):
        audit.record(tenant.owner, "fact.write", "fact", f"m_{n}")
    client = logged_in(viewer)
    second = client.get(url(tenant, "audit/"), {"action": "fact.", "page": "2"}).content.decode()
    assert "Page 2 of 3 (120 events)" in second
    assert 'href="?action=fact.&amp;page=1">← Newer' in second
    assert 'href="?action=fact.&amp;page=3">Older →' in second  # page= once, not twice
