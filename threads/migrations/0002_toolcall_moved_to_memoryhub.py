"""ToolCall leaves the threads app's state (memoryhub.0003 holds it now); the table
``threads_toolcall`` and its rows stay. Unapplied, it only returns the model to the state."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("threads", "0001_initial"),
        ("memoryhub", "0003_toolcall_moved_from_threads"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[migrations.DeleteModel(name="ToolCall")],
            database_operations=[],
        ),
    ]
