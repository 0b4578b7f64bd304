from django.apps import AppConfig


class PanelConfig(AppConfig):
    name = "panel"
    verbose_name = "Staff panel"
