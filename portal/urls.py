from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path, re_path
from django.views.generic import RedirectView
from drf_spectacular.views import SpectacularSwaggerSplitView

from accounts.views_auth import ThrottledLoginView
from agent import api_urls as agent_api_urls
from knowledge import api_urls as knowledge_api_urls
from knowledge.api_errors import api_not_found
from knowledge.api_schema import SchemaApi

# One "api" namespace for both apps, so every API route reverses as "api:<name>".
api_v1 = [*knowledge_api_urls.urlpatterns, *agent_api_urls.urlpatterns]

urlpatterns = [
    path("", RedirectView.as_view(pattern_name="knowledge:collection_list", permanent=False)),
    path("accounts/login/", ThrottledLoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("accounts/password/", auth_views.PasswordChangeView.as_view(), name="password_change"),
    path(
        "accounts/password/done/",
        auth_views.PasswordChangeDoneView.as_view(),
        name="password_change_done",
    ),
    path("admin/", admin.site.urls),
    path("api/schema/", SchemaApi.as_view(), name="api-schema"),
    path("api/docs/", SpectacularSwaggerSplitView.as_view(url_name="api-schema"), name="api-docs"),
    path("api/v1/", include((api_v1, "api"))),
    re_path(r"^api/(?P<rest>[\s\S]*)$", api_not_found),
    path("", include("knowledge.urls")),
    path("", include("accounts.urls")),
    path("", include("agent.urls")),
]
