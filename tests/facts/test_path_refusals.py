"""Fact paths that are refused: ``.``/``..`` segments, segments with an invisible character,
and top-level look-alikes of ``users``.

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
    "ᴜꜱᴇʀꜱ/bob/",  # Latin small capitals
    "usᴇrs/bob/",  # small capital E alone
    "useʀs/",  # small capital R alone
    "Uꜱᴇʀꜱ/",  # a capital and small capitals
    "\u1db8sers/bob/",  # modifier small capital U: NFKC gives a small capital
    "use\U000107aas/",  # modifier small capital R
]
# Each segment holds a Default_Ignorable code point that the segment pattern lets through
# (the Hangul fillers are letters): "users\u3164/bob/" renders exactly as "users/bob/".
INVISIBLE = [
    "users\u115f/bob/",  # HANGUL CHOSEONG FILLER
    "users\u1160/",  # HANGUL JUNGSEONG FILLER
    "users\u3164/",  # HANGUL FILLER
    "users\uffa0/",  # HALFWIDTH HANGUL FILLER
    "\u3164/",  # nothing but a filler
    "notes/\u3164/",  # deeper in the path
    "notes/to\uffa0do/",
    "users/bob\u1160/",
]
STILL_FINE = [
    "userscripts/",
    "user/",
    "şirket/",
    "müşteriler/ayşe/",
    "notes/users/x/",
    "üsers/",
    "kullanıcılar/",  # Turkish dotless i
    "사용자/",  # Korean syllables (not fillers)
    "ユーザー/",
    "ᴀʙᴄ/",  # small capitals that do not spell users
    "ᵾsers/",  # small capital U with stroke: a different letter, like ü
]


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


@pytest.mark.parametrize("path", INVISIBLE)
def test_invisible_characters_are_refused_everywhere(alice, owner, agent, path):
    _refused(alice.post(FACTS, {"path": path, "text": "x"}), "invisible", "U+")
    _refused(alice.get(FACTS, {"path": path}), "invisible")
    _refused(alice.post("/v0/memory/search", {"query": "x", "path": path}))
    _refused(alice.post("/v0/memory/context", {"query": "x", "paths": [path]}))
    _refused(alice.get("/v0/memory/tools", {"paths": path}))
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


@pytest.mark.parametrize("bad", [".", "..", "bob\u3164", "\u115falice"])
def test_dot_and_invisible_end_user_ids_are_refused(runner, agent, bad):
    # The id becomes the segment of users/<id>/, where these would be refused.
    response = runner.post("/api/v1/threads", {"agent_id": agent.id, "end_user": bad})
    assert response.status_code == 422


def test_dotted_end_user_ids_still_work(runner, agent):
    for good in ("...", ".alice", "a.b", "j.doe@example.com"):
        response = runner.post("/api/v1/threads", {"agent_id": agent.id, "end_user": good})
        assert response.status_code == 201, good
