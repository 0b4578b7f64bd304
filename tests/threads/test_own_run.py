"""GET /api/v1/runs/current: a runtime holding only a run token reads its run as accepted."""

from __future__ import annotations

import pytest

from memoryhub.services.end_users import erase_end_user
from tests.conftest import Api, error_of
from tests.threads.test_run_memory import accept
from tests.threads.test_run_received import team_thread

pytestmark = pytest.mark.django_db


def test_the_token_reads_its_run_with_what_it_received(owner, runner, agent):
    answered = accept(runner, team_thread(owner, runner, agent, end_user="alice"))
    response = Api(run_token=answered["token"]).get("/api/v1/runs/current")
    assert response.status_code == 200, response.content
    own = response.json()
    assert "token" not in own
    same = ("id", "end_user", "mounts", "context", "tools")
    assert {k: own[k] for k in same} == {k: answered[k] for k in same}
    assert own["input"] == "hello" and "language: Türkçe" in own["context"]


def test_an_ended_run_still_reads_itself_and_an_erased_person_leaves_nothing(
    tenant, owner, runner, agent
):
    answered = accept(runner, team_thread(owner, runner, agent, end_user="alice"))
    erase_end_user(tenant.owner, "alice")  # ends the run and clears what it received
    own = Api(run_token=answered["token"]).get("/api/v1/runs/current").json()
    assert (own["status"], own["end_user"], own["context"], own["input"]) == (
        "ended",
        None,
        "",
        None,
    )


def test_only_a_run_token_reads_it(owner, anonymous):
    for client in (owner, anonymous):
        response = client.get("/api/v1/runs/current")
        assert response.status_code == 401
        assert error_of(response)["code"] == "unauthenticated"
