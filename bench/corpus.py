"""Real text for the search benchmark: sentences nobody here wrote, read from installed packages.

* English: the docstrings of the Python packages installed beside memoryhub (its virtualenv's
  site-packages: Django, psycopg, DRF, celery, ... and whatever else is there), split into
  sentences: technical documentation, each package under its own (mostly BSD, MIT or Apache)
  license.
* Turkish: the Turkish translations (``locale/tr/LC_MESSAGES/*.po``, the ``msgstr`` lines)
  shipped in the same packages, Django's chiefly (BSD-3-Clause): messages, help texts and
  labels written by Django's Turkish translators.

Sentences are deduplicated and returned in a seeded order, so a run is reproducible on one
set of installed packages.
"""

from __future__ import annotations

import random
import re
import sysconfig
from pathlib import Path

_DOCSTRING = re.compile(r'"""(.*?)"""', re.DOTALL)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n\s*\n")
_MSGSTR = re.compile(r'^msgstr(?:\[\d\])? "(.*)"$')
_CODE_LIKE = re.compile(r"[{}<>=`|\\]|::|>>>|\w\(|\w_\w|\.\w")
_WORD = re.compile(r"[^\W\d_]+")
MIN_WORDS, MAX_WORDS = 5, 40


def site_packages() -> Path:
    return Path(sysconfig.get_paths()["purelib"])


def _prose(text: str) -> str | None:
    """One sentence of prose, or None for code, tables, parameter lists and fragments."""
    sentence = " ".join(text.split())
    words = sentence.split()
    if not MIN_WORDS <= len(words) <= MAX_WORDS or _CODE_LIKE.search(sentence):
        return None
    letters = sum(len(w) for w in _WORD.findall(sentence))
    return sentence if letters >= 0.75 * len(sentence.replace(" ", "")) else None


def _messages(po: str) -> list[str]:
    """The ``msgstr`` texts of a .po file, their continuation lines joined."""
    messages: list[str] = []
    current: list[str] | None = None
    for line in po.splitlines():
        match = _MSGSTR.match(line)
        if match:
            current = [match.group(1)]
            messages.append("")
        elif current is not None and line.startswith('"') and line.endswith('"'):
            current.append(line[1:-1])
        else:
            current = None
        if current is not None:
            messages[-1] = "".join(current)
    return messages


def english_sentences(limit: int, seed: int = 11) -> list[str]:
    """Up to ``limit`` distinct sentences of the installed packages' docstrings."""
    found: dict[str, None] = {}
    for path in sorted(site_packages().rglob("*.py")):
        try:
            source = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        for block in _DOCSTRING.findall(source):
            for piece in _SENTENCE_END.split(block):
                sentence = _prose(piece)
                if sentence:
                    found[sentence] = None
        if len(found) >= 3 * limit:  # enough to choose from across many packages
            break
    sentences = list(found)
    random.Random(seed).shuffle(sentences)
    return sentences[:limit]


def turkish_sentences(seed: int = 11) -> list[str]:
    """Every distinct Turkish message of at least three words in the installed packages."""
    found: dict[str, None] = {}
    for path in sorted(site_packages().rglob("locale/tr/LC_MESSAGES/*.po")):
        for message in _messages(path.read_text(encoding="utf-8", errors="replace")):
            text = re.sub(r"%\(\w+\)\w|%\w|\{\w*\}|<[^>]*>|\\n", " ", message)
            text = " ".join(text.replace('\\"', '"').split())
            if len(text.split()) >= 3 and "Project-Id-Version" not in text:
                found[text] = None
    sentences = list(found)
    random.Random(seed).shuffle(sentences)
    return sentences
