"""Which contradiction cues changed between a git revision and the working tree, on the
SciFact *calibration* claims only (agent.local.calibration.scifact_split: id % 5 in {0,1,2}):
every labelled claim against every sentence of every abstract it cites, counted by (cue before,
cue after, gold label of the sentence).

    .venv/bin/python bench/premise_cue_diff.py e194d12 [--show]

The revision must hold agent/local/contradiction.py as one module (main before the split,
e194d12); it is loaded from `git show`, so nothing is checked out.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
DATA = ROOT.parent / "shared" / "data" / "scifact"


def _module_at(revision: str):
    source = subprocess.run(["git", "show", f"{revision}:agent/local/contradiction.py"], cwd=ROOT, check=True,
                            capture_output=True, text=True).stdout
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
        f.write(source)
    spec = importlib.util.spec_from_file_location("contradiction_before", f.name)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("revision")
    parser.add_argument("--show", action="store_true", help="print each changed pair")
    args = parser.parse_args()
    from agent.local import contradiction as after
    from agent.local.calibration import CALIBRATION, scifact_split

    before = _module_at(args.revision)
    corpus = {}
    for line in (DATA / "corpus_sentences.jsonl").open():
        row = json.loads(line)
        corpus[row["doc_id"]] = row["sentences"]
    counts: Counter = Counter()
    for line in (DATA / "claims_train_labeled.jsonl").open():
        claim = json.loads(line)
        if scifact_split(claim["id"]) != CALIBRATION:
            continue
        for doc in claim["cited_doc_ids"]:
            gold = {i: ev["label"] for ev in claim["evidence"].get(str(doc), []) for i in ev["sentences"]}
            for i, sentence in enumerate(corpus.get(doc, [])):
                a, b = before.contradiction_cue(claim["claim"], sentence), after.contradiction_cue(claim["claim"], sentence)
                if a != b:
                    counts[(a, b, gold.get(i, "NEUTRAL"))] += 1
                    if args.show:
                        print(f"{a!r} -> {b!r} [{gold.get(i, 'NEUTRAL')}] {claim['claim']} || {sentence}")
    print(json.dumps([{"before": a, "after": b, "gold": g, "sentences": n} for (a, b, g), n in counts.most_common()],
                     indent=1))


if __name__ == "__main__":
    main()
