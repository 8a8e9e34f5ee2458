"""Where the shared data is (papers, devbench, SciFact: the folder DESIGN.md calls
../shared/data), for every bench script: one lookup instead of one per script.

In order: GROUNDED_SHARED_DATA when set; else `shared/data` beside the checkout
(../shared/data); else `var/shared/data` inside it, for a worktree that links the shared
folder in (`ln -s /path/to/shared var/shared`). `require` ends a script that needs a part
that is not there, saying what to set.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ENV = "GROUNDED_SHARED_DATA"
CANDIDATES = (ROOT.parent / "shared" / "data", ROOT / "var" / "shared" / "data")


def shared_data() -> Path:
    """The shared data folder: GROUNDED_SHARED_DATA, else the first candidate that exists,
    else ../shared/data (what is missing is said when a script asks for it: `require`)."""
    if os.environ.get(ENV):
        return Path(os.environ[ENV])
    return next((c for c in CANDIDATES if c.is_dir()), CANDIDATES[0])


SHARED = shared_data()


def missing(path: Path) -> str:
    """What to set when `path` (a part of the shared data) is not there."""
    where = f"{ENV}={os.environ[ENV]}" if os.environ.get(ENV) else " or ".join(str(c) for c in CANDIDATES)
    return (f"shared data not found: {path} does not exist (looked in {where}). Set {ENV}=/path/to/shared/data, "
            f"or link the shared folder into this checkout: ln -s /path/to/shared {CANDIDATES[1].parent}")


def require(path: Path) -> Path:
    """`path` when it exists; else the script ends, saying what to set."""
    if not path.exists():
        sys.exit(missing(path))
    return path
