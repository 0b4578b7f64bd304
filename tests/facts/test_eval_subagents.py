"""An eval whose child runs belong to other agents (subagents): one cleanup for all."""

from __future__ import annotations

from facts.models import Fact, FactQuota
from tests.conftest import Api
from tests.factories import create_agent
from tests.facts.conftest import run_for, save
from threads.services.runs import accept_run, end_run
from threads.services.threads import create_thread


def test_ending_the_root_eval_run_deletes_its_subagents_eval_facts(tenant, agent):
    root, root_api = run_for(tenant, agent, "alice", eval=True)
    save(root_api, "notes/", "root agent eval fact")
    helper = create_agent(tenant.owner, {"name": "Subagent"})
    sub_thread = create_thread(tenant.owner, helper.id, end_user="alice")
    child = accept_run(tenant.owner, sub_thread.id, parent_run_id=root.id)
    assert child.run.is_eval
    save(Api(run_token=child.token), "notes/", "subagent eval fact")
    assert Fact.objects.filter(scope=root.id).count() == 2
    end_run(tenant.owner, root.id)
    assert not Fact.objects.filter(scope=root.id).exists()
    assert not FactQuota.objects.filter(scope=root.id).exists()
    assert not Fact.objects.filter(agent=helper).exists()
