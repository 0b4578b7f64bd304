"""Fact paths that are refused: ``.``/``..`` segments and top-level look-alikes of ``users``.

Every place that takes a path (writes, list filters, search, context, tools, the staff API)
goes through ``facts.paths.segments_of``, so each refusal is checked at each of them.
"""

from __future__ import annotations

import pytest

from facts.models import Fact
from tests.conftest import error_of
from tests.facts.conftest import save

FACTS = "/v0/memory/facts"

DOT_PATHS = ["notes/../users/bob/", "./notes/", "notes/./x/", "..", "notes/..", "./"]
# Each folds (NFKC, case) or maps (Unicode confusables) to "users" without being "users".
LOOK_ALIKES = [
    "Users/bob/",
    "USERS/bob/",
    "ｕｓｅｒｓ/bob/",  # fullwidth
    "uѕers/bob/",  # Cyrillic dze
    "usеrs/bob/",  # Cyrillic ie
    "υsers/bob/",  # Greek upsilon
    "սsers/bob/",  # Armenian seh
    "useгs/bob/",  # Cyrillic ghe
    "UЅЕRS/",  # Cyrillic capitals, folded
    "uſers/notes/",  # long s: NFKC gives s
]
STILL_FINE = ["userscripts/", "user/", "şirket/", "müşteriler/ayşe/", "notes/users/x/", "üsers/"]


def _refused(response, *words: str) -> None:
    assert response.status_code == 422, response.content
    message = error_of(response)["message"]
    for word in words:
        assert word in message, message


@pytest.mark.parametrize("path", DOT_PATHS)
def test_dot_segments_are_refused_everywhere(alice, owner, agent, path):
    _refused(alice.post(FACTS, {"path": path, "text": "x"}), "'.'")
    _refused(alice.get(FACTS, {"path": path}))
    _refused(alice.post("/v0/memory/search", {"query": "x", "path": path}))
    _refused(alice.post("/v0/memory/context", {"query": "x", "paths": [path]}))
    _refused(alice.get("/v0/memory/tools", {"paths": path}))
    _refused(owner.get(f"/api/v1/agents/{agent.id}/facts", {"path": path}))
    assert not Fact.objects.exists()


@pytest.mark.parametrize("path", LOOK_ALIKES)
def test_look_alikes_of_users_are_refused(alice, owner, agent, path):
    _refused(alice.post(FACTS, {"path": path, "text": "x"}), "looks like", "users/")
    _refused(alice.get(FACTS, {"path": path}))
    _refused(alice.post("/v0/memory/search", {"query": "x", "path": path}))
    _refused(alice.post("/v0/memory/context", {"query": "x", "paths": [path]}))
    _refused(owner.get(f"/api/v1/agents/{agent.id}/facts", {"path": path}))
    assert not Fact.objects.exists()


def test_look_alike_tool_paths_are_refused(alice):
    _refused(alice.get("/v0/memory/tools", {"paths": "Users/{user}/"}))


@pytest.mark.parametrize("path", STILL_FINE)
def test_ordinary_folders_still_work(alice, path):
    saved = save(alice, path, "kept")
    assert saved["path"] == path
    assert [f["id"] for f in alice.get(FACTS, {"path": path}).json()["facts"]] == [saved["id"]]


def test_the_users_folder_still_works(alice):
    saved = save(alice, "users/{user}/", "mine")
    assert saved["path"] == "users/alice/"
    assert alice.get(FACTS, {"path": "users/alice/"}).json()["facts"][0]["id"] == saved["id"]


@pytest.mark.parametrize("bad", [".", ".."])
def test_dot_end_user_ids_are_refused(runner, agent, bad):
    # The id becomes the segment of users/<id>/; "." and ".." would be refused there.
    response = runner.post("/api/v1/threads", {"agent_id": agent.id, "end_user": bad})
    assert response.status_code == 422


def test_dotted_end_user_ids_still_work(runner, agent):
    for good in ("...", ".alice", "a.b", "j.doe@example.com"):
        response = runner.post("/api/v1/threads", {"agent_id": agent.id, "end_user": good})
        assert response.status_code == 201, good
