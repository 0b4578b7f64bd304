from django.apps import AppConfig


class FactsConfig(AppConfig):
    name = "facts"

    def ready(self) -> None:
        from facts.services.cleanup import end_user_fact_leftovers, erase_end_user_facts
        from memoryhub.extensions import register_end_user_eraser, register_end_user_leftovers

        register_end_user_eraser(erase_end_user_facts)
        register_end_user_leftovers(end_user_fact_leftovers)
