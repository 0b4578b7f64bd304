from django.apps import AppConfig


class ThreadsConfig(AppConfig):
    name = "threads"
    verbose_name = "Threads and runs"

    def ready(self) -> None:
        from memoryhub.extensions import register_end_user_eraser
        from threads.models import ThreadMount

        # Erasing a person archives their threads; archived threads hold no mounts.
        register_end_user_eraser(
            lambda principal, end_user: ThreadMount.objects.filter(
                thread__end_user=end_user
            ).delete()
        )
