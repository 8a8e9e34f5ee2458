from django.urls import path

from agent import views

app_name = "agent"

urlpatterns = [
    path("ask/", views.ask, name="ask"),
    path("collections/<slug:slug>/ask/", views.collection_ask, name="collection_ask"),
    path("collections/<slug:slug>/questions/", views.run_history, name="run_history"),
    path("runs/<int:pk>/", views.run_detail, name="run_detail"),
    path("runs/<int:pk>/status/", views.run_status, name="run_status"),
    path("runs/<int:pk>/retry/", views.run_retry, name="run_retry"),
    path("runs/<int:pk>/citations/<int:marker>/", views.citation_panel, name="citation_panel"),
]
