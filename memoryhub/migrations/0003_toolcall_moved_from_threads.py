"""ToolCall moves from the threads app to the kernel, in state only.

The table ``threads_toolcall`` and its rows stay where they are: threads.0001 created it,
threads.0002 drops the model from the threads app's state after this one has taken it.
Unapplied, this changes nothing in the database either; the table goes only with
threads.0001 (``migrate threads zero``), as before the move.
"""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("memoryhub", "0002_audit_object_id_for_long_paths"),
        ("threads", "0001_initial"),  # the table exists
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="ToolCall",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True,
                                primary_key=True,
                                serialize=False,
                                verbose_name="ID",
                            ),
                        ),
                        ("call_id", models.CharField(max_length=200)),
                        ("name", models.CharField(max_length=100)),
                        ("arguments_digest", models.CharField(max_length=64)),
                        (
                            "status",
                            models.CharField(
                                choices=[("started", "Started"), ("done", "Done")], max_length=8
                            ),
                        ),
                        ("content", models.TextField(blank=True, default="")),
                        ("created_at", models.DateTimeField(auto_now_add=True)),
                        ("finished_at", models.DateTimeField(blank=True, null=True)),
                        (
                            "run",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="tool_calls",
                                to="memoryhub.run",
                            ),
                        ),
                        (
                            "workspace",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                to="memoryhub.workspace",
                            ),
                        ),
                    ],
                    options={
                        "db_table": "threads_toolcall",
                        "constraints": [
                            models.UniqueConstraint(
                                fields=("run", "call_id"), name="tool_call_unique"
                            )
                        ],
                    },
                ),
            ],
            database_operations=[],
        ),
    ]
