"""New rows of several models in one prepared statement: one round trip, planned once per
connection, instead of an ORM ``save()`` each.

For the hottest writes (a fact, its version and its audit event): each ``save()`` costs a
round trip and the ORM's building of its SQL, and one busy agent's writes are bound by that
CPU. The values are the fields' own (``pre_save`` and ``get_db_prep_save``, as ``save()``
takes them), so the rows are those ``save(force_insert=True)`` would write, in order.
"""

from __future__ import annotations

from functools import cache

from django.db import connection
from django.db.models import Field, Model

from memoryhub import prepared

_INSERT = "i{n} AS (INSERT INTO {table} ({columns}) VALUES ({values}) RETURNING {key})"


def insert(*objects: Model) -> None:
    """Insert ``objects`` (new, unsaved) in this order; an auto primary key left unset is
    set from the database. Database errors are Django's (an ``IntegrityError`` names its
    constraint in ``__cause__.diag``).

    Refused before anything is written: a related object without its key (it would only
    come back from this statement: ``ValueError``, as ``save()`` refuses it), a value that
    is an expression (``F()``, ``Now()``, a ``db_default`` left to the database:
    ``TypeError``), and proxy or multi-table models (``TypeError``)."""
    for obj in objects:
        # save()'s own check; private to Django, so django-stubs does not declare it.
        obj._prepare_related_fields_for_save(operation_name="rows.insert")  # type: ignore[attr-defined]
    shapes = tuple((type(obj), obj.pk is None) for obj in objects)
    sql, fields = _statement(shapes)
    params = [
        field.get_db_prep_save(_value(obj, field), connection)
        for obj, own in zip(objects, fields, strict=True)
        for field in own
    ]
    keys = prepared.fetch_one(sql, params)
    assert keys is not None  # the statement's SELECT always returns one row
    for obj, key in zip(objects, keys, strict=True):
        if obj.pk is None:
            obj.pk = key
        obj._state.adding = False
        obj._state.db = connection.alias


def _value(obj: Model, field: Field) -> object:
    value = field.pre_save(obj, add=True)
    if hasattr(value, "resolve_expression"):
        name = f"{type(obj).__name__}.{field.name}"
        raise TypeError(f"rows.insert writes values, not expressions ({name}); use save()")
    return value


def _column(field: Field | None) -> str:
    # A concrete field always has a column (only a many-to-many relation has none).
    assert field is not None and field.column is not None
    return field.column


@cache
def _statement(shapes: tuple[tuple[type[Model], bool], ...]) -> tuple[str, list[list[Field]]]:
    quote = connection.ops.quote_name
    parts, fields = [], []
    for n, (model, auto_key) in enumerate(shapes):
        meta = model._meta
        if meta.proxy or meta.parents:  # their rows span tables this statement does not
            raise TypeError(f"rows.insert takes a concrete model without parents: {model}")
        own = [
            f
            for f in meta.local_concrete_fields
            if not f.generated and not (auto_key and f.primary_key)
        ]
        table, columns = quote(meta.db_table), ", ".join(quote(_column(f)) for f in own)
        values, key = ", ".join(["%s"] * len(own)), quote(_column(meta.pk))
        parts.append(_INSERT.format(n=n, table=table, columns=columns, values=values, key=key))
        fields.append(own)
    keys = ", ".join(f"(SELECT * FROM i{n})" for n in range(len(shapes)))  # noqa: S608
    return f"WITH {', '.join(parts)} SELECT {keys}", fields
