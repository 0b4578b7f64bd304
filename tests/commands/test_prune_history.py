"""prune_history: file revisions beyond a count or older than a date; counters follow."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.management import CommandError
from django.utils import timezone

from filememory.models import File, Revision
from memoryhub.models import Memory
from tests.commands.conftest import run, run_json
from tests.factories import create_memory


@pytest.fixture
def handbook(tenant, owner):
    """guide.md written four times, notes.md once."""
    memory = create_memory(tenant.owner, {"name": "Handbook", "type": "postgres"})
    url = f"/api/v1/memories/{memory.id}/files/guide.md"
    etag = owner.put(url, {"content": "v1"}).headers["ETag"]
    for content in ("v2", "v3", "v4 last"):
        etag = owner.put(url, {"content": content}, HTTP_IF_MATCH=etag).headers["ETag"]
    owner.put(f"/api/v1/memories/{memory.id}/files/notes.md", {"content": "n"})
    return memory


def _history(memory) -> list[tuple[str, str]]:
    rows = Revision.objects.filter(memory=memory).order_by("id")
    return [(r.path, r.content) for r in rows]


def test_keep_drops_older_revisions_per_file_and_the_counter_follows(handbook):
    result = run_json("prune_history", "Acme", "--keep", "2")
    assert result["memories"] == [{"memory": handbook.id, "revisions": 2, "bytes": 4}]
    assert _history(handbook) == [("guide.md", "v3"), ("guide.md", "v4 last"), ("notes.md", "n")]
    assert File.objects.get(path="guide.md").content == "v4 last"  # the file itself stays
    assert run_json("verify") == {"differences": [], "repaired": []}


def test_before_drops_revisions_older_than_the_date(handbook):
    first = Revision.objects.filter(memory=handbook).order_by("id").first()
    Revision.objects.filter(pk=first.pk).update(created_at=timezone.now() - timedelta(days=40))
    cutoff = (timezone.now() - timedelta(days=30)).date().isoformat()
    assert "dropped 1 revisions" in run("prune_history", "Acme", "--before", cutoff)
    assert ("guide.md", "v1") not in _history(handbook)
    assert Memory.objects.get(pk=handbook.pk).history_bytes == sum(
        r.size for r in Revision.objects.filter(memory=handbook)
    )


def test_dry_run_says_what_would_go_and_changes_nothing(handbook):
    before = (_history(handbook), Memory.objects.get(pk=handbook.pk).history_bytes)
    assert "would drop 3 revisions" in run("prune_history", "Acme", "--keep", "1", "--dry-run")
    assert (_history(handbook), Memory.objects.get(pk=handbook.pk).history_bytes) == before


@pytest.mark.parametrize(
    "args",
    [
        ("Acme",),
        ("Acme", "--keep", "-1"),
        ("Acme", "--memory", "mem_nope", "--keep", "1"),
        ("ws_nope", "--keep", "1"),
        ("Acme", "--before", "last tuesday"),
    ],
)
def test_bad_arguments_change_nothing(handbook, args):
    before = _history(handbook)
    with pytest.raises(CommandError):
        run("prune_history", *args)
    assert _history(handbook) == before
