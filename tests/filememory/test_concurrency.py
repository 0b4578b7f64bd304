"""Concurrent writers on real parallel connections: compare-and-set and byte accounting."""

from __future__ import annotations

import pytest

from filememory.models import File, Revision
from filememory.representations import file_etag
from filememory.services.files import put_file
from filememory.services.writes import Actor
from memoryhub.errors import ApiError
from tests.filememory.conftest import assert_accounting, limits
from tests.parallel import in_parallel

pytestmark = pytest.mark.django_db(transaction=True)


def test_ten_writers_with_the_same_etag(tenant, memory):
    actor = Actor(tenant.owner)
    first, _ = put_file(actor, memory.id, "shared.md", "v0", None)
    etag = file_etag(first)

    results = in_parallel(
        10, lambda i: put_file(actor, memory.id, "shared.md", f"writer {i}", etag)[0]
    )

    winners = [r for r in results if not isinstance(r, ApiError)]
    losers = [r for r in results if isinstance(r, ApiError)]
    assert len(winners) == 1 and len(losers) == 9
    current = File.objects.get(memory=memory, path="shared.md")
    assert current.version == 2 and current.content == winners[0].content
    for error in losers:
        assert error.status == 412
        assert error.extra["current"]["content"] == current.content
        assert error.extra["current"]["version"] == 2
    # No revision lost: the create and the one winning update.
    contents = Revision.objects.filter(memory=memory).order_by("id").values_list("content")
    assert [c for (c,) in contents] == ["v0", current.content]
    assert_accounting(memory)


def test_writers_retrying_on_412_all_land(tenant, memory):
    actor = Actor(tenant.owner)
    put_file(actor, memory.id, "log.md", "", None)

    def append(index: int) -> int:
        attempts = 0
        while True:
            attempts += 1
            current = File.objects.get(memory=memory, path="log.md")
            try:
                put_file(
                    actor, memory.id, "log.md", current.content + f"{index}\n", file_etag(current)
                )
                return attempts
            except ApiError as error:
                assert error.status == 412

    with limits(revisions_per_file=100):
        in_parallel(8, append)
    final = File.objects.get(memory=memory, path="log.md")
    assert sorted(final.content.split()) == [str(i) for i in range(8)]
    assert final.version == 9
    assert Revision.objects.filter(memory=memory).count() == 9
    assert_accounting(memory)


def test_writers_racing_the_total_bytes_limit(tenant, memory):
    actor = Actor(tenant.owner)
    with limits(max_total_bytes=10_000):
        results = in_parallel(
            12, lambda i: put_file(actor, memory.id, f"f{i}.md", "x" * 1500, None)[0]
        )
    full = [r for r in results if isinstance(r, ApiError)]
    assert all(e.status == 409 and e.reason == "memory_full" for e in full)
    assert len(results) - len(full) == 6  # 6 * 1500 <= 10_000 < 7 * 1500
    memory = assert_accounting(memory)
    assert memory.content_bytes == 9000
    assert memory.content_bytes + memory.history_bytes <= 10_000


def test_history_pruning_under_concurrent_writers(tenant, memory):
    actor = Actor(tenant.owner)
    with limits(max_total_bytes=5_000):
        in_parallel(10, lambda i: put_file(actor, memory.id, f"f{i}.md", "y" * 400, None)[0])
    memory = assert_accounting(memory)
    assert memory.content_bytes == 4000
    assert memory.content_bytes + memory.history_bytes <= 5_000
