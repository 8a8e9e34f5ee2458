"""Moving Team, TeamMembership and ApiToken from knowledge to accounts keeps every row.

A database is taken back to the state before the move (knowledge 0005, no accounts app),
filled through the historical models, then migrated forward. Runs on whichever database
PORTAL_DATABASE_URL names: PostgreSQL in CI, SQLite on a laptop.
"""

from __future__ import annotations

import pytest
from django.contrib.contenttypes.models import ContentType
from django.core.management import call_command
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

BEFORE = [("knowledge", "0005_collection_invitations"), ("accounts", None)]
MOVED_TABLES = {"knowledge_team", "knowledge_teammembership", "knowledge_apitoken"}


def _latest() -> list[tuple[str, str]]:
    return MigrationExecutor(connection).loader.graph.leaf_nodes()


def _foreign_key_targets(table: str) -> dict[str, tuple[str, str]]:
    with connection.cursor() as cursor:
        constraints = connection.introspection.get_constraints(cursor, table)
    return {c["columns"][0]: c["foreign_key"] for c in constraints.values() if c["foreign_key"]}


@pytest.mark.django_db(transaction=True)
def test_rows_made_before_the_move_are_there_after_it():
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    try:
        old = MigrationExecutor(connection).loader.project_state([BEFORE[0]]).apps
        # The old code's models: these live in knowledge.
        assert {m._meta.label for m in old.get_models()} >= {"knowledge.Team", "knowledge.ApiToken"}
        user = old.get_model("auth", "User").objects.create(username="olduser", password="!")
        team = old.get_model("knowledge", "Team").objects.create(name="Old lab", slug="old-lab", created_by=user)
        old.get_model("knowledge", "TeamMembership").objects.create(team=team, user=user, is_admin=True)
        old.get_model("knowledge", "ApiToken").objects.create(
            user=user, name="laptop", prefix="gr_abcdefg", token_hash="a" * 64
        )
        collection = old.get_model("knowledge", "Collection").objects.create(name="Old papers", slug="old-papers")
        old.get_model("knowledge", "TeamAccess").objects.create(collection=collection, team=team, role="editor")
        # The test database made its content types with the new code; going back renamed them.
        content_type = ContentType.objects.get(app_label="knowledge", model="team")
    finally:
        MigrationExecutor(connection).migrate(_latest())

    from accounts.models import ApiToken, Team, TeamMembership
    from knowledge.models import TeamAccess

    moved = Team.objects.get(slug="old-lab")
    assert (moved.pk, moved.name, moved.created_by.username) == (team.pk, "Old lab", "olduser")
    assert TeamMembership.objects.get(team=moved).user.username == "olduser"
    assert ApiToken.objects.get(token_hash="a" * 64).name == "laptop"
    assert TeamAccess.objects.get(collection__slug="old-papers").team == moved
    # The same tables, and TeamAccess's foreign key still points at the team table.
    tables = set(connection.introspection.table_names())
    assert tables >= MOVED_TABLES
    assert not {t for t in tables if t.startswith("accounts_")}
    assert _foreign_key_targets("knowledge_teamaccess")["team_id"] == ("knowledge_team", "id")
    assert _foreign_key_targets("knowledge_teammembership")["team_id"] == ("knowledge_team", "id")
    # The content type row is renamed, not replaced: permissions on it stay attached.
    assert ContentType.objects.get(pk=content_type.pk).app_label == "accounts"


# transaction=True: SQLite refuses a schema editor inside the test's transaction.
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(("app", "name"), [("accounts", "0001_initial"), ("knowledge", "0006_teams_and_tokens_move_to_accounts")])
def test_the_move_runs_no_schema_statement(app, name, capsys):
    call_command("sqlmigrate", app, name)
    sql = capsys.readouterr().out.upper()
    for statement in ("CREATE", "DROP", "ALTER", "RENAME", "INSERT", "DELETE"):
        assert statement not in sql
