"""/api/v1/ routes for collections, members, documents and search (see the knowledge.api package)."""

from django.urls import path

from knowledge.api import collections, documents, members, search

urlpatterns = [
    path("collections/", collections.CollectionListApi.as_view(), name="collection_list"),
    path("collections/<slug:slug>/", collections.CollectionDetailApi.as_view(), name="collection_detail"),
    path("collections/<slug:slug>/members/", members.MemberListApi.as_view(), name="member_list"),
    path(
        "collections/<slug:slug>/members/<str:username>/", members.MemberDetailApi.as_view(), name="member_detail"
    ),
    path("collections/<slug:slug>/documents/", documents.DocumentListApi.as_view(), name="document_list"),
    path("collections/<slug:slug>/search/", search.SearchApi.as_view(), name="search"),
    path("documents/<int:pk>/", documents.DocumentDetailApi.as_view(), name="document_detail"),
    path("documents/<int:pk>/file/", documents.DocumentFileApi.as_view(), name="document_file"),
    path("documents/<int:pk>/retry/", documents.DocumentRetryApi.as_view(), name="document_retry"),
]
