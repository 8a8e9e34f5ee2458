from django.urls import path

from accounts import views

app_name = "accounts"

# The paths are the ones these pages had under knowledge/urls.py: bookmarks keep working.
urlpatterns = [
    path("teams/", views.team_list, name="team_list"),
    path("teams/<slug:slug>/", views.team_detail, name="team_detail"),
    path("settings/tokens/", views.api_tokens, name="api_tokens"),
    path("settings/tokens/<int:pk>/revoke/", views.api_token_revoke, name="api_token_revoke"),
]
