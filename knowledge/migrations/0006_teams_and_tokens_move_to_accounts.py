"""Team, TeamMembership and ApiToken now belong to the accounts app (accounts 0001).

State only, so no table is dropped: the rows stay in `knowledge_team`,
`knowledge_teammembership` and `knowledge_apitoken`, which the accounts models name as
their `db_table`. TeamAccess.team keeps its database foreign key to `knowledge_team`;
only its target in Django's state changes to accounts.Team.
"""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0001_initial"),
        ("knowledge", "0005_collection_invitations"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[],
            state_operations=[
                migrations.AlterField(
                    model_name="teamaccess",
                    name="team",
                    field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="accesses", to="accounts.team"),
                ),
                migrations.DeleteModel(name="TeamMembership"),
                migrations.DeleteModel(name="ApiToken"),
                migrations.DeleteModel(name="Team"),
            ],
        ),
    ]
