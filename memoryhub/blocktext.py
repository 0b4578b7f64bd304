"""Stored text inside the tagged blocks of a model's memory context.

A run's context and the facts ``<memory>`` block are made of tagged blocks (the tags are
:data:`TAGS`). What agents and people stored (file contents and paths, guides, memory and
mount names, fact texts, records) goes inside them and must never open or close one, or a
file could add a block of its own to every later run. Every kind escapes through here:

- :func:`escape_text`, for text between tags: a ``<`` that starts one of the tags,
  opening or closing, becomes ``&lt;``. Nothing else changes, so code, markdown and
  ``a < b`` reach the model as written. This is the rule facts always had for ``<memory``,
  extended to every tag.
- :func:`escape_all`, for attribute values (so a value never leaves its quotes) and for
  text the model must read as data only (recalled records): HTML escaping of
  ``& < > " '``, and the look-alikes of ``<`` below.

"Starts one of the tags" is decided on the text as a model reads it, not as it is spelled:
after the ``<`` (or a look-alike: ``＜``, ``﹤``, ``‹``, ``〈``, ``❮`` ...), invisible
characters (Unicode's default ignorables, format characters, combining marks, controls) are
skipped anywhere, even inside the tag's name (``</me\\u00admory>``); what is left is read
in NFKC, case-folded, with the look-alikes of ``/`` and of the tags' letters as those
(``</ｍｅｍｏｒｙ>``, ``</mеmory>`` with a Cyrillic е); spaces may stand before and after the
``/`` (``< /FILE``). Such a look-alike is replaced by ``&lt;`` as ``<`` is.

A block format that gains a tag adds it to :data:`TAGS`.
"""

from __future__ import annotations

import re
import unicodedata
from html import escape

from memoryhub.visible import INVISIBLE_RE

# Every tag name the context blocks use; a prefix also covers longer names (<memory-x).
TAGS = ("memory", "file", "record", "recalled_records")
ESCAPED = "&lt;"
# "<" and what a model may read as it: the two whose NFKC is "<", and angle brackets.
_LOOK_ALIKES_OF_LT = "\uff1c\ufe64\u2039\u2329\u3008\u27e8\u276c\u276e\u2770\u29fc\u02c2\u1438"
_ANY_LT = re.compile(f"[<{_LOOK_ALIKES_OF_LT}]")
_LOOK_ALIKE_LT = re.compile(f"[{_LOOK_ALIKES_OF_LT}]")
# Look-alikes of "/" and of the tags' letters that NFKC leaves as they are (Cyrillic,
# Greek and small capital letters, after case folding), read as those.
_AS_READ = str.maketrans(
    {
        **dict.fromkeys("\u2044\u2215\u29f8\u2571\u27cb", "/"),
        **dict.fromkeys("\u0430\u1d00", "a"),
        **dict.fromkeys("\u0441\u1d04", "c"),
        **dict.fromkeys("\u0501\u1d05", "d"),
        **dict.fromkeys("\u0435\u03b5\u1d07", "e"),
        "\ua730": "f",
        **dict.fromkeys("\u0456\u03b9\u0131\u026a", "i"),
        **dict.fromkeys("\u04cf\u029f", "l"),
        **dict.fromkeys("\u043c\u03bc\u1d0d", "m"),
        **dict.fromkeys("\u043e\u03bf\u1d0f", "o"),
        "\u0280": "r",
        **dict.fromkeys("\u0455\ua731", "s"),
        **dict.fromkeys("\u0443\u03c5\u028f", "y"),
    }
)
_TAG_AHEAD = re.compile(rf" ?/? ?(?:{'|'.join(TAGS)})")
_TAG_CHARACTERS = frozenset("/_" + "".join(TAGS))
_LONGEST_TAG = 1 + max(len(tag) for tag in TAGS)  # "/" and the name
_UNSEEN_CATEGORIES = frozenset({"Cf", "Mn", "Me"})


def escape_text(value: str) -> str:
    """``value`` with every ``<`` (or look-alike) that would open or close a block tag as
    ``&lt;``."""
    return _escape_tag_starts(_ANY_LT, value)


def escape_all(value: str) -> str:
    """``value`` with no markup left: ``& < > " '`` as HTML entities, and a look-alike of
    ``<`` that starts a block tag as ``&lt;``."""
    return _escape_tag_starts(_LOOK_ALIKE_LT, escape(value, quote=True))


def _escape_tag_starts(opener: re.Pattern[str], value: str) -> str:
    def escaped(found: re.Match[str]) -> str:
        return ESCAPED if _starts_tag(value, found.end()) else found.group()

    return opener.sub(escaped, value)


def _starts_tag(text: str, start: int) -> bool:
    """Whether ``text`` from ``start`` reads as a tag's name, ``/`` and spaces before it.

    Reading stops at the first character no tag holds, so each character is read for at
    most one ``<`` (every ``<`` stops the reading of the one before): linear in ``text``.
    """
    read = ""
    for index in range(start, len(text)):
        for char in _as_read(text[index]):
            if char.isspace():
                if not read.endswith(" "):
                    read += " "
                continue
            if char not in _TAG_CHARACTERS:
                return _TAG_AHEAD.match(read) is not None
            read += char
            if len(read.replace(" ", "")) >= _LONGEST_TAG:
                return _TAG_AHEAD.match(read) is not None
    return _TAG_AHEAD.match(read) is not None


def _as_read(char: str) -> str:
    """What a model reads for ``char``: nothing for an invisible one, else its NFKC,
    case-folded, with the look-alikes above replaced."""
    if _unseen(char):
        return ""
    read = unicodedata.normalize("NFKC", char).casefold().translate(_AS_READ)
    return "".join(c for c in read if not _unseen(c))  # "İ" folds to "i" and a dot above


def _unseen(char: str) -> bool:
    category = unicodedata.category(char)
    if category in _UNSEEN_CATEGORIES or INVISIBLE_RE.match(char):
        return True
    return category == "Cc" and not char.isspace()
