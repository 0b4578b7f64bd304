"""The file memory's context block: full on first sight, then only what changed."""

from __future__ import annotations

import pytest

from filememory.context import file_context_block
from filememory.models import File, SeenFile
from filememory.representations import file_etag
from filememory.services.files import delete_file, put_file
from filememory.services.writes import Actor
from memoryhub.services.memories import delete_memory
from tests.factories import update_memory
from tests.filememory.conftest import limits


def person_writes(tenant, memory, path, content):
    current = File.objects.filter(memory=memory, path=path).first()
    etag = file_etag(current) if current else None
    return put_file(Actor(tenant.owner), memory.id, path, content, etag)[0]


@pytest.fixture
def team(tenant, memory):
    update_memory(
        tenant.owner,
        memory.id,
        {"guide": "One file per topic.", "always_load": ["README.md", "missing.md"]},
        '"1"',
    )
    person_writes(tenant, memory, "README.md", "Start here.")
    person_writes(tenant, memory, "prefs/units.md", "Metric.")
    person_writes(tenant, memory, "prefs/language.md", "English.")
    memory.refresh_from_db()
    return memory


def test_first_sight_is_full(team, converse):
    c = converse()
    block = c.context()
    assert block.startswith(f'<memory name="Team conventions" id="{team.id}" kind="file">\n')
    assert block.endswith("</memory>\n")
    assert "Guide:\nOne file per topic.\n" in block
    assert '<file path="README.md" version="1">\nStart here.\n</file>' in block
    assert "Files (3):" in block
    assert "- prefs/units.md (7 bytes, version 1)" in block
    assert "Metric." not in block  # only listed, not loaded
    # The always-loaded file was seen in full, the others only listed.
    assert "overwritten" in c.tool("memory_file_create", path="README.md", file_text="New.")
    answer = c.tool("memory_file_create", path="prefs/units.md", file_text="x")
    assert answer.startswith("error: precondition_failed:")


def test_afterwards_only_changes(tenant, team, converse):
    a, b = converse(), converse()
    a.context()
    b.context()
    assert "No changes since" in a.context()
    b.tool("memory_file_view", path="prefs/units.md")
    b.tool("memory_file_create", path="prefs/units.md", file_text="Imperial.")  # by B
    person_writes(tenant, team, "new.md", "By a person.")  # by a person
    readme = File.objects.get(memory=team, path="README.md")
    delete_file(Actor(tenant.owner), team.id, "README.md", file_etag(readme))
    block = a.context()
    assert "Guide:" not in block and "Files (" not in block
    assert '<file path="prefs/units.md" version="2">\nImperial.\n</file>' in block
    assert '<file path="new.md" version="1">\nBy a person.\n</file>' in block
    assert "- README.md was deleted" in block
    assert "language" not in block
    # A has now seen B's version and may build on it.
    assert "edited" in a.tool(
        "memory_file_str_replace", path="prefs/units.md", old_str="Imperial", new_str="Metric"
    )
    # Its own write is no change for itself, but is one for B.
    assert "No changes since" in a.context()
    assert "Metric." in b.context()


def test_full_again_after_compaction(team, converse):
    c = converse()
    c.context()
    c.tool("memory_file_view", path="prefs/units.md")
    block = c.context(full=True)
    assert "Guide:" in block and "Files (3):" in block
    # The compacted conversation no longer holds what it viewed before.
    answer = c.tool("memory_file_create", path="prefs/units.md", file_text="x")
    assert answer.startswith("error: precondition_failed:")


def test_guide_change_is_shown_again(tenant, team, converse):
    c = converse()
    c.context()
    update_memory(tenant.owner, team.id, {"guide": "New guide."}, f'"{team.version}"')
    assert "Guide:\nNew guide.\n" in c.context()
    assert "Guide:" not in c.context()


def test_null_guide_inherits_and_empty_means_none(tenant, memory, converse):
    assert "Guide:\nKeep one file per topic" in converse().context()
    update_memory(tenant.owner, memory.id, {"guide": ""}, '"1"')
    assert "Guide:" not in converse().context()
    custom = {"default_guide.file": "Deployment guide."}
    update_memory(tenant.owner, memory.id, {"guide": None}, '"2"')
    with limits(**custom):
        assert "Guide:\nDeployment guide.\n" in converse().context()


def test_empty_memory(memory, converse):
    assert "The memory has no files yet." in converse().context()


@pytest.mark.parametrize("budget", [500, 800, 1500, 3000])
def test_never_over_budget_and_says_what_it_left_out(tenant, team, converse, budget):
    for i in range(80):
        person_writes(tenant, team, f"notes/{i:02}.md", "n" * 100)
    c = converse()
    block = c.context(budget=budget)
    assert block.endswith("</memory>\n")
    assert len(block.encode()) <= budget
    assert "Left out for space" in block
    for i in range(80):
        person_writes(tenant, team, f"notes/{i:02}.md", "m" * 100)
    block = c.context(budget=budget)
    assert len(block.encode()) <= budget
    assert "Left out for space" in block


def test_too_small_a_budget_gives_nothing(team, converse):
    c = converse()
    assert c.context(budget=100) == ""
    assert not SeenFile.objects.exists()


def test_always_load_bytes(tenant, team, converse):
    person_writes(tenant, team, "README.md", "r" * 300)
    with limits(always_load_bytes=200):
        block = converse().context()
    assert "r" * 300 not in block
    assert "Left out for space (read them with memory_file_view): README.md" in block


def test_left_out_changes_come_back(tenant, team, converse):
    c = converse()
    c.context()
    person_writes(tenant, team, "prefs/units.md", "u" * 2000)
    block = c.context(budget=1000)
    assert "u" * 2000 not in block and "prefs/units.md (version 2)" in block
    assert "u" * 2000 in c.context()


def test_memory_deleted(tenant, team, converse):
    c = converse()
    c.context()
    delete_memory(tenant.owner, team.id, f'"{team.version}"')
    assert file_context_block(team.id, thread_id=c.thread.id, budget_bytes=5000, full=False) == ""
