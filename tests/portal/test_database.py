from __future__ import annotations

import os

import pytest
from django.db import connection


@pytest.mark.django_db
def test_the_suite_runs_on_the_database_that_portal_database_url_names():
    url = os.environ.get("PORTAL_DATABASE_URL", "")
    expected = "postgresql" if url.startswith(("postgres://", "postgresql://")) else "sqlite"
    assert connection.vendor == expected
    with connection.cursor() as cursor:
        if expected == "postgresql":
            cursor.execute("SELECT version()")
            assert "PostgreSQL" in cursor.fetchone()[0]
        else:
            cursor.execute("SELECT sqlite_version()")
            assert cursor.fetchone()[0]
