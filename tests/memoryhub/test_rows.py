"""memoryhub.rows: several new rows in one statement, the rows ``save()`` would write, and
what it refuses before writing anything."""

from __future__ import annotations

import pytest
from django.db.models import F
from django.db.models.functions import Now
from django.forms.models import model_to_dict
from django.test.utils import isolate_apps

from facts.models import Fact, FactVersion
from memoryhub import rows
from memoryhub.models import AuditEvent


def event(tenant, **fields) -> AuditEvent:
    values = {"principal_type": "key", "principal_id": "key_1", "action": "test.rows"}
    return AuditEvent(workspace=tenant.workspace, object_type="fact", **values | fields)


def test_the_rows_are_those_save_writes(tenant):
    saved, inserted = event(tenant, object_id="a"), event(tenant, object_id="b")
    saved.save(force_insert=True)
    rows.insert(inserted)
    assert inserted.pk is not None and inserted.pk != saved.pk
    assert not inserted._state.adding
    stored = {e.object_id: model_to_dict(e, exclude=["id", "object_id"]) for e in
              AuditEvent.objects.filter(action="test.rows")}  # fmt: skip
    assert stored["a"] == stored["b"] == model_to_dict(saved, exclude=["id", "object_id"])
    assert AuditEvent.objects.get(pk=inserted.pk).created_at is not None


def test_several_rows_in_order_each_get_their_key(tenant):
    events = [event(tenant, object_id=str(n)) for n in range(3)]
    rows.insert(*events)
    keys = [e.pk for e in events]
    assert keys == sorted(keys)
    assert [AuditEvent.objects.get(pk=k).object_id for k in keys] == ["0", "1", "2"]


@pytest.mark.parametrize("value", [F("action"), Now()], ids=["F", "Now"])
def test_an_expression_is_refused_and_nothing_is_written(tenant, value):
    first, second = event(tenant, object_id="kept out"), event(tenant, object_id="x")
    second.request_id = value
    with pytest.raises(TypeError, match=r"AuditEvent\.request_id"):
        rows.insert(first, second)
    assert not AuditEvent.objects.filter(action="test.rows").exists()


def test_a_related_object_without_its_key_is_refused(tenant, agent):
    fact = Fact(id=None, workspace=tenant.workspace, agent=agent, path="notes/", text="t")
    version = FactVersion(workspace=tenant.workspace, agent=agent, fact=fact, version=1)
    with pytest.raises(ValueError, match="unsaved related object 'fact'"):
        rows.insert(fact, version)
    assert not Fact.objects.filter(agent=agent).exists()


@isolate_apps("memoryhub")  # the model class is not left in the app registry
def test_a_proxy_model_is_refused(tenant):
    class Proxy(AuditEvent):
        class Meta:
            proxy = True
            app_label = "memoryhub"

    with pytest.raises(TypeError, match="concrete model"):
        rows.insert(Proxy(workspace=tenant.workspace, object_id="p"))
    assert not AuditEvent.objects.filter(object_id="p").exists()
