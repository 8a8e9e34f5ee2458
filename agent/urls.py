from django.urls import path

from agent import views, views_citations

app_name = "agent"

urlpatterns = [
    path("ask/", views.ask, name="ask"),
    path("collections/<slug:slug>/ask/", views.collection_ask, name="collection_ask"),
    path("collections/<slug:slug>/questions/", views.run_history, name="run_history"),
    path("runs/<int:pk>/", views.run_detail, name="run_detail"),
    path("runs/<int:pk>/status/", views.run_status, name="run_status"),
    path("runs/<int:pk>/retry/", views.run_retry, name="run_retry"),
    path("runs/<int:pk>/citations/<int:marker>/", views_citations.citation_panel, name="citation_panel"),
    path("runs/<int:pk>/citations/<int:marker>/view/", views_citations.citation_viewer, name="citation_viewer"),
    path("runs/<int:pk>/citations/<int:marker>/save/", views_citations.citation_save, name="citation_save"),
    path("status/", views.operations_status, name="operations_status"),
]

# Follow-ups, threads and exports (agent/views_threads.py).
from agent import views_threads  # noqa: E402

urlpatterns += [
    path("runs/<int:pk>/follow-up/", views_threads.run_follow_up, name="run_follow_up"),
    path("runs/<int:pk>/export.<str:fmt>", views_threads.run_export, name="run_export"),
    path("threads/<int:pk>/", views_threads.thread_detail, name="thread_detail"),
    path("threads/<int:pk>/export.md", views_threads.thread_export, name="thread_export"),
]

# Benchmarks and the review queue (agent/views_review.py).
from agent import views_review  # noqa: E402

_bench = "collections/<slug:slug>/benchmarks/"
urlpatterns += [
    path(_bench, views_review.benchmark_list, name="benchmark_list"),
    path(_bench + "import/", views_review.benchmark_import, name="benchmark_import"),
    path(_bench + "<int:set_id>/", views_review.benchmark_set, name="benchmark_set"),
    path(_bench + "<int:set_id>/start/", views_review.benchmark_start, name="benchmark_start"),
    path(_bench + "<int:set_id>/compare/", views_review.benchmark_compare, name="benchmark_compare"),
    path(_bench + "<int:set_id>/runs/<slug:label>/", views_review.benchmark_report, name="benchmark_report"),
    path(_bench + "<int:set_id>/runs/<slug:label>/progress/", views_review.benchmark_progress,
         name="benchmark_progress"),
    path(_bench + "<int:set_id>/runs/<slug:label>/export.<str:fmt>", views_review.benchmark_export,
         name="benchmark_export"),
    path("collections/<slug:slug>/review/", views_review.review_queue, name="review_queue"),
    path("collections/<slug:slug>/review/<int:run_id>/", views_review.review_submit, name="review_submit"),
]
