from django.urls import path

from knowledge import views, views_documents, views_invitations

app_name = "knowledge"

urlpatterns = [
    path("collections/", views.collection_list, name="collection_list"),
    path("collections/new/", views.collection_create, name="collection_create"),
    path("collections/<slug:slug>/", views.collection_detail, name="collection_detail"),
    path("collections/<slug:slug>/members/", views.member_set, name="member_set"),
    path("collections/<slug:slug>/members/<int:user_id>/remove/", views.member_remove, name="member_remove"),
    path("collections/<slug:slug>/teams/", views.team_access_set, name="team_access_set"),
    path(
        "collections/<slug:slug>/teams/<slug:team_slug>/remove/",
        views.team_access_remove,
        name="team_access_remove",
    ),
    path("collections/<slug:slug>/web-search/", views.collection_web_search, name="collection_web_search"),
    path("collections/<slug:slug>/search/", views.collection_search, name="collection_search"),
    path("collections/<slug:slug>/documents/upload/", views_documents.document_upload, name="document_upload"),
    path("collections/<slug:slug>/documents/status/", views_documents.document_status, name="document_status"),
    path("documents/<int:pk>/file/", views_documents.document_file, name="document_file"),
    path("documents/<int:pk>/view/", views_documents.document_viewer, name="document_viewer"),
    path("documents/<int:pk>/text/", views_documents.document_text, name="document_text"),
    path("documents/<int:pk>/delete/", views_documents.document_delete, name="document_delete"),
    path("documents/<int:pk>/details/", views_documents.document_update, name="document_update"),
    path("documents/<int:pk>/retry/", views_documents.document_retry, name="document_retry"),
    path("collections/<slug:slug>/invitations/", views_invitations.invitation_new, name="invitation_new"),
    path("collections/<slug:slug>/invitations/<int:pk>/revoke/", views_invitations.invitation_cancel,
         name="invitation_cancel"),
    path("invitations/<str:token>/", views_invitations.invitation_open, name="invitation_accept"),
    path("accounts/signup/", views_invitations.signup, name="signup"),
]
