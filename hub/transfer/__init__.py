"""export_memory / import_memory: a workspace, one agent or one memory as JSON Lines.

The file is a header line (format name and version, what was exported), one line per row
``{"kind": ..., "row": {...}}`` (every concrete field by its column name, ids kept), and a
manifest line last: counts per kind and the SHA-256 of every line before it. Rows are read
with ``iterator()`` and written one at a time. The import reads the file twice: first to
check it whole (:mod:`.checking`: its integrity, then every row by the API's own rules and
every reference inside the file's workspace), then to write it in one transaction
(:mod:`.importing`). A file is untrusted input: anyone can edit one and compute its
manifest again, so the checks, not the checksum, keep an import within what the API
allows.
"""

from hub.transfer.checking import Checked, check
from hub.transfer.export import Scope, export_lines, selection
from hub.transfer.format import (
    DERIVED_FIELDS,
    FORMAT,
    MODELS,
    SECRET_FIELDS,
    VERSION,
    DamagedFile,
    Refused,
    read_lines,
)
from hub.transfer.importing import import_lines

__all__ = [
    "DERIVED_FIELDS",
    "FORMAT",
    "MODELS",
    "SECRET_FIELDS",
    "VERSION",
    "Checked",
    "DamagedFile",
    "Refused",
    "Scope",
    "check",
    "export_lines",
    "import_lines",
    "read_lines",
    "selection",
]
