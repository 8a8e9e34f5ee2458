"""/api/v1/ routes for collections, members, documents and search (see knowledge.api)."""

from django.urls import path

from knowledge import api

urlpatterns = [
    path("collections/", api.CollectionListApi.as_view(), name="collection_list"),
    path("collections/<slug:slug>/", api.CollectionDetailApi.as_view(), name="collection_detail"),
    path("collections/<slug:slug>/members/", api.MemberListApi.as_view(), name="member_list"),
    path(
        "collections/<slug:slug>/members/<str:username>/", api.MemberDetailApi.as_view(), name="member_detail"
    ),
    path("collections/<slug:slug>/documents/", api.DocumentListApi.as_view(), name="document_list"),
    path("collections/<slug:slug>/search/", api.SearchApi.as_view(), name="search"),
    path("documents/<int:pk>/", api.DocumentDetailApi.as_view(), name="document_detail"),
    path("documents/<int:pk>/file/", api.DocumentFileApi.as_view(), name="document_file"),
    path("documents/<int:pk>/retry/", api.DocumentRetryApi.as_view(), name="document_retry"),
]
