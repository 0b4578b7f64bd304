from django.apps import AppConfig


class ThreadsConfig(AppConfig):
    name = "threads"
    verbose_name = "Threads and runs"

    def ready(self) -> None:
        from memoryhub.extensions import register_end_user_eraser, register_memory_deleter

        register_end_user_eraser(_erase)
        register_memory_deleter(_unmount)


def _erase(principal, end_user) -> dict[str, int]:
    """Archived threads hold no mounts; tool-call answers may quote the person."""
    from threads.models import ThreadMount, ToolCall

    mounts, _ = ThreadMount.objects.filter(thread__end_user=end_user).delete()
    answers, _ = ToolCall.objects.filter(run__end_user=end_user).delete()
    return {"mounts_removed": mounts, "tool_call_answers": answers}


def _unmount(principal, memory) -> None:
    """The cascade takes the deleted memory's mounts: their threads get a new ETag."""
    from memoryhub.models import Thread
    from memoryhub.services.common import bump_all

    bump_all(Thread.objects.filter(mounts__memory_id=memory.id))
