"""Collections and members over the API: CRUD, lists with pagination/filter/ordering, errors."""

from __future__ import annotations

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from accounts.services import team_create, team_member_add
from knowledge import services
from knowledge.models import Collection, Membership, Role

pytestmark = pytest.mark.django_db


@pytest.fixture
def api(alice) -> APIClient:
    client = APIClient()
    client.force_authenticate(alice)
    return client


def test_it_creates_a_collection_and_makes_the_caller_owner(api, alice):
    response = api.post(reverse("api:collection_list"), {"name": "Sparse retrieval", "description": "BM25"})
    assert response.status_code == 201
    body = response.json()
    assert body["slug"] == "sparse-retrieval"
    assert body["role"] == "owner"
    assert body["document_count"] == 0
    assert response["Location"] == body["url"]
    assert body["url"].endswith(reverse("api:collection_detail", kwargs={"slug": "sparse-retrieval"}))
    assert Membership.objects.get(collection__slug="sparse-retrieval", user=alice).role == Role.OWNER


def test_it_refuses_a_collection_without_a_name_with_field_errors(api):
    response = api.post(reverse("api:collection_list"), {"description": "no name"})
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == "invalid"
    assert "name" in error["detail"]


def test_it_lists_only_my_collections_with_my_role(api, alice, bob, collection):
    services.collection_create(name="Bob's own", user=bob)
    viewer_of = services.collection_create(name="Alpha", user=bob)
    services.membership_set(collection=viewer_of, user=alice, role=Role.VIEWER)
    body = api.get(reverse("api:collection_list")).json()
    assert body["count"] == 2
    assert [(c["name"], c["role"]) for c in body["results"]] == [
        ("Alpha", "viewer"),
        ("Retrieval papers", "owner"),
    ]


def test_it_paginates_filters_and_orders_collections(api, alice):
    for n in range(5):
        services.collection_create(name=f"Set {n}", user=alice)
    services.collection_create(name="Other", user=alice)
    page = api.get(reverse("api:collection_list"), {"q": "set", "ordering": "-name", "page_size": 2}).json()
    assert page["count"] == 5
    assert [c["name"] for c in page["results"]] == ["Set 4", "Set 3"]
    assert page["next"] and page["previous"] is None
    last = api.get(page["next"].replace("http://testserver", "")).json()
    assert [c["name"] for c in last["results"]] == ["Set 2", "Set 1"]


def test_it_rejects_an_unknown_ordering_with_400(api):
    response = api.get(reverse("api:collection_list"), {"ordering": "password"})
    assert response.status_code == 400
    assert "ordering" in response.json()["error"]["detail"]


def test_it_returns_404_for_a_page_past_the_end(api, collection):
    response = api.get(reverse("api:collection_list"), {"page": 9})
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"


def test_the_owner_renames_and_deletes_a_collection(api, collection):
    url = reverse("api:collection_detail", kwargs={"slug": collection.slug})
    response = api.patch(url, {"name": "Renamed"})
    assert response.status_code == 200
    assert response.json()["name"] == "Renamed"
    assert api.delete(url).status_code == 204
    assert not Collection.objects.filter(pk=collection.pk).exists()


def test_charlie_gets_404_for_a_collection_he_is_not_in(charlie, collection):
    client = APIClient()
    client.force_authenticate(charlie)
    url = reverse("api:collection_detail", kwargs={"slug": collection.slug})
    missing = reverse("api:collection_detail", kwargs={"slug": "no-such-collection"})
    # The same answer whether or not the collection exists: nothing is revealed.
    assert client.get(url).json() == client.get(missing).json()
    assert client.get(url).status_code == 404


def test_the_owner_adds_changes_and_removes_members(api, collection, charlie):
    members = reverse("api:member_list", kwargs={"slug": collection.slug})
    added = api.post(members, {"username": "charlie", "role": "reviewer"})
    assert added.status_code == 202
    assert added.json() == {**added.json(), "username": "charlie", "role": "reviewer"}
    assert Membership.objects.get(collection=collection, user=charlie).role == "reviewer"
    again = api.post(members, {"username": "charlie", "role": "editor"})
    assert again.status_code == 200
    detail = reverse("api:member_detail", kwargs={"slug": collection.slug, "username": "charlie"})
    assert api.patch(detail, {"role": "viewer"}).json()["role"] == "viewer"
    listed = api.get(members).json()
    assert [(m["username"], m["role"]) for m in listed["results"]] == [
        ("alice", "owner"),
        ("bob", "viewer"),
        ("charlie", "viewer"),
    ]
    assert api.delete(detail).status_code == 204
    assert not Membership.objects.filter(collection=collection, user=charlie).exists()


def test_adding_an_unknown_username_answers_as_adding_an_existing_one(api, collection, charlie):
    # Issue 15: the answer must not tell which usernames exist.
    members = reverse("api:member_list", kwargs={"slug": collection.slug})
    unknown = api.post(members, {"username": "nobody", "role": "viewer"})
    known = api.post(members, {"username": "charlie", "role": "viewer"})
    assert unknown.status_code == known.status_code == 202
    assert unknown.json() == {**known.json(), "username": "nobody",
                              "detail": known.json()["detail"].replace("charlie", "nobody")}
    assert "There is no user" not in unknown.content.decode()
    assert Membership.objects.filter(collection=collection, user=charlie).exists()


def test_it_refuses_to_demote_or_remove_the_last_owner(api, collection):
    detail = reverse("api:member_detail", kwargs={"slug": collection.slug, "username": "alice"})
    demote = api.patch(detail, {"role": "viewer"})
    assert demote.status_code == 400
    assert "owner" in demote.json()["error"]["message"]
    assert api.delete(detail).status_code == 400
    assert Membership.objects.get(collection=collection, user__username="alice").role == Role.OWNER


def test_it_returns_404_for_a_member_that_is_not_in_the_collection(api, collection, charlie):
    detail = reverse("api:member_detail", kwargs={"slug": collection.slug, "username": "charlie"})
    assert api.patch(detail, {"role": "viewer"}).status_code == 404


def test_a_team_role_counts_and_the_list_costs_a_fixed_number_of_queries(
    api, alice, bob, django_assert_max_num_queries
):
    team = team_create(name="Lab", user=bob)
    team_member_add(team=team, user=alice)
    for n in range(6):
        c = services.collection_create(name=f"Team set {n}", user=bob)
        services.team_access_set(collection=c, team=team, role=Role.EDITOR)
    services.membership_set(collection=c, user=alice, role=Role.VIEWER)  # the team's editor role wins
    with django_assert_max_num_queries(8):
        body = api.get(reverse("api:collection_list")).json()
    assert body["count"] == 6
    assert {c["role"] for c in body["results"]} == {"editor"}
