"""Fact paths: validation, ``users/{user}/`` resolution and whole-segment prefix filters.

A path is ``/``-separated segments of 1-100 letters, digits and ``. _ : @ - { }``, at most
300 characters, stored with one trailing slash. The root is ``""`` (also ``"/"``).

``users/<someone>/`` is that end user's folder. A run reaches only its own user's folder,
named ``users/{user}/`` (or by the user's own id); ``{user}`` anywhere else is 422.

Refused too (422): ``.`` and ``..`` segments (a path is a folder name, never resolved, so
``notes/../users/bob/`` would be a shared folder that reads as bob's); a segment holding an
invisible character (the Hangul filler U+3164 is a letter, so ``users`` + U+3164 + ``/bob/``
would render as ``users/bob/``); and a first segment that reads as ``users`` without being
it (``Users``, fullwidth, Cyrillic or small-capital look-alikes), which would make a shared
folder that looks exactly like a person's private one.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

from memoryhub.errors import ApiError
from memoryhub.reasons import Reason
from memoryhub.rules import Rule
from memoryhub.visible import invisible_in

MAX_PATH_CHARS = 300
USERS = "users"
USER_PLACEHOLDER = "{user}"
_SEGMENT_RE = re.compile(r"[\w.:@{}\-]{1,100}")
# Unicode's Default_Ignorable_Code_Point (DerivedCoreProperties.txt): characters that render
# as nothing. Of these, _SEGMENT_RE lets through the Hangul fillers U+115F, U+1160, U+3164
# and U+FFA0 (letters by category); the whole set is refused, whatever \w comes to match.
_SMALL_CAPITAL = "LATIN LETTER SMALL CAPITAL "


@dataclass(frozen=True)
class Viewer:
    """Whose folders a caller may name: a run's end user, or every user (staff)."""

    is_run: bool
    end_user_id: str | None = None
    end_user_external_id: str | None = None


@dataclass(frozen=True)
class Folder:
    """A resolved path: how it is stored, and the end user whose folder holds it."""

    path: str  # "" for the root, else segments with one trailing slash
    owner_id: str | None  # the end user's id inside users/<them>/, else None
    in_users: bool  # under users/ (the folder of all users' folders, or one of them)


def segments_of(raw: object, field: str = "path") -> list[str]:
    """The segments of a well-formed path (422 otherwise); [] for the root."""
    if not isinstance(raw, str):
        raise ApiError(422, f"{field} must be a string")
    if raw in ("", "/"):
        return []
    if len(raw) > MAX_PATH_CHARS:
        raise ApiError(422, f"{field} is at most {MAX_PATH_CHARS} characters")
    body = raw[:-1] if raw.endswith("/") else raw
    segments = body.split("/")
    for segment in segments:
        if not _SEGMENT_RE.fullmatch(segment):
            raise ApiError(
                422,
                f"{field}: each '/'-separated segment is 1-100 letters, digits and . _ : @ - {{ }}",
            )
        if segment in (".", ".."):
            raise ApiError(
                422, f"{field}: '.' and '..' segments are not allowed (paths are never resolved)"
            )
        invisible = invisible_in(segment)
        if invisible:
            raise ApiError(
                422,
                f"{field}: segment {segment!r} contains an invisible character ({invisible});"
                " folder names must be visible",
            )
    if looks_like_users(segments[0]):
        raise ApiError(
            422,
            f"{field}: {segments[0]!r} looks like the users/ folder (end users' private"
            " folders); name shared folders otherwise",
        )
    for index, segment in enumerate(segments):
        if USER_PLACEHOLDER in segment and (
            index != 1 or segment != USER_PLACEHOLDER or segments[0] != USERS
        ):
            raise ApiError(422, f"{field}: {{user}} is allowed only as users/{{user}}/")
    return segments


def looks_like_users(segment: str) -> bool:
    """Whether ``segment`` reads as ``users`` without being it.

    After NFKC and case folding (``Users``, fullwidth ``ｕｓｅｒｓ``), each character must be
    the letter of ``users`` or, by Unicode's confusables data (UTS #39), a look-alike of it
    (Cyrillic ``ѕ`` and ``е``, Greek ``υ``...) or its Latin small capital (``ᴜꜱᴇʀꜱ``, which
    the confusables data maps only in part; NFKC turns modifier small capitals into these).
    Accented letters are not look-alikes, so ``şirket/`` or ``üsers/`` stay ordinary folders.
    """
    if segment == USERS:
        return False
    folded = unicodedata.normalize("NFKC", segment).casefold()
    return len(folded) == len(USERS) and all(map(_looks_like, folded, USERS))


@lru_cache(maxsize=4096)
def _looks_like(char: str, letter: str) -> bool:
    if char == letter:
        return True
    name = unicodedata.name(char, "")
    if name.startswith(_SMALL_CAPITAL) and len(name) == len(_SMALL_CAPITAL) + 1:
        return name[-1].lower() == letter  # "LATIN LETTER SMALL CAPITAL R": ʀ reads as r
    # Imported on first use: the package loads about 1 MB of Unicode data.
    from confusable_homoglyphs import confusables

    found = confusables.is_confusable(char, preferred_aliases=[])
    # Capitals too: "UꓢERS" (Lisu ꓢ looks like S) reads as USERS, which folds to users.
    return bool(found) and any(h["c"] in (letter, letter.upper()) for h in found[0]["homoglyphs"])


def resolve(raw: object, viewer: Viewer, *, field: str = "path") -> Folder:
    """Resolve ``users/{user}/`` and check that the viewer may name this folder."""
    segments = segments_of(raw, field)
    if not segments or segments[0] != USERS:
        return Folder(_join(segments), None, False)
    if len(segments) == 1:
        return Folder(_join(segments), None, True)
    named = segments[1]
    if named == USER_PLACEHOLDER:
        if not viewer.is_run:
            raise ApiError(422, f"{field}: {{user}} needs a run with an end user")
        if viewer.end_user_id is None:
            raise ApiError(409, "this run has no end user", reason=Reason.NO_USER)
        segments[1] = viewer.end_user_external_id or ""
        return Folder(_join(segments), viewer.end_user_id, True)
    if viewer.is_run:
        if viewer.end_user_external_id != named:
            raise ApiError(403, "another end user's folder", reason=Reason.OTHER_USER)
        return Folder(_join(segments), viewer.end_user_id, True)
    return Folder(_join(segments), None, True)  # staff: the owner is looked up when needed


def resolve_for_write(raw: object, viewer: Viewer) -> Folder:
    folder = resolve(raw, viewer)
    if folder.in_users and folder.owner_id is None:
        raise ApiError(422, "users/ holds only end users' folders: write under users/{user}/")
    return folder


def normalize(raw: object, field: str = "path") -> str:
    """The canonical spelling of a path as given (``{user}`` unresolved)."""
    return _join(segments_of(raw, field))


def _join(segments: list[str]) -> str:
    return "".join(segment + "/" for segment in segments)


# A folder: "" or "/" (the root), else segments, each with a "/" after it but the last may go
# without. \w is Unicode's (letters and digits of any script), as the check reads it.
_SEGMENT = _SEGMENT_RE.pattern
PATH_PATTERN = f"^(?:/|(?:{_SEGMENT}/)*{_SEGMENT}/?)?$"
PATH_SCHEMA = {"type": "string", "maxLength": MAX_PATH_CHARS, "pattern": PATH_PATTERN}
PATH_HELP = (
    "A folder: '/'-separated segments of 1-100 letters, digits and . _ : @ - { }, at most "
    f"{MAX_PATH_CHARS} characters; '' or '/' is the root. users/{{user}}/ is the run's "
    "end user's folder. Matches whole segments and every sub-folder."
)


def checked(raw: object, field: str = "path") -> str:
    """A well-formed path, as given (resolving it for the caller is the services' part)."""
    segments_of(raw, field)  # 422 unless a str
    return str(raw)


PATH = Rule(checked, PATH_SCHEMA)
