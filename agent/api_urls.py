"""/api/v1/ routes for runs, configurations and reviews (see agent.api)."""

from django.urls import path

from agent import api

urlpatterns = [
    path("runs/", api.RunListApi.as_view(), name="run_list"),
    path("runs/<int:pk>/", api.RunDetailApi.as_view(), name="run_detail"),
    path("runs/<int:pk>/reviews/", api.RunReviewListApi.as_view(), name="run_review_list"),
    path("runs/<int:pk>/citations/<int:marker>/save/", api.CitationSaveApi.as_view(), name="citation_save"),
    path("configs/", api.ConfigListApi.as_view(), name="config_list"),
]
