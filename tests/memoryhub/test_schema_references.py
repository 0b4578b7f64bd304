"""Every reference of the served schema names one of its components: a rule's schema may
point at a component by hand (a mount list's items, the toolset's tool keys), and such a
reference must not dangle."""

from __future__ import annotations

from django.test import Client


def _references(node) -> set[str]:
    if isinstance(node, dict):
        found = {node["$ref"]} if isinstance(node.get("$ref"), str) else set()
        for value in node.values():
            found |= _references(value)
        return found
    if isinstance(node, list):
        return set().union(*map(_references, node)) if node else set()
    return set()


def test_every_reference_names_a_component(db):
    response = Client().get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    schema = response.json()
    components = schema["components"]["schemas"]
    references = _references(schema)
    assert "#/components/schemas/NewMemoryMountRequest" in references
    prefix = "#/components/schemas/"
    dangling = {
        r for r in references if not r.startswith(prefix) or r[len(prefix) :] not in components
    }
    assert not dangling


def test_mount_lists_are_lists_of_the_one_new_mount(db):
    response = Client().get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    components = response.json()["components"]["schemas"]
    item = {"$ref": "#/components/schemas/NewMemoryMountRequest"}
    assert components["AgentFieldsRequest"]["properties"]["memory_mounts"]["items"] == item
    assert components["ThreadCreateRequest"]["properties"]["memories"]["items"] == item
    assert components["ThreadForkRequest"]["properties"]["memories"]["items"] == item
    mount = components["NewMemoryMountRequest"]
    assert sorted(mount["required"]) == ["memory_id", "name"]
    assert mount["additionalProperties"] is False
