"""The old name of agent.benchmark (parse, metrics, report), kept for the bench/ scripts that
import it (issue 16 moved the code); new code imports agent.benchmark."""

from agent.benchmark import *  # noqa: F403
from agent.benchmark import __all__  # noqa: F401
