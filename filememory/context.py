"""A file memory's context block for a run.

The first time a conversation sees the memory (and again after its history was
compacted) the block holds the guide, the ``always_load`` files in full (within
``memory.always_load_bytes``) and an index of the files. Afterwards it holds only what
changed since the conversation last saw it, including changes by other conversations and
by people. The block never exceeds the byte budget it is given and says what it left out;
it records what the conversation has now seen, which later tool writes are based on.
"""

from __future__ import annotations

from django.db import transaction

from filememory.models import File, SeenFile
from filememory.services import seen
from filememory.services.seen import Seen
from memoryhub.blocktext import escape_all, escape_text
from memoryhub.conf import setting
from memoryhub.models import Memory
from memoryhub.services.memories import effective_guide

FOOTER = "</memory>\n"
# Kept free for the closing notes (what was left out) and the footer.
NOTE_RESERVE = 400


def _size(text: str) -> int:
    return len(text.encode("utf-8"))


class _Block:
    """Text under a byte budget, with room kept for the notes and the footer."""

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self.parts: list[str] = []
        self.used = 0
        self.left_out: list[str] = []

    def room(self) -> int:
        return self.budget - NOTE_RESERVE - self.used

    def add(self, text: str, limit: int | None = None) -> bool:
        size = _size(text)
        if size > self.room() or (limit is not None and size > limit):
            return False
        self.parts.append(text)
        self.used += size
        return True

    def close(self) -> str:
        return "".join(self.parts) + self._note() + FOOTER

    def _note(self) -> str:
        """What was left out, as much of it by name as fits in the reserve."""
        if not self.left_out:
            return ""
        head = "Left out for space (read them with memory_file_view): "
        limit = NOTE_RESERVE - _size(FOOTER)
        items = [escape_text(item) for item in self.left_out]  # they name stored paths
        shown: list[str] = []
        for index, item in enumerate(items):
            rest = len(items) - index - 1
            tail = f", and {rest} more" if rest else ""
            if _size(head + ", ".join([*shown, item]) + tail + ".\n") > limit:
                break
            shown.append(item)
        rest = len(items) - len(shown)
        return head + ", ".join([*shown, f"{rest} more"] if rest else shown) + ".\n"


def _file_text(file: File) -> str:
    path, content = escape_all(file.path), escape_text(file.content)
    return f'<file path="{path}" version="{file.version}">\n{content}\n</file>\n'


def _header(memory: Memory, mount_name: str | None) -> str:
    name, memory_id = escape_all(mount_name or memory.name), escape_all(memory.id)
    return f'<memory name="{name}" id="{memory_id}" kind="file">\n'


def file_context_block(
    memory: Memory | str,
    *,
    thread_id: str,
    budget_bytes: int,
    full: bool,
    mount_name: str | None = None,
) -> str:
    """The block for this run of ``thread_id``; ``""`` when the memory is gone or nothing fits.

    ``full``: the conversation sees the memory for the first time or its history was
    compacted (a conversation that never had this memory's context gets it in full anyway).
    """
    memory_id = memory.id if isinstance(memory, Memory) else memory
    with transaction.atomic():
        current = _memory_of_thread(memory_id, thread_id)
        if current is None:
            return ""
        sighting = seen.sighting(thread_id, current)
        full = full or sighting is None
        block = _Block(budget_bytes)
        if not block.add(_header(current, mount_name)):
            return ""
        if full or sighting is None:  # (full already says so: this tells the type checker)
            _full(block, current, thread_id)
        else:
            _changes(block, current, thread_id, guide=sighting.memory_version != current.version)
        seen.sighted(thread_id, current, full=full)
        return block.close()


def _memory_of_thread(memory_id: str, thread_id: str) -> Memory | None:
    """The file memory, only when it is of the thread's workspace: a mount row (a forged
    import, say) must never bring another workspace's files into a run."""
    memories = Memory.objects.filter(pk=memory_id, kind=Memory.Kind.FILE)
    return memories.filter(workspace__threads=thread_id).first()


def _guide(block: _Block, memory: Memory) -> None:
    guide = effective_guide(memory)
    if guide and not block.add(f"Guide:\n{escape_text(guide)}\n"):
        block.left_out.append("the memory's guide")


def _full(block: _Block, memory: Memory, thread_id: str) -> None:
    seen.reset(thread_id, memory)
    _guide(block, memory)
    index = list(File.objects.filter(memory=memory).defer("content").order_by("path"))
    shown = _always_loaded(block, memory)
    entries = {f.path: Seen(f.path, f.id, f.version, f.version) for f in index if f.id in shown}
    if index:
        block.add(f"Files ({len(index)}):\n")
    else:
        block.add("The memory has no files yet.\n")
    for position, file in enumerate(index):
        line = f"- {escape_text(file.path)} ({file.size} bytes, version {file.version})\n"
        if not block.add(line):
            block.left_out.append(f"{len(index) - position} more index entries")
            break
        entries.setdefault(file.path, Seen(file.path, file.id, file.version, None))
    seen.record(thread_id, memory, entries.values())


def _always_loaded(block: _Block, memory: Memory) -> set[int]:
    """Show the always_load files in full within memory.always_load_bytes; their ids."""
    if not memory.always_load:
        return set()
    files = {f.path: f for f in File.objects.filter(memory=memory, path__in=memory.always_load)}
    allowance = setting("memory.always_load_bytes")
    shown: set[int] = set()
    for path in memory.always_load:
        file = files.get(path)
        if file is None:
            continue
        text = _file_text(file)
        if block.add(text, limit=allowance):
            allowance -= _size(text)
            shown.add(file.id)
        else:
            block.left_out.append(path)
    return shown


def _changes(block: _Block, memory: Memory, thread_id: str, *, guide: bool) -> None:
    if guide:
        _guide(block, memory)
    known = seen.lookup_all(thread_id, memory)
    files = list(File.objects.filter(memory=memory).defer("content").order_by("path"))
    changed = [file for file in files if _changed(known.get(file.path), file)]
    deleted = sorted(set(known) - {file.path for file in files})
    if not changed and not deleted:
        block.add("No changes since this conversation last saw this memory.\n")
        return
    block.add("Changed since this conversation last saw this memory:\n")
    contents = dict(
        File.objects.filter(pk__in=[f.id for f in changed]).values_list("id", "content")
    )
    entries = []
    for file in changed:
        file.content = contents.get(file.id, "")
        if block.add(_file_text(file)):
            entries.append(Seen(file.path, file.id, file.version, file.version))
        else:
            block.left_out.append(f"{file.path} (version {file.version})")
    gone = [path for path in deleted if block.add(f"- {escape_text(path)} was deleted\n")]
    block.left_out += [f"the deletion of {path}" for path in deleted if path not in gone]
    seen.record(thread_id, memory, entries)
    seen.forget(thread_id, memory, gone)


def _changed(known: SeenFile | None, file: File) -> bool:
    return known is None or (known.file_id, known.known_version) != (file.id, file.version)
