from __future__ import annotations

import pytest
from django.urls import reverse

from accounts.services import team_create, team_member_add, team_member_remove
from knowledge import selectors, services
from knowledge.models import Collection, Membership, Role

pytestmark = pytest.mark.django_db


def _login(client, user, password):
    assert client.login(username=user.username, password=password)
    return client


def test_creator_becomes_owner(client, alice, password):
    _login(client, alice, password)
    response = client.post(reverse("knowledge:collection_create"), {"name": "RAG papers"})
    collection = Collection.objects.get(name="RAG papers")
    assert response.status_code == 302
    assert Membership.objects.get(collection=collection, user=alice).role == Role.OWNER


def test_my_collections_lists_only_mine(client, collection, charlie, password):
    services.collection_create(name="Charlie's own", user=charlie)
    _login(client, charlie, password)
    body = client.get(reverse("knowledge:collection_list")).content.decode()
    assert "Charlie&#x27;s own" in body
    assert collection.name not in body


@pytest.mark.parametrize(
    "name, method, kwargs",
    [
        ("knowledge:collection_detail", "get", {}),
        ("knowledge:member_set", "post", {}),
        ("knowledge:member_remove", "post", {"user_id": 1}),
        ("knowledge:team_access_set", "post", {}),
    ],
)
def test_charlie_gets_404_on_every_collection_url(client, collection, charlie, password, name, method, kwargs):
    _login(client, charlie, password)
    response = getattr(client, method)(reverse(name, kwargs={"slug": collection.slug, **kwargs}))
    assert response.status_code == 404


def test_anonymous_is_sent_to_login(client, collection):
    response = client.get(reverse("knowledge:collection_detail", kwargs={"slug": collection.slug}))
    assert response.status_code == 302
    assert reverse("login") in response["Location"]


def test_a_viewer_cannot_manage_members(client, collection, bob, charlie, password):
    _login(client, bob, password)
    response = client.post(
        reverse("knowledge:member_set", kwargs={"slug": collection.slug}),
        {"username": "charlie", "role": "editor"},
    )
    assert response.status_code == 403
    assert not Membership.objects.filter(collection=collection, user=charlie).exists()


def test_owner_adds_and_changes_a_member(client, collection, alice, charlie, password):
    _login(client, alice, password)
    url = reverse("knowledge:member_set", kwargs={"slug": collection.slug})
    client.post(url, {"username": "charlie", "role": "reviewer"})
    assert Membership.objects.get(collection=collection, user=charlie).role == Role.REVIEWER
    client.post(url, {"username": "charlie", "role": "editor"})
    assert Membership.objects.get(collection=collection, user=charlie).role == Role.EDITOR


def test_the_last_owner_cannot_be_removed_or_demoted(client, collection, alice, password):
    _login(client, alice, password)
    response = client.post(
        reverse("knowledge:member_remove", kwargs={"slug": collection.slug, "user_id": alice.pk}), follow=True
    )
    assert "last owner cannot be removed" in response.content.decode()
    client.post(
        reverse("knowledge:member_set", kwargs={"slug": collection.slug}), {"username": "alice", "role": "viewer"}
    )
    assert Membership.objects.get(collection=collection, user=alice).role == Role.OWNER


def test_a_second_owner_makes_removing_the_first_possible(collection, alice, bob):
    services.membership_set(collection=collection, user=bob, role=Role.OWNER)
    services.membership_remove(collection=collection, user=alice)
    assert selectors.collection_role(user=alice, collection=collection) is None


def test_team_members_get_the_team_role_and_lose_it_on_leaving(collection, alice, charlie):
    team = team_create(name="IR group", user=alice)
    services.team_access_set(collection=collection, team=team, role=Role.EDITOR)
    assert selectors.collection_role(user=charlie, collection=collection) is None

    team_member_add(team=team, user=charlie)
    assert selectors.collection_role(user=charlie, collection=collection) == Role.EDITOR
    assert collection in selectors.collection_list(user=charlie)

    team_member_remove(team=team, user=charlie)
    assert selectors.collection_role(user=charlie, collection=collection) is None
    assert collection not in selectors.collection_list(user=charlie)


def test_effective_role_is_the_highest_of_own_and_team_roles(collection, alice, bob):
    team = team_create(name="Reviewers", user=alice)
    team_member_add(team=team, user=bob)
    services.team_access_set(collection=collection, team=team, role=Role.REVIEWER)
    assert selectors.collection_role(user=bob, collection=collection) == Role.REVIEWER  # team beats own viewer
    services.membership_set(collection=collection, user=bob, role=Role.EDITOR)
    assert selectors.collection_role(user=bob, collection=collection) == Role.EDITOR  # own beats team


def _messages(response) -> list[str]:
    return [str(m) for m in response.context["messages"]]


def test_a_collection_named_like_a_route_word_gets_a_slug_that_opens(client, alice, password):
    _login(client, alice, password)
    response = client.post(reverse("knowledge:collection_create"), {"name": "New"}, follow=True)
    collection = Collection.objects.get(name="New")
    assert collection.slug != "new"
    assert response.status_code == 200
    assert response.context["collection"] == collection
    # The create form is still the create form.
    assert "collection" not in client.get(reverse("knowledge:collection_create")).context


def test_the_team_choice_lists_only_teams_the_owner_belongs_to(client, collection, alice, charlie, password):
    team_create(name="Secret lab", user=charlie)
    team_create(name="Alice group", user=alice)
    _login(client, alice, password)
    body = client.get(reverse("knowledge:collection_detail", kwargs={"slug": collection.slug})).content.decode()
    assert "Alice group" in body
    assert "Secret lab" not in body


def test_granting_a_role_to_a_team_the_owner_is_not_in_is_refused(client, collection, alice, charlie, password):
    from knowledge.models import TeamAccess

    foreign = team_create(name="Secret lab", user=charlie)
    _login(client, alice, password)
    client.post(
        reverse("knowledge:team_access_set", kwargs={"slug": collection.slug}),
        {"team": foreign.slug, "role": "editor"},
    )
    assert not TeamAccess.objects.filter(team=foreign).exists()
    assert collection not in selectors.collection_list(user=charlie)


@pytest.mark.parametrize("where", ["team", "collection"])
def test_adding_an_unknown_username_answers_exactly_like_a_known_one(client, collection, alice, charlie, password, where):
    team = team_create(name="IR group", user=alice)
    _login(client, alice, password)
    if where == "team":
        url = reverse("accounts:team_detail", kwargs={"slug": team.slug})
        form = {}
    else:
        url = reverse("knowledge:member_set", kwargs={"slug": collection.slug})
        form = {"role": "viewer"}
    known = client.post(url, {**form, "username": "charlie"}, follow=True)
    unknown = client.post(url, {**form, "username": "nobody42"}, follow=True)
    assert known.status_code == unknown.status_code == 200
    assert [m.replace("charlie", "X") for m in _messages(known)] == [
        m.replace("nobody42", "X") for m in _messages(unknown)
    ]
