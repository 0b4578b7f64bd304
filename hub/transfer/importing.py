"""Writing a checked export, in one transaction.

Rows whose id exists are left as they are, and so are the agents, memories and threads
that exist with what they hold (:data:`.checking.CONTAINERS`). Each row is written as the
rules made it (:mod:`.rows`), and a new record memory claims its namespace as creating one
does, under the backend's lock. Anything the database still refuses (a row another
process wrote since the check) rolls the whole import back.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator
from contextlib import contextmanager

from django.core.management.color import no_style
from django.db import DataError, IntegrityError, connection, models, transaction

from hub.transfer import rows
from hub.transfer.checking import CONTAINERS, Checked
from hub.transfer.format import BATCH, MODELS, DamagedFile, Refused
from memoryhub.errors import ApiError
from memoryhub.models import Memory, MemoryProvider
from records.services import namespaces


@contextmanager
def stored_times() -> Iterator[None]:
    """Keep the exported created_at/updated_at: auto_now fields would stamp the import time."""
    changed = []
    for model in MODELS.values():
        for field in model._meta.concrete_fields:
            if not isinstance(field, models.DateField | models.TimeField):  # (have auto_now)
                continue
            if field.auto_now or field.auto_now_add:
                changed.append((field, field.auto_now, field.auto_now_add))
                field.auto_now = field.auto_now_add = False
    try:
        yield
    finally:
        for field, auto_now, auto_now_add in changed:
            field.auto_now, field.auto_now_add = auto_now, auto_now_add


def import_lines(lines: Iterable[str], checked: Checked) -> dict[str, int]:
    """Write a file :func:`.checking.check` passed; answers how many rows of each kind
    were added. Records stay in mem0 (see docs/operations.md)."""
    before = {kind: model._default_manager.count() for kind, model in MODELS.items()}
    try:
        with transaction.atomic(), stored_times():
            writer = _Writer(checked)
            digest = hashlib.sha256()
            for number, text in enumerate(lines, start=1):
                item = _item(number, text)
                if item.get("kind") != "manifest":
                    digest.update(text.encode())
                writer.add(number, item)
            writer.flush()
            if digest.hexdigest() != checked.sha256:
                raise DamagedFile("the file changed since it was checked")
            _reset_sequences()
    except (IntegrityError, DataError) as error:
        reason = str(error).splitlines()[0] if str(error) else type(error).__name__
        raise Refused(f"the database refused a row ({reason})") from None
    return {kind: model._default_manager.count() - before[kind] for kind, model in MODELS.items()}


def _item(number: int, text: str) -> dict:
    try:
        item = json.loads(text)
    except ValueError:
        item = None
    if not isinstance(item, dict):
        raise DamagedFile(f"line {number}: the file changed since it was checked")
    return item


class _Writer:
    """Rows a batch at a time, each kind after the one before it."""

    def __init__(self, checked: Checked) -> None:
        self.checked = checked
        self.kind = ""
        self.batch: list[tuple[int, rows.Values]] = []

    def add(self, number: int, item: dict) -> None:
        kind = item["kind"]
        if kind not in MODELS:  # the header, records, the manifest
            return
        if kind != self.kind:
            self.flush()
            self.kind = kind
        try:
            values = rows.clean(kind, item.get("row"))
        except ApiError as error:
            raise DamagedFile(f"line {number}: the file changed since it was checked") from error
        container = CONTAINERS.get(kind)
        if container and values[container[1]] in self.checked.existing[container[0]]:
            return  # its agent, memory or thread is left as it is, with what it holds
        self.batch.append((number, values))
        if len(self.batch) >= BATCH:
            self.flush()

    def flush(self) -> None:
        batch, self.batch = self.batch, []
        if not batch:
            return
        model = MODELS[self.kind]
        there = set(
            model._default_manager.filter(pk__in=[values["id"] for _, values in batch]).values_list(
                "pk", flat=True
            )
        )
        new = [(number, values) for number, values in batch if values["id"] not in there]
        if model is Memory:
            for number, values in new:
                self._claim_namespace(number, values)
        model._default_manager.bulk_create([model(**values) for _, values in new])

    def _claim_namespace(self, number: int, values: rows.Values) -> None:
        """As creating a record memory does: the check and the INSERT are one step for
        every workspace on the backend (records.services.namespaces)."""
        if values["provider_id"] is None:
            return
        backend = self._backend(number, values)
        namespaces.lock(backend, values["namespace"])
        try:
            namespaces.refuse_taken(backend, [values["namespace"]])
        except ApiError as error:
            raise Refused(f"line {number}: memory {values['id']}: {error.message}") from None

    def _backend(self, number: int, values: rows.Values) -> str:
        """A new provider's backend is the file's (it may come later in the file); an
        existing one's is the one its row names now, never the file's word for it, locked
        as records.kind.prepare_create locks it."""
        provider_id = values["provider_id"]
        if provider_id not in self.checked.existing["memory_provider"]:
            return self.checked.new_backends[provider_id]
        provider = (
            MemoryProvider.objects.select_for_update()
            .filter(pk=provider_id, workspace_id=self.checked.workspace_id)
            .first()
        )
        if provider is None:
            raise Refused(f"line {number}: memory {values['id']}: its provider was deleted")
        return namespaces.key_of(provider)


def _reset_sequences() -> None:
    """Rows came with their ids: the next id a serial column hands out must be past them."""
    statements = connection.ops.sequence_reset_sql(no_style(), list(MODELS.values()))
    with connection.cursor() as cursor:
        for statement in statements:
            cursor.execute(statement)
