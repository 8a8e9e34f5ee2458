"""Which contradiction cues changed between a git revision and the working tree, on the
SciFact *calibration* claims only (agent.local.calibration.scifact_split: id % 5 in {0,1,2}):
every labelled claim against every sentence of every abstract it cites, counted by (cue before,
cue after, gold label of the sentence).

    .venv/bin/python bench/premise_cue_diff.py c3f5f07 [--show]

The revision's code is exported with `git archive` into a temporary folder and run there in
a child process (nothing is checked out), so any revision with agent.local.contradiction
(one module or the package) compares with the working tree.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

from _shared_data import SHARED

ROOT = Path(__file__).resolve().parent.parent
DATA = SHARED / "scifact"

# Run in the tree whose cues are wanted: every (claim, sentence) pair's cue, in order.
_CUES = """
import json, sys
sys.path.insert(0, ".")
from agent.local.contradiction import contradiction_cue
pairs = json.load(sys.stdin)
json.dump([contradiction_cue(c, s) for c, s in pairs], sys.stdout)
"""


def _pairs() -> list[tuple[str, str, str]]:
    """(claim, sentence, gold label of the sentence) of every calibration claim and cited sentence."""
    sys.path.insert(0, str(ROOT))
    from agent.local.calibration import CALIBRATION, scifact_split

    corpus = {}
    for line in (DATA / "corpus_sentences.jsonl").open():
        row = json.loads(line)
        corpus[row["doc_id"]] = row["sentences"]
    out = []
    for line in (DATA / "claims_train_labeled.jsonl").open():
        claim = json.loads(line)
        if scifact_split(claim["id"]) != CALIBRATION:
            continue
        for doc in claim["cited_doc_ids"]:
            gold = {i: ev["label"] for ev in claim["evidence"].get(str(doc), []) for i in ev["sentences"]}
            for i, sentence in enumerate(corpus.get(doc, [])):
                out.append((claim["claim"], sentence, gold.get(i, "NEUTRAL")))
    return out


def _cues(tree: Path, pairs: list[tuple[str, str, str]]) -> list[str]:
    done = subprocess.run([sys.executable, "-c", _CUES], cwd=tree, check=True, capture_output=True, text=True,
                          input=json.dumps([(c, s) for c, s, _ in pairs]))
    return json.loads(done.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("revision")
    parser.add_argument("--show", action="store_true", help="print each changed pair")
    args = parser.parse_args()
    pairs = _pairs()
    with tempfile.TemporaryDirectory() as tmp:
        archive = subprocess.run(["git", "archive", args.revision, "agent"], cwd=ROOT, check=True,
                                 capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", tmp], input=archive, check=True)
        before = _cues(Path(tmp), pairs)
    after = _cues(ROOT, pairs)
    counts: Counter = Counter()
    for (claim, sentence, gold), a, b in zip(pairs, before, after):
        if a != b:
            counts[(a, b, gold)] += 1
            if args.show:
                print(f"{a!r} -> {b!r} [{gold}] {claim} || {sentence}")
    print(json.dumps([{"before": a, "after": b, "gold": g, "sentences": n} for (a, b, g), n in counts.most_common()],
                     indent=1))
    fired = Counter((b, gold) for (_, _, gold), b in zip(pairs, after) if b)
    print("after, cues fired by gold label:", json.dumps({f"{c} / {g}": n for (c, g), n in sorted(fired.items())}))


if __name__ == "__main__":
    main()
