from django.apps import AppConfig


class ThreadsConfig(AppConfig):
    name = "threads"
    verbose_name = "Threads and runs"

    def ready(self) -> None:
        from memoryhub.extensions import register_end_user_eraser

        register_end_user_eraser(_erase)


def _erase(principal, end_user) -> None:
    """Archived threads hold no mounts; tool-call answers may quote the person."""
    from threads.models import ThreadMount, ToolCall

    ThreadMount.objects.filter(thread__end_user=end_user).delete()
    ToolCall.objects.filter(run__end_user=end_user).delete()
