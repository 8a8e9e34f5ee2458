"""Team, TeamMembership and ApiToken move here from knowledge, on their old tables.

State only: the tables `knowledge_team`, `knowledge_teammembership` and `knowledge_apitoken`
were created by knowledge 0001 and keep every row (the models set `db_table`). Nothing is
dropped or created; knowledge 0006 then forgets the models and points TeamAccess at
accounts.Team, still the same table. The content types are renamed so permissions given
on these models stay attached.
"""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

MOVED = ("team", "teammembership", "apitoken")


def _rename_content_types(apps, schema_editor, old: str, new: str) -> None:
    ContentType = apps.get_model("contenttypes", "ContentType")
    db = schema_editor.connection.alias
    for model in MOVED:
        # A fresh database has no row yet (post_migrate makes it); a half-done one may
        # already have the new row, which then wins.
        if not ContentType.objects.using(db).filter(app_label=new, model=model).exists():
            ContentType.objects.using(db).filter(app_label=old, model=model).update(app_label=new)


def forwards(apps, schema_editor) -> None:
    _rename_content_types(apps, schema_editor, "knowledge", "accounts")


def backwards(apps, schema_editor) -> None:
    _rename_content_types(apps, schema_editor, "accounts", "knowledge")


class Migration(migrations.Migration):
    initial = True

    dependencies = [
        ("contenttypes", "0002_remove_content_type_name"),
        ("knowledge", "0005_collection_invitations"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[],
            state_operations=[
                migrations.CreateModel(
                    name="Team",
                    fields=[
                        ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                        ("name", models.CharField(max_length=120, unique=True)),
                        ("slug", models.SlugField(max_length=120, unique=True)),
                        ("created_at", models.DateTimeField(auto_now_add=True)),
                        ("created_by", models.ForeignKey(null=True, on_delete=django.db.models.deletion.SET_NULL, related_name="+", to=settings.AUTH_USER_MODEL)),
                    ],
                    options={"db_table": "knowledge_team", "ordering": ["name"]},
                ),
                migrations.CreateModel(
                    name="TeamMembership",
                    fields=[
                        ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                        ("is_admin", models.BooleanField(default=False)),
                        ("created_at", models.DateTimeField(auto_now_add=True)),
                        ("team", models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="memberships", to="accounts.team")),
                        ("user", models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="team_memberships", to=settings.AUTH_USER_MODEL)),
                    ],
                    options={
                        "db_table": "knowledge_teammembership",
                        "constraints": [models.UniqueConstraint(fields=("team", "user"), name="unique_team_member")],
                    },
                ),
                migrations.CreateModel(
                    name="ApiToken",
                    fields=[
                        ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                        ("name", models.CharField(max_length=100)),
                        ("prefix", models.CharField(max_length=12)),
                        ("token_hash", models.CharField(max_length=64, unique=True)),
                        ("created_at", models.DateTimeField(auto_now_add=True)),
                        ("last_used_at", models.DateTimeField(blank=True, null=True)),
                        ("revoked_at", models.DateTimeField(blank=True, null=True)),
                        ("user", models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="api_tokens", to=settings.AUTH_USER_MODEL)),
                    ],
                    options={
                        "db_table": "knowledge_apitoken",
                        "ordering": ["-created_at"],
                        "indexes": [models.Index(condition=models.Q(("revoked_at__isnull", True)), fields=["token_hash"], name="live_token")],
                    },
                ),
            ],
        ),
        migrations.RunPython(forwards, backwards),
    ]
