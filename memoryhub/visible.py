"""Invisible characters: names people read (folders, end-user ids) must not hold them."""

from __future__ import annotations

import re
import unicodedata

# Unicode's Default_Ignorable_Code_Point set (4,174 characters). The Hangul fillers among
# them are letters by category, so ``\w`` lets ``users`` + U+3164 pass for ``users``.
INVISIBLE_RE = re.compile(
    "[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e"
    "\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff0-\ufff8\U0001bca0-\U0001bca3"
    "\U0001d173-\U0001d17a\U000e0000-\U000e0fff]"
)


def invisible_in(text: str) -> str | None:
    """A description of the first invisible character in ``text``, or None."""
    found = INVISIBLE_RE.search(text)
    if found is None:
        return None
    char = found.group()
    return f"U+{ord(char):04X} {unicodedata.name(char, 'unassigned')}"
