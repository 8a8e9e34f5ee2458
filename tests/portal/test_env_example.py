from __future__ import annotations

import re

from tests.conftest import ROOT


def test_env_example_lists_every_variable_the_settings_read():
    # settings.py and the groups it imports (settings_llm.py).
    settings_text = "\n".join(path.read_text() for path in sorted((ROOT / "portal").glob("settings*.py")))
    used = set(re.findall(r'"(PORTAL_[A-Z0-9_]+)"', settings_text))
    listed = set(re.findall(r"^(PORTAL_[A-Z0-9_]+)=", (ROOT / ".env.example").read_text(), re.MULTILINE))
    assert used - listed == set(), "add these to .env.example"
