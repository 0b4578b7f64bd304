"""The export format: its kinds in order, the columns a row carries, and its refusals."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from itertools import count
from typing import TextIO

from django.core.serializers.json import DjangoJSONEncoder
from django.db import models

from facts.models import Fact, FactQuota, FactVersion
from filememory.models import File, Revision
from memoryhub.conf import setting
from memoryhub.models import Agent, EndUser, Memory, MemoryProvider, Thread, Workspace
from threads.models import ThreadMount

FORMAT = "memoryhub-export"
VERSION = 1
BATCH = 500
# The shortest bound on a line: the longest row of an export is one holding a file's content
# (64 KiB by default), which JSON escapes to at most 6 characters a byte (\u0001), about
# 400 KiB; facts, guides and records' texts are smaller.
MIN_LINE_CHARS = 4 * 1024 * 1024

# Import order: a row's references come before it (the foreign keys are also deferred).
MODELS: dict[str, type[models.Model]] = {
    "workspace": Workspace,
    "memory_provider": MemoryProvider,
    "agent": Agent,
    "end_user": EndUser,
    "memory": Memory,
    "thread": Thread,
    "thread_mount": ThreadMount,
    "fact": Fact,
    "fact_version": FactVersion,
    "fact_quota": FactQuota,
    "file": File,
    "revision": Revision,
}
# Every kind of line between the header and the manifest, in the order an export writes
# them: records (read from mem0, never written back) come last.
KINDS = (*MODELS, "record")
# Never leaves the database: a provider is exported without its credential.
SECRET_FIELDS: dict[type[models.Model], set[str]] = {MemoryProvider: {"credential_encrypted"}}
# Kept by the database's triggers for the in-process search index (facts.postings): an
# import's own writes set them anew.
DERIVED_FIELDS: dict[type[models.Model], set[str]] = {
    Fact: {"change_shard", "change_no"},
    FactQuota: {"changes"},
}


class Encoder(DjangoJSONEncoder):
    """Times to the microsecond (Django's encoder keeps milliseconds only)."""

    def default(self, o: object) -> object:
        if isinstance(o, datetime):
            return o.isoformat()
        return super().default(o)


class Refused(Exception):
    """The file is refused whole, before anything is written; the message says where
    (``line N: ...``) and why."""


class DamagedFile(Refused):
    """The file is not a whole export of a format this version reads."""


def fields_of(model: type[models.Model]) -> list[models.Field]:
    """What a row carries: not secrets, not what the database generates (search vectors,
    change stamps)."""
    left_out = SECRET_FIELDS.get(model, set()) | DERIVED_FIELDS.get(model, set())
    fields = model._meta.concrete_fields
    return [f for f in fields if f.attname not in left_out and not getattr(f, "generated", False)]


def max_line_chars() -> int:
    """The longest line an import reads: 4 MiB, or more where the installation lets files
    be larger (8 characters per byte of ``memory.max_file_bytes``: the escaped content and
    the row's other columns)."""
    return max(MIN_LINE_CHARS, 8 * setting("memory.max_file_bytes"))


def read_lines(stream: TextIO) -> Iterator[str]:
    """The file's lines, each read no further than :func:`max_line_chars`: a longer one is
    refused with its number before it fills memory (a line of gigabytes would otherwise be
    read whole before any rule could look at it)."""
    limit = max_line_chars()
    for number in count(1):
        text = stream.readline(limit + 1)
        if not text:
            return
        if len(text) > limit:
            raise Refused(
                f"line {number}: longer than {limit} characters, which no row of an export is"
            )
        yield text
