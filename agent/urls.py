from django.urls import path  # noqa: F401

app_name = "agent"

urlpatterns: list = []
