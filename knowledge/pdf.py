"""The old name of knowledge.extract (text extraction, one module per format), kept for the
importers outside that change (knowledge.ingest, knowledge.chunking, agent.web.evidence, bench/);
new code imports knowledge.extract."""

from knowledge.extract import *  # noqa: F403
from knowledge.extract import __all__  # noqa: F401
