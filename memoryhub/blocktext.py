"""Stored text inside the tagged blocks of a model's memory context.

A run's context and the facts ``<memory>`` block are made of tagged blocks (the tags are
:data:`TAGS`). What agents and people stored (file contents and paths, guides, memory and
mount names, fact texts, records) goes inside them and must never open or close one, or a
file could add a block of its own to every later run. Every kind escapes through here:

- :func:`escape_text`, for text between tags: a ``<`` that starts one of the tags,
  opening or closing, in any case and with spaces or invisible characters in between
  (``</memory``, ``< /FILE``, ``<record``), becomes ``&lt;``. Nothing else changes, so code,
  markdown and ``a < b`` reach the model as written. This is the rule facts always had
  for ``<memory``, extended to every tag.
- :func:`escape_all`, for attribute values (so a value never leaves its quotes) and for
  text the model must read as data only (recalled records): HTML escaping of
  ``& < > " '``.

A block format that gains a tag adds it to :data:`TAGS`.
"""

from __future__ import annotations

import re
from html import escape

# Every tag name the context blocks use; a prefix also covers longer names (<memory-x).
TAGS = ("memory", "file", "record", "recalled_records")
# Whitespace and the invisible format characters a model would read through.
_GAP = r"[\s\u00ad\u200b-\u200f\u2060-\u2064\ufeff]*"
_TAG_START = re.compile(
    rf"<(?={_GAP}/?{_GAP}(?:{'|'.join(TAGS)}))",
    re.IGNORECASE,
)


def escape_text(value: str) -> str:
    """``value`` with every ``<`` that would open or close a block tag as ``&lt;``."""
    return _TAG_START.sub("&lt;", value)


def escape_all(value: str) -> str:
    """``value`` with no markup left: ``& < > " '`` as HTML entities."""
    return escape(value, quote=True)
