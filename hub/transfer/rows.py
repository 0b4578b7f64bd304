"""The rules one imported row passes: the API's own, from each app's services.

A row is read column by column against its model first (every column there and none
unknown, each of its column's JSON type, length, range and choices), then by the rules the
API applies to the same fields (names, paths, sizes, the outbound policy of a provider's
base_url...). What a row refers to, and what the database holds already, is checked by
:mod:`.checking`, which knows the other rows.

Columns derived from others (a fact's search text, a file's size) are computed here, never
taken from the file. Every check is one the services declare; none is written anew here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.contrib.postgres.fields import ArrayField
from django.core.exceptions import ValidationError
from django.db import models
from django.utils import timezone

from facts import paths as fact_paths
from facts import search, validation
from facts.models import FACT_ID_PREFIX, WrittenBy
from facts.shards import SHARDS
from filememory.serializers import REVISION_AUTHORS
from filememory.services.paths import clean_path
from filememory.services.writes import content_size
from hub.transfer.format import MODELS, fields_of
from memoryhub import catalog, ids
from memoryhub.errors import ApiError
from memoryhub.models import MAX_NAMESPACE, Memory
from memoryhub.parsers import check_strings
from memoryhub.principals import is_principal_id
from memoryhub.services import memories
from memoryhub.services.agents import AGENT_MOUNTS, MOUNT_FIELDS, TOOLSET, check_mount
from memoryhub.services.common import NAME
from memoryhub.services.end_users import validate_external_id
from memoryhub.tools import MAX_TOOL_CALL_ID
from records.kind import NAMESPACE_PREFIX, validate_namespace
from records.services.providers import PROVIDER_CONFIG, config_for, validate_enabled, validate_type

Values = dict[str, Any]

# The JSON type each kind of column holds (a foreign key: its target's). JSON columns are
# left to the rules of their kind.
_JSON_TYPES: dict[str, type | tuple[type, ...]] = {
    "CharField": str,
    "TextField": str,
    "DateTimeField": str,
    "AutoField": int,
    "BigAutoField": int,
    "IntegerField": int,
    "BigIntegerField": int,
    "PositiveIntegerField": int,
    "SmallIntegerField": int,
    "BooleanField": bool,
    "FloatField": (int, float),
    "ArrayField": list,
}
# The prefix of each kind's public id (memoryhub.ids): ids name objects in URLs and logs.
_ID_PREFIXES = {
    "workspace": "ws",
    "memory_provider": "memprov",
    "agent": "agt",
    "end_user": "usr",
    "memory": "mem",
    "thread": "thr",
}
# A fact's primary key as its public id m_<n> can name it: 1 to 18 digits.
_MAX_FACT_PK = 10**18 - 1
# The largest id of a serial column (mounts, fact versions and counters, files, revisions)
# an import takes. It then moves each sequence past the ids it wrote
# (importing._reset_sequences), so an id near the column's maximum (2**63 - 1) would leave
# no id for any workspace's next row. No installation hands out 2**53 ids (the bound of
# the numbers JSON holds exactly, as fact ids keep to); past it, 2**63 - 2**53 stay free.
MAX_SERIAL_ID = 2**53 - 1


def clean(kind: str, row: object) -> Values:
    """The row's values as they would be stored; ApiError naming the first problem."""
    if not isinstance(row, dict):
        raise ApiError(422, "row must be a JSON object")
    check_strings(row)  # the request parser's rule: no NUL, no lone surrogate
    values = _columns(MODELS[kind], row)
    if isinstance(MODELS[kind]._meta.pk, models.AutoField) and not (
        1 <= values["id"] <= MAX_SERIAL_ID
    ):
        raise ApiError(422, f"id must be 1 to {MAX_SERIAL_ID} (more would use up its sequence)")
    prefix = _ID_PREFIXES.get(kind)
    if prefix and not ids.is_well_formed(values["id"], prefix):
        raise ApiError(422, f"id must be an id like {prefix}_...")
    _RULES[kind](values)
    return values


def _columns(model: type[models.Model], row: dict) -> Values:
    fields = fields_of(model)
    names = {field.attname for field in fields}
    missing, unknown = sorted(names - set(row)), sorted(set(row) - names)
    if missing:
        raise ApiError(422, f"missing columns: {', '.join(missing)}")
    if unknown:
        raise ApiError(422, f"unknown columns: {', '.join(unknown)}")
    return {field.attname: _column(field, row[field.attname]) for field in fields}


def _column(field: models.Field, raw: Any) -> Any:
    name = field.attname
    if raw is None:
        if not field.null:
            raise ApiError(422, f"{name} may not be null")
        return None
    # A concrete relation is a foreign key: its column holds the target's key.
    stored = field.target_field if isinstance(field, models.ForeignKey) else field
    expected = _JSON_TYPES.get(stored.get_internal_type())
    if expected is not None and (
        not isinstance(raw, expected) or (isinstance(raw, bool) and expected is not bool)
    ):
        raise ApiError(422, f"{name} has the wrong type ({type(raw).__name__})")
    try:
        value = field.to_python(raw)
        if isinstance(field, models.JSONField | ArrayField):
            return value  # its kind's rules check it, item by item
        field.run_validators(value)  # lengths and integer ranges
    except ValidationError as error:
        raise ApiError(422, f"{name}: {' '.join(error.messages)}") from None
    if isinstance(field, models.DateTimeField) and (value is None or timezone.is_naive(value)):
        raise ApiError(422, f"{name} must be a time with its offset, as an export writes it")
    if field.choices and value not in {choice for choice, _ in field.flatchoices}:
        raise ApiError(422, f"{name} {value!r} is none of its choices")
    return value


def _at_least_one(values: Values, *names: str) -> None:
    for name in names:
        if values[name] is not None and values[name] < 1:
            raise ApiError(422, f"{name} is at least 1")


def _not_negative(values: Values, *names: str) -> None:
    for name in names:
        if values[name] < 0:
            raise ApiError(422, f"{name} may not be negative")


def _workspace(values: Values) -> None:
    values["name"] = NAME(values["name"])


def _memory_provider(values: Values) -> None:
    values["type"] = validate_type(values["type"])
    values["name"] = NAME(values["name"])
    # The outbound policy judges base_url here, as when a write key sets it.
    values["config"] = config_for(values["type"], PROVIDER_CONFIG(values["config"]))
    values["enabled"] = validate_enabled(values["enabled"])
    _at_least_one(values, "version")


def _agent(values: Values) -> None:
    values["name"] = NAME(values["name"])
    values["toolset"] = TOOLSET(values["toolset"])
    values["memory_mounts"] = AGENT_MOUNTS(values["memory_mounts"])
    _at_least_one(values, "version")


def _end_user(values: Values) -> None:
    values["external_id"] = validate_external_id(values["external_id"])


def _memory(values: Values) -> None:
    values["kind"] = memories.KIND(values["kind"])
    values["type"] = memories.TYPE(values["type"])
    kind = catalog.kind_for_type(values["type"])
    if kind.kind != values["kind"]:
        raise ApiError(422, f"type {values['type']} makes a {kind.kind} memory")
    values["name"] = NAME(values["name"])
    values["description"] = memories.DESCRIPTION(values["description"])
    values["labels"] = memories.LABELS(values["labels"])
    values["guide"] = memories.GUIDE(values["guide"])
    always_load = memories.ALWAYS_LOAD(values["always_load"])
    values["always_load"] = memories._kind_always_load(kind, always_load)
    if values["kind"] == Memory.Kind.RECORD:
        if values["provider_id"] is None:
            raise ApiError(422, "a record memory needs provider_id")
        values["namespace"] = _namespace(values["namespace"])
    else:
        for name in ("provider_id", "namespace"):
            if values[name] is not None:
                raise ApiError(422, f"a {values['kind']} memory has no {name}")
    _not_negative(values, "content_bytes", "history_bytes", "file_count")
    _at_least_one(values, "version")


def _namespace(value: Any) -> str:
    """The API's rule for a namespace. memoryhub's own defaults (``a13n-...``), which no one
    may name on create, pass too: an export carries them with the memories they were made
    for (who else uses one is :mod:`.checking`'s question)."""
    if value is None:
        raise ApiError(422, "a record memory needs its namespace")
    own = isinstance(value, str) and value.startswith(NAMESPACE_PREFIX)
    if own and len(value) <= MAX_NAMESPACE:
        validate_namespace(value.removeprefix(NAMESPACE_PREFIX))
        return value
    return validate_namespace(value)


def _thread(values: Values) -> None:
    _at_least_one(values, "version")


def _thread_mount(values: Values) -> None:
    values.update(check_mount({name: values[name] for name in MOUNT_FIELDS}, "mount"))


def _scope(value: str) -> str:
    """A facts memory: the agent's own (""), or an eval's (its root run's id)."""
    if value and not ids.is_well_formed(value, "run"):
        raise ApiError(422, "scope is '' or the id of an eval's root run")
    return value


def _fact_path(value: str) -> str:
    """A fact path as stored: the API's rules, written as they write it (``{user}``
    resolved, one trailing slash). Whose folder it is needs the owner: see .checking."""
    if fact_paths.USER_PLACEHOLDER in value:
        raise ApiError(422, "path: a stored path names users/<id>/, never {user}")
    stored = fact_paths.normalize(value)
    if stored != value:
        raise ApiError(422, f"path: {value!r} is stored as {stored!r}")
    return value


def _fact_fields(values: Values) -> None:
    """What a fact and each of its versions hold, by the facts API's rules."""
    values["path"] = _fact_path(values["path"])
    values["text"] = validation.text(values["text"])
    values["tags"] = validation.tags(values["tags"])
    values["confidence"] = validation.confidence(values["confidence"])
    _fact_source(values)
    _at_least_one(values, "version")


def _fact_source(values: Values) -> None:
    """Who wrote a version, as the writes record it (facts.services.writing): a run (its id,
    no author), or a person correcting in the panel (no run, the staff principal as author).
    The panel shows them as written: a file names no one in another shape."""
    if values["written_by"] == WrittenBy.PERSON:
        if values["run_id"] != "":
            raise ApiError(422, "run_id: a person's correction is made in no run")
        _principal("author", ("staff",), values["author"])
        return
    _run_id("run_id", values["run_id"])
    if values["author"] != "":
        raise ApiError(422, f"author: a version written by {values['written_by']} names none")


def _fact(values: Values) -> None:
    if not 1 <= values["id"] <= _MAX_FACT_PK:
        raise ApiError(422, f"id must be the number of a fact id like {FACT_ID_PREFIX}123")
    values["scope"] = _scope(values["scope"])
    _fact_fields(values)
    values["search_text"] = search.fold(values["text"])  # derived, as the writes derive it


def _fact_version(values: Values) -> None:
    _fact_fields(values)
    if values["key"] is not None:
        values["key"] = validation.key(values["key"])


def _fact_quota(values: Values) -> None:
    values["scope"] = _scope(values["scope"])
    if not 0 <= values["shard"] < SHARDS:
        raise ApiError(422, f"shard is 0 to {SHARDS - 1}")
    _not_negative(values, "count")


# The shape of each kind of principal's id (memoryhub.principals).
_PRINCIPAL_SHAPES = {"api_key": "key_...", "run": "run_...", "staff": "user:<username>"}


def _principal(column: str, kinds: tuple[str, ...], value: str) -> None:
    if not any(is_principal_id(kind, value) for kind in kinds):
        shapes = ", ".join(f"{kind} {_PRINCIPAL_SHAPES[kind]}" for kind in kinds)
        raise ApiError(422, f"{column} {value!r} is no id of a principal ({shapes})")


def _run_id(column: str, value: str | None) -> None:
    if value is not None and not ids.is_well_formed(value, "run"):
        raise ApiError(422, f"{column} {value!r} is no run id like run_...")


def _change_source(values: Values, kinds: tuple[str, ...]) -> None:
    """Who made a file's latest change or a revision, as the writes record them
    (filememory.services.writes.Actor): an API key, a run or staff, and for a model's tool
    call its run and call id."""
    _principal("principal_id", kinds, values["principal_id"])
    _run_id("run_id", values["run_id"])
    call = values["tool_call_id"]
    if call is not None and not 1 <= len(call) <= MAX_TOOL_CALL_ID:
        raise ApiError(422, f"tool_call_id is 1-{MAX_TOOL_CALL_ID} characters")


def _file(values: Values) -> None:
    values["path"] = clean_path(values["path"])
    values["size"] = content_size(values["content"])  # derived: the content's UTF-8 bytes
    _change_source(values, REVISION_AUTHORS)  # a file's row names the principal alone
    _at_least_one(values, "version")


def _revision(values: Values) -> None:
    if not ids.is_well_formed(values["public_id"], "rev"):
        raise ApiError(422, "public_id must be an id like rev_...")
    values["path"] = clean_path(values["path"])
    if values["other_path"] is not None:
        values["other_path"] = clean_path(values["other_path"], "other_path")
    content = values["content"]
    values["size"] = 0 if content is None else content_size(content)
    if values["principal_type"] not in REVISION_AUTHORS:
        raise ApiError(422, f"principal_type is one of: {', '.join(REVISION_AUTHORS)}")
    _change_source(values, (values["principal_type"],))
    restored_from = values["restored_from"]
    if restored_from is not None and not ids.is_well_formed(restored_from, "rev"):
        raise ApiError(422, "restored_from must be a revision id like rev_...")
    _at_least_one(values, "version")


_RULES: dict[str, Callable[[Values], None]] = {
    "workspace": _workspace,
    "memory_provider": _memory_provider,
    "agent": _agent,
    "end_user": _end_user,
    "memory": _memory,
    "thread": _thread,
    "thread_mount": _thread_mount,
    "fact": _fact,
    "fact_version": _fact_version,
    "fact_quota": _fact_quota,
    "file": _file,
    "revision": _revision,
}
