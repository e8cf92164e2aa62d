"""An experiment, not the product: the local model with its linear layers in int8 (ONNX Runtime's
dynamic quantization), on the query side only or on both sides, against the product's fp32 model.

    .venv/bin/python bench/embeddings_int8.py /work/shared/bench-data/locomo-session-memories.json \\
        [--modes fp32,query,both] [--per-tensor] [--queries 400] [--smoke]

The int8 model is the product's graph (memory.search.minilm_onnx.build_graph) with each linear
layer's FusedMatMul made a MatMul on the transposed weights, then
`onnxruntime.quantization.quantize_dynamic` (int8 weights, per output channel unless
`--per-tensor`; activations quantized at each call), written to a throwaway directory.

Prints: the cosine of each question's int8 vector to its fp32 vector; the latency of recall's
call (a question and its topic text, here the question without its first word, in one batch,
1 thread), the models taking turns over 4 rounds; then, for each of `--modes`, `manage.py
recall_eval PATH --strategies hybrid` in its own throwaway SQLite database, with
- fp32: the product as is (the baseline);
- query: memories embedded in fp32, questions and topic texts in int8, one text per call (as a
  query is embedded; dynamic quantization scales the activations per call, so a batch of
  questions would not give the vectors a query gets);
- both: memories in int8 too (batches of 32, as memories are embedded).
`--smoke`: 40 questions for the vectors and latency, the first conversation for recall_eval.
"""

from __future__ import annotations

import argparse
import io
import json
import logging
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.pop("DATABASE_URL", None)
os.environ["EMBEDDINGS_BACKEND"] = "local"
os.environ["EMBEDDINGS_QUERY_CACHE_SIZE"] = "0"
os.environ.setdefault("TUTOR_VAR_DIR", tempfile.mkdtemp(prefix="tutor-bench-int8-"))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tutor.settings.base")

import django  # noqa: E402

django.setup()

import numpy as np  # noqa: E402
import onnx  # noqa: E402
import onnxruntime as ort  # noqa: E402
from django.core.management import call_command  # noqa: E402
from onnx import TensorProto, numpy_helper  # noqa: E402

import memory.management.commands.recall_eval as recall_eval_command  # noqa: E402
from memory.search import embeddings, minilm_onnx  # noqa: E402


def quantized_model(directory: Path, per_channel: bool) -> Path:
    from onnxruntime.quantization import QuantType, quantize_dynamic

    graph, arrays, _mapped = minilm_onnx.build_graph(minilm_onnx.model_dir())
    model = onnx.load_from_string(graph)
    linear = {n.input[1] for n in model.graph.node if n.op_type == "FusedMatMul" and n.input[1] in arrays}
    initializers = [
        numpy_helper.from_array(np.ascontiguousarray(arrays[t.name].T if t.name in linear else arrays[t.name]), t.name)
        if t.data_location == TensorProto.EXTERNAL
        else t
        for t in model.graph.initializer
    ]
    for n in model.graph.node:
        if n.op_type == "FusedMatMul" and n.input[1] in linear:
            n.op_type, n.domain = "MatMul", ""
            del n.attribute[:]
    del model.graph.initializer[:]
    model.graph.initializer.extend(initializers)
    onnx.save(model, directory / "fp32.onnx")
    logging.getLogger().setLevel(logging.WARNING)  # the quantizer logs each tensor it leaves alone
    quantize_dynamic(
        directory / "fp32.onnx",
        directory / "int8.onnx",
        weight_type=QuantType.QInt8,
        per_channel=per_channel,
        op_types_to_quantize=["MatMul"],
    )
    return directory / "int8.onnx"


class Int8(minilm_onnx.MiniLM):
    """MiniLM's tokenizer and `run`, on the quantized model, 1 thread."""

    def __init__(self, path: Path) -> None:
        self.tokenizer = minilm_onnx.load_tokenizer(minilm_onnx.model_dir())
        options = ort.SessionOptions()
        options.intra_op_num_threads = options.inter_op_num_threads = 1
        options.log_severity_level = 3
        self.threads = 1
        self.session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


class Int8Embedder:
    """The local embedder's name and contract, on the int8 model; `one_per_call`: each text alone."""

    name = embeddings.LOCAL_MODEL_NAME

    def __init__(self, model: Int8, one_per_call: bool) -> None:
        self.model, self.one_per_call = model, one_per_call

    def embed(self, texts: list[str], *, student_id: int | None = None) -> np.ndarray:
        if not texts:
            return np.zeros((0, embeddings.LOCAL_DIM), dtype=np.float32)
        if self.one_per_call:
            return np.concatenate([embeddings.normalise(self.model.run([t])) for t in texts])
        return embeddings.normalise(self.model.run(texts, batch_size=32))

    def count_tokens(self, texts: list[str]) -> int:
        return int(self.model.count_tokens(texts))


def recall_quality(path: Path, mode: str, model: Int8, conversations: int) -> dict[str, Any]:
    fp32 = embeddings.LocalEmbedder()
    queries: embeddings.Embedder = fp32 if mode == "fp32" else Int8Embedder(model, one_per_call=True)
    memories: embeddings.Embedder = Int8Embedder(model, one_per_call=False) if mode == "both" else fp32
    write = recall_eval_command.memory_embeddings_write
    get_embedder = embeddings.get_embedder
    out = Path(tempfile.mkdtemp(prefix="tutor-bench-int8-")) / "report.json"
    args = [str(path), "--strategies", "hybrid", "--json", str(out), "--conversations", str(conversations)]
    try:
        embeddings.get_embedder = lambda: queries

        def write_with(*, memory_ids: list[int], embedder: embeddings.Embedder | None = None) -> int:
            return write(memory_ids=memory_ids, embedder=memories)

        recall_eval_command.memory_embeddings_write = write_with
        call_command("recall_eval", *args, stdout=io.StringIO())
    finally:
        embeddings.get_embedder = get_embedder
        recall_eval_command.memory_embeddings_write = write
    report: dict[str, Any] = json.loads(out.read_text())
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("path", type=Path)
    parser.add_argument("--modes", default="fp32,query,both")
    parser.add_argument("--per-tensor", action="store_true")
    parser.add_argument("--queries", type=int, default=400)
    parser.add_argument("--smoke", action="store_true")
    args = parser.parse_args()
    data = json.loads(args.path.read_text())
    questions = [q["question"] for c in data["conversations"] for q in c["questions"]]
    questions = questions[: 40 if args.smoke else args.queries]
    print(f"{time.strftime('%Y-%m-%d %H:%M')}, load {os.getloadavg()[0]:.2f}, onnxruntime {ort.__version__}")

    fp32 = embeddings.LocalEmbedder()._load()
    int8 = Int8(quantized_model(Path(tempfile.mkdtemp(prefix="tutor-bench-int8-")), per_channel=not args.per_tensor))
    cosines = [
        float(np.sum(embeddings.normalise(fp32.run([q])) * embeddings.normalise(int8.run([q])))) for q in questions
    ]
    print(
        f"cosine of int8 to fp32, {len(cosines)} questions: min {min(cosines):.4f}, mean {statistics.mean(cosines):.4f}"
    )

    pairs = [[q, q.split(" ", 1)[-1]] for q in questions]
    times: dict[str, list[float]] = {"fp32": [], "int8": []}
    rounds = 4
    for r in range(rounds):
        for name in ("fp32", "int8") if r % 2 == 0 else ("int8", "fp32"):
            model = fp32 if name == "fp32" else int8
            for pair in pairs[:3]:
                model.run(pair)
            for pair in pairs[r::rounds]:
                started = time.perf_counter()
                model.run(pair)
                times[name].append((time.perf_counter() - started) * 1000)
    base = statistics.median(times["fp32"])
    for name, ms in times.items():
        p50, p95 = float(np.percentile(ms, 50)), float(np.percentile(ms, 95))
        print(f"{name}: query + topic text, p50 {p50:.2f} ms, p95 {p95:.2f} ms, p50 {p50 / base:.2f}x fp32's")

    conversations = 1 if args.smoke else len(data["conversations"])
    print("| mode | hit@1 | hit@10 | all@10 | MRR |\n|---|---|---|---|---|")
    for mode in args.modes.split(","):
        row = recall_quality(args.path, mode, int8, conversations)["hybrid"]["all-but-adversarial"]
        print(f"| {mode} | {row['hit@1']:.1f} | {row['hit@10']:.1f} | {row['all@10']:.1f} | {row['mrr']:.3f} |")
    print(f"load at the end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
