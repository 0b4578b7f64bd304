"""Both mem0 backends against the fake servers: the calls, the paging, every failure mode."""

from __future__ import annotations

import socket
import uuid

import pytest

from memoryhub.errors import ApiError
from records.backends import make_backend
from records.backends.oss import LIST_LIMIT
from tests.records.conftest import OSS_ADMIN_KEY, OSS_KEY, PLATFORM_KEY

NS = "a13n-" + "0" * 32


def _backend(kind: str, url: str, credential: dict | None, **config):
    provider_type = "mem0_platform" if kind == "platform" else "mem0_oss"
    return make_backend(
        provider_type,
        provider_id=f"memprov_{kind}",
        config={"base_url": url, "read_timeout": 1, **config},
        credential=credential,
    )


@pytest.fixture(params=["platform", "oss"])
def pair(request):
    """(backend, fake server) for each of the two APIs."""
    server = request.getfixturevalue(f"{request.param}_server")
    credential = (
        {"api_key": PLATFORM_KEY}
        if request.param == "platform"
        else {"api_key": OSS_KEY, "admin_api_key": OSS_ADMIN_KEY}
    )
    backend = _backend(request.param, server.url, credential)
    yield backend, server
    backend.close()


def _writes(server) -> list[dict]:
    return [r for r in server.requests if server.is_write(r["method"], r["path"])]


def test_add_then_get_search_list_update_delete(pair):
    backend, server = pair
    record = backend.add(NS, "The user prefers metric units", {"source": "chat"})
    assert uuid.UUID(record.id)
    assert record.text == "The user prefers metric units"
    assert record.metadata == {"source": "chat"}
    assert record.created_at.endswith("Z")
    assert backend.get(NS, record.id).text == record.text

    found = backend.search(NS, "metric units", 5)
    assert [r.id for r in found] == [record.id]
    assert found[0].score == 1.0

    page = backend.list(NS, limit=10, offset=0)
    assert page.count == 1 and page.records[0].id == record.id

    changed = backend.update(NS, record.id, text="The user prefers imperial units", metadata=None)
    assert changed.text == "The user prefers imperial units"
    assert changed.metadata == {"source": "chat"}
    # The Platform replaces the metadata; self-hosted mem0 merges it into the old one.
    assert backend.update(NS, record.id, text=None, metadata={"v": 2}).metadata["v"] == 2

    backend.delete(NS, record.id)
    assert backend.get(NS, record.id) is None
    assert backend.list(NS, limit=10, offset=0).count == 0


def test_records_are_written_verbatim_without_inference(pair):
    backend, server = pair
    backend.add(NS, "Kept as is", {})
    add = next(
        r
        for r in server.requests
        if r["method"] == "POST"
        and "add" in r["path"]
        or (r["method"] == "POST" and r["path"] == "/memories")
    )
    assert add["body"]["infer"] is False
    assert add["body"]["user_id"] == NS
    assert add["body"]["messages"] == [{"role": "user", "content": "Kept as is"}]


def test_platform_sends_token_auth_on_paths_with_a_slash(platform_server):
    backend = _backend("platform", platform_server.url, {"api_key": PLATFORM_KEY})
    backend.add(NS, "x", {})
    backend.search(NS, "x", 3)
    for request in platform_server.requests:
        assert request["headers"]["Authorization"] == f"Token {PLATFORM_KEY}"
        assert request["path"].endswith("/")
    search = next(r for r in platform_server.requests if "search" in r["path"])
    assert search["body"]["filters"] == {"user_id": NS}
    assert "user_id" not in search["body"]


def test_oss_sends_the_user_key_and_the_admin_key_only_for_purges(oss_server):
    backend = _backend("oss", oss_server.url, {"api_key": OSS_KEY, "admin_api_key": OSS_ADMIN_KEY})
    backend.add(NS, "x", {})
    backend.delete_namespace(NS)
    add, purge = oss_server.requests[0], oss_server.requests[-1]
    assert add["headers"]["X-API-Key"] == OSS_KEY
    assert (purge["method"], purge["path"], purge["query"]) == (
        "DELETE",
        "/memories",
        {"user_id": NS},
    )
    assert purge["headers"]["X-API-Key"] == OSS_ADMIN_KEY
    assert "Authorization" not in add["headers"]


def test_oss_without_a_credential_sends_no_key(oss_server):
    oss_server.api_key = oss_server.admin_key = None  # AUTH_DISABLED
    backend = _backend("oss", oss_server.url, None)
    backend.add(NS, "x", {})
    assert "X-API-Key" not in oss_server.requests[0]["headers"]


def test_oss_purge_without_the_admin_key_names_the_auth_problem(oss_server):
    backend = _backend("oss", oss_server.url, {"api_key": OSS_KEY})
    backend.add(NS, "x", {})
    with pytest.raises(ApiError) as caught:
        backend.delete_namespace(NS)
    assert caught.value.reason == "provider_auth"
    assert backend.list(NS, limit=5, offset=0).count == 1


def test_delete_namespace_removes_only_that_namespace(pair):
    backend, _ = pair
    backend.add(NS, "mine", {})
    other = backend.add("other-ns", "theirs", {})
    backend.delete_namespace(NS)
    assert backend.list(NS, limit=5, offset=0).count == 0
    assert backend.get("other-ns", other.id).text == "theirs"


def test_a_record_of_another_namespace_is_not_found(pair):
    backend, _ = pair
    theirs = backend.add("other-ns", "theirs", {})
    assert backend.get(NS, theirs.id) is None
    with pytest.raises(ApiError) as caught:
        backend.update(NS, theirs.id, text="hijacked", metadata=None)
    assert caught.value.status == 404
    with pytest.raises(ApiError):
        backend.delete(NS, theirs.id)
    assert backend.get("other-ns", theirs.id).text == "theirs"


@pytest.mark.parametrize("record_id", ["not-a-uuid", "../../v1/ping", "", "x" * 100])
def test_malformed_record_ids_name_no_record(pair, record_id):
    backend, server = pair
    assert backend.get(NS, record_id) is None
    assert server.requests == []


def test_an_unknown_record_is_none_and_404_on_change(pair):
    backend, _ = pair
    unknown = str(uuid.uuid4())
    assert backend.get(NS, unknown) is None
    with pytest.raises(ApiError) as caught:
        backend.delete(NS, unknown)
    assert caught.value.status == 404


def test_platform_deduplicates_an_exact_repeat(platform_server):
    backend = _backend("platform", platform_server.url, {"api_key": PLATFORM_KEY})
    backend.add(NS, "same text", {})
    with pytest.raises(ApiError) as caught:
        backend.add(NS, "same text", {})
    assert (caught.value.status, caught.value.code) == (409, "already_exists")


def test_oss_keeps_repeats(oss_server):
    backend = _backend("oss", oss_server.url, {"api_key": OSS_KEY})
    backend.add(NS, "same text", {})
    backend.add(NS, "same text", {})
    assert backend.list(NS, limit=5, offset=0).count == 2


def test_platform_pages_map_onto_limit_and_offset(platform_server):
    backend = _backend("platform", platform_server.url, {"api_key": PLATFORM_KEY})
    added = [backend.add(NS, f"record {i}", {}).id for i in range(7)]
    newest_first = list(reversed(added))
    seen = []
    for offset in range(0, 7, 3):
        page = backend.list(NS, limit=3, offset=offset)
        assert page.count == 7
        seen += [r.id for r in page.records]
    assert seen == newest_first
    # A window that straddles two Platform pages.
    assert [r.id for r in backend.list(NS, limit=3, offset=2).records] == newest_first[2:5]
    # Past the end (the Platform answers 404 "Invalid page.").
    past = backend.list(NS, limit=3, offset=30)
    assert past.records == [] and past.count == 7
    for request in platform_server.requests:
        if request["path"] == "/v3/memories/":
            assert 1 <= int(request["query"]["page_size"]) <= 200


def test_platform_limits_over_200_stay_within_its_page_size(platform_server):
    backend = _backend("platform", platform_server.url, {"api_key": PLATFORM_KEY})
    for i in range(3):
        backend.add(NS, f"record {i}", {})
    assert len(backend.list(NS, limit=500, offset=0).records) == 3


def test_oss_lists_at_most_1000_and_pages_itself(oss_server):
    for i in range(LIST_LIMIT + 5):
        oss_server.new_record(f"record {i}", NS, None)
    backend = _backend("oss", oss_server.url, {"api_key": OSS_KEY})
    page = backend.list(NS, limit=10, offset=990)
    assert page.count == LIST_LIMIT
    assert [r.text for r in page.records][:1] == ["record 14"]
    assert oss_server.requests[-1]["query"] == {"user_id": NS, "top_k": "1000"}


def test_search_respects_k(pair):
    backend, _ = pair
    for i in range(6):
        backend.add(NS, f"coffee preference {i}", {})
    assert len(backend.search(NS, "coffee", 4)) == 4


def test_the_backends_test_lists_one_page_and_writes_nothing(pair):
    backend, server = pair
    backend.test("a13n-test-unused")
    assert len(server.requests) == 1
    assert _writes(server) == []


# --- failure modes ------------------------------------------------------------------------


def _fails(call, status: int, reason: str | None = None, dependency: str | None = None):
    with pytest.raises(ApiError) as caught:
        call()
    error = caught.value
    assert error.status == status, error
    if reason is not None:
        assert error.reason == reason
    if dependency is not None:
        assert error.extra["dependency"] == dependency
    return error


def _dependency(backend) -> str:
    return f"memory:{backend.type}"


def test_a_refused_connection_is_unavailable(pair):
    backend, server = pair
    with socket.socket() as probe:  # a port on which nothing listens
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    backend.base_url = f"http://127.0.0.1:{port}"
    _fails(lambda: backend.list(NS, limit=5, offset=0), 503, dependency=_dependency(backend))
    # A write that never left is not "unconfirmed": it certainly did not happen.
    _fails(lambda: backend.add(NS, "x", {}), 503, dependency=_dependency(backend))


def test_a_slow_read_is_unavailable(pair):
    backend, server = pair
    server.delay = 3
    _fails(lambda: backend.search(NS, "x", 3), 503, dependency=_dependency(backend))


def test_a_slow_write_is_unconfirmed_and_not_retried(pair):
    backend, server = pair
    server.delay = 3
    _fails(lambda: backend.add(NS, "slow", {}), 409, reason="write_unconfirmed")
    assert len(server.requests) == 1


def test_an_answer_dropped_after_a_write_is_unconfirmed_and_not_retried(pair):
    backend, server = pair
    server.drop_after_write = True
    error = _fails(lambda: backend.add(NS, "dropped", {}), 409, reason="write_unconfirmed")
    assert error.code == "conflict"
    assert len(_writes(server)) == 1
    server.drop_after_write = False
    # It did happen: the caller is told to look before writing again.
    assert [r.text for r in backend.list(NS, limit=5, offset=0).records] == ["dropped"]


def test_a_dropped_update_and_delete_are_unconfirmed(pair):
    backend, server = pair
    record = backend.add(NS, "before", {})
    server.drop_after_write = True
    _fails(lambda: backend.update(NS, record.id, text="after", metadata=None), 409)
    _fails(lambda: backend.delete(NS, record.id), 409, reason="write_unconfirmed")


def test_a_dropped_read_is_unavailable(pair):
    backend, server = pair
    server.drop = True
    _fails(lambda: backend.list(NS, limit=5, offset=0), 503, dependency=_dependency(backend))


@pytest.mark.parametrize("status", [500, 502, 503, 429])
def test_server_errors_and_rate_limits_are_unavailable(pair, status):
    backend, server = pair
    server.fail(status)
    error = _fails(lambda: backend.search(NS, "x", 3), 503, dependency=_dependency(backend))
    assert error.code == "unavailable"
    _fails(lambda: backend.add(NS, "x", {}), 503, dependency=_dependency(backend))


def test_a_malformed_answer_is_unavailable_for_reads_and_unconfirmed_for_writes(pair):
    backend, server = pair
    server.malformed = True
    _fails(lambda: backend.list(NS, limit=5, offset=0), 503, dependency=_dependency(backend))
    _fails(lambda: backend.add(NS, "x", {}), 409, reason="write_unconfirmed")


def test_an_answer_of_the_wrong_shape_is_unavailable(pair, monkeypatch):
    backend, server = pair
    monkeypatch.setattr(
        server,
        "handle",
        lambda *a: __import__("support.fakes.mem0", fromlist=["Reply"]).Reply(
            200, {"results": "nope"}
        ),
    )
    _fails(lambda: backend.search(NS, "x", 3), 503, dependency=_dependency(backend))


def test_a_refused_credential_names_the_provider(pair):
    backend, server = pair
    server.refuse_auth = True
    error = _fails(lambda: backend.search(NS, "x", 3), 503, reason="provider_auth")
    assert error.extra["provider_id"] == backend.provider_id
    assert backend.provider_id in error.message
    assert error.extra["dependency"] == _dependency(backend)


def test_a_wrong_key_is_refused_as_provider_auth(platform_server, oss_server):
    for kind, server in (("platform", platform_server), ("oss", oss_server)):
        backend = _backend(kind, server.url, {"api_key": "wrong-key"})
        error = _fails(lambda b=backend: b.list(NS, limit=1, offset=0), 503, "provider_auth")
        assert "wrong-key" not in error.message


def test_an_answer_over_the_size_cap_is_refused(pair, monkeypatch):
    from records.backends import base

    backend, _ = pair
    for i in range(5):
        backend.add(NS, f"a record long enough to matter, number {i}", {})
    monkeypatch.setattr(base, "MAX_ANSWER_BYTES", 300)
    _fails(lambda: backend.list(NS, limit=50, offset=0), 503, dependency=_dependency(backend))
    _fails(lambda: backend.add(NS, "x" * 400, {}), 409, reason="write_unconfirmed")


@pytest.mark.parametrize(
    "content",
    [
        b"[" * 5000 + b"]" * 5000,  # deeper than Python's JSON decoder can go
        b'{"results": [{"id": "a", "memory": "x", "score": NaN}]}',
        b'{"results": [{"id": "a", "memory": "x", "metadata": {"n": 1e400}}]}',
        b'{"results": [{"id": "a", "memory": "a\\ud800b"}]}',
    ],
)
def test_an_answer_no_json_reader_could_carry_on_is_unavailable(pair, content):
    backend, _server = pair
    _fails(lambda: backend._answer(200, content, False), 503, dependency=_dependency(backend))
    _fails(lambda: backend._answer(200, content, True), 409, reason="write_unconfirmed")


def test_out_of_range_scores_and_dates_are_left_out_not_fatal(pair):
    backend, _server = pair
    record = backend.record_of(
        {
            "id": "a",
            "memory": "x",
            "score": 10**400,
            "created_at": "0001-01-01T00:00:00+05:00",
            "updated_at": "9999-12-31T23:59:59-05:00",
        }
    )
    assert (record.text, record.score, record.created_at, record.updated_at) == (
        "x",
        None,
        None,
        None,
    )
