"""/api/v1/ routes for runs, configurations and reviews (see agent.api, agent.api_reviews and agent.api_threads)."""

from django.urls import path

from agent import api, api_reviews, api_threads

urlpatterns = [
    path("runs/", api.RunListApi.as_view(), name="run_list"),
    path("runs/<int:pk>/", api.RunDetailApi.as_view(), name="run_detail"),
    path("runs/<int:pk>/reviews/", api_reviews.RunReviewListApi.as_view(), name="run_review_list"),
    path("runs/<int:pk>/citations/<int:marker>/save/", api.CitationSaveApi.as_view(), name="citation_save"),
    path("configs/", api.ConfigListApi.as_view(), name="config_list"),
    path("runs/<int:pk>/follow-ups/", api_threads.RunFollowUpApi.as_view(), name="run_follow_up"),
    path("runs/<int:pk>/export/<str:fmt>/", api_threads.RunExportApi.as_view(), name="run_export"),
    path("threads/", api_threads.ThreadListApi.as_view(), name="thread_list"),
    path("threads/<int:pk>/", api_threads.ThreadDetailApi.as_view(), name="thread_detail"),
    path("threads/<int:pk>/turns/", api_threads.ThreadTurnListApi.as_view(), name="thread_turn_list"),
    path("threads/<int:pk>/export/", api_threads.ThreadExportApi.as_view(), name="thread_export"),
]
