"""Request serializers built from rules: each request gets fields of its own.

DRF copies a serializer's declared fields for every instance; ``RuleField`` copies itself
cheaply (``memoryhub.rules``), which must not let one request's state reach another's.
"""

from __future__ import annotations

import pytest
from rest_framework import serializers

from memoryhub.errors import ApiError
from memoryhub.rules import RequestSerializer, Rule, parse


def _labels(value: object) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ApiError(422, "labels must be a list of strings")
    return value


def _word(value: object) -> str:
    if not isinstance(value, str) or not value.isalpha():
        raise ApiError(422, "each word must be letters only")
    return value


LABELS = Rule(_labels, {"type": "array", "items": {"type": "string"}})
WORD = Rule(_word, {"type": "string"})


class Labelled(RequestSerializer):
    labels = LABELS.field(required=False, default=["inbox"])
    words = serializers.ListField(child=WORD.field(), required=False)


def test_each_serializer_has_its_own_fields_bound_to_it():
    first, second = Labelled(data={}), Labelled(data={})

    assert first.fields["labels"] is not second.fields["labels"]
    assert first.fields["labels"].parent is first
    assert second.fields["labels"].parent is second
    assert first.fields["labels"].field_name == "labels"
    assert first.fields["words"].child.parent is first.fields["words"]


def test_a_default_changed_by_one_request_is_not_the_next_requests_default():
    first = parse(Labelled, {})
    first["labels"].append("archive")

    assert parse(Labelled, {}) == {"labels": ["inbox"]}
    assert Labelled._declared_fields["labels"].default == ["inbox"]


def test_a_rule_as_a_lists_child_checks_every_item_in_every_copy():
    assert parse(Labelled, {"words": ["alpha", "beta"]})["words"] == ["alpha", "beta"]
    with pytest.raises(ApiError) as refused:
        parse(Labelled, {"words": ["alpha", "b3ta"]})
    assert refused.value.status == 422
    assert parse(Labelled, {"words": ["gamma"]})["words"] == ["gamma"]
