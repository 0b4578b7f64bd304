"""What a caller's facts are (facts.scope): built once for each view of a memory and
copied for every request, so that no request ever sees another caller's facts, or facts
as they were when the view was first built."""

from __future__ import annotations

import pytest

from facts.paths import Viewer
from facts.scope import REAL_MEMORY, FactScope
from tests.facts.conftest import run_for, save

pytestmark = pytest.mark.django_db(transaction=True)
FACTS = "/v0/memory/facts"


def texts(api) -> list[str]:
    response = api.get(FACTS)
    assert response.status_code == 200, response.content
    return sorted(fact["text"] for fact in response.json()["facts"])


def test_each_end_user_sees_the_shared_facts_and_their_own_whoever_asked_first(
    tenant, agent, alice, bob, nobody
):
    save(alice, "users/{user}/", "alice's own")
    save(bob, "users/{user}/", "bob's own")
    save(nobody, "notes/", "shared")
    carol = run_for(tenant, agent, "carol")[1]
    for _ in range(2):  # the second round answered from views built in the first
        assert texts(alice) == ["alice's own", "shared"]
        assert texts(bob) == ["bob's own", "shared"]
        assert texts(nobody) == ["shared"]
        assert texts(carol) == ["shared"]


def test_a_view_built_before_a_write_sees_the_write(alice):
    save(alice, "notes/", "first")
    assert texts(alice) == ["first"]
    save(alice, "notes/", "second")
    assert texts(alice) == ["first", "second"]


def test_staff_see_every_folder_and_a_run_of_the_same_memory_only_its_share(agent, alice, bob):
    save(alice, "users/{user}/", "alice's own")
    save(bob, "users/{user}/", "bob's own")
    staff = FactScope(agent.workspace_id, agent.id, REAL_MEMORY, Viewer(is_run=False))
    assert sorted(staff.facts().values_list("text", flat=True)) == ["alice's own", "bob's own"]
    assert texts(bob) == ["bob's own"]
    assert sorted(staff.facts().values_list("text", flat=True)) == ["alice's own", "bob's own"]
