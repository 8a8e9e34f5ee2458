from django.apps import AppConfig


class AgentConfig(AppConfig):
    name = "agent"
    verbose_name = "Agent: runs, reviews, benchmarks"

    def ready(self) -> None:
        from agent.web import checks  # noqa: F401 (registers the system check)
