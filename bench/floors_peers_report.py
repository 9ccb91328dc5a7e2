"""Section 12's tables and target lines from its samples (bench/floors_peers.py measures them)."""

from __future__ import annotations

from bench import embeddings, inputs
from bench.floors_peers import (ALONE, BATCH, BATCH_REQUESTS, COLD_TARGET, FLOOR, FUNCTION, ONNX, TINY_MODEL_MS, TORCH,
                                WARM_TARGET, Route, Samples)
from bench.report import table, verdict
from bench.stats import summarize

PEERS = (ONNX, TORCH)


def _median(samples: dict, key: tuple[str, str]) -> float | None:
    values = samples.get(key)
    return summarize(values).median if values else None


def _cell(samples: dict, key, digits: int) -> str:
    values = samples.get(key)
    if not values:
        return "-"
    s = summarize(values)
    return f"{s.median:.{digits}f} ({s.low:.{digits}f}-{s.high:.{digits}f})"


def _ratio(a: float | None, b: float | None) -> str:
    return f"{a / b:.2f}x" if a and b else "-"


def _cold(routes: list[Route], samples: Samples) -> tuple[list[str], list[str]]:
    rows, verdicts = [], []
    for route in routes:
        if route.name == BATCH:
            continue
        ours, floor, onnx = (_median(samples.cold_ms, (route.name, label)) for label in (FUNCTION, FLOOR, ONNX))
        rows.append([f"`{route.name}`", *[_cell(samples.cold_ms, (route.name, label), 0)
                                          for label in (FUNCTION, FLOOR, *PEERS)],
                     _ratio(ours, floor), _ratio(ours, onnx)])
        if ours and floor:
            ahead = f", {_ratio(ours, onnx)} of ONNX Runtime's {onnx:.0f} ms" if onnx else ", ONNX Runtime not measured"
            verdicts.append(verdict(ours <= COLD_TARGET * floor and (onnx is None or ours < onnx),
                                    f"cold {route.name}: {ours:.0f} ms, {_ratio(ours, floor)} of its floor's "
                                    f"{floor:.0f} ms{ahead} (target <= {COLD_TARGET:.2f}x the floor and ahead of "
                                    "ONNX Runtime)"))
    headers = ["route", "function ms", "floor ms", "ONNX Runtime ms", "sentence-transformers ms", "function / floor",
               "function / ONNX Runtime"]
    return [table(headers, rows)], verdicts


def _warm(routes: list[Route], samples: Samples) -> tuple[list[str], list[str]]:
    rows, verdicts = [], []
    for route in routes:
        ours, floor = _median(samples.warm_p50, (route.name, FUNCTION)), _median(samples.warm_p50, (route.name, FLOOR))
        paired = summarize(samples.paired_ms[route.name]).median if samples.paired_ms.get(route.name) else None
        overhead = ours / floor - 1 if ours and floor else None
        rows.append([f"`{route.name}`", *[_cell(samples.warm_p50, (route.name, label), 2)
                                          for label in (FUNCTION, FLOOR)],
                     f"**{overhead:+.1%}**" if overhead is not None else "-",
                     f"{paired:+.3f}" if paired is not None else "-",
                     *[_cell(samples.warm_p50, (route.name, label), 2) for label in (ALONE, *PEERS)]])
        if overhead is None:
            continue
        if route.model == "tabular":
            verdicts.append(verdict(paired is not None and paired < TINY_MODEL_MS,
                                    f"warm {route.name}: {paired:+.3f} ms over its floor's {floor:.3f} ms "
                                    f"(target < {TINY_MODEL_MS} ms on the tiny tabular model)"))
        elif route.name != BATCH:
            verdicts.append(verdict(overhead <= WARM_TARGET,
                                    f"warm {route.name}: {overhead:+.1%} over its floor at p50 "
                                    f"({ours:.2f} vs {floor:.2f} ms; target <= {WARM_TARGET:.0%})"))
        onnx = _median(samples.warm_p50, (route.name, ONNX))
        alone = _median(samples.warm_p50, (route.name, ALONE))
        if route.name in ("/embed", BATCH) and onnx and alone:
            verdicts.append(verdict(alone < onnx, f"warm {route.name}: function {alone:.2f} ms (in a process of its "
                                    f"own, as the peer) vs ONNX Runtime + tokenizers {onnx:.2f} ms "
                                    f"({_ratio(alone, onnx)}; target: faster)"))
    headers = ["route", "function p50 ms", "floor p50 ms", "overhead (p50)", "added ms (paired median)",
               "function alone p50 ms", "ONNX Runtime p50 ms", "sentence-transformers p50 ms"]
    return [table(headers, rows)], verdicts


def _answers(samples: Samples) -> list[str]:
    """Every stack's 32 vectors of the batch against the float64 numpy reference of the original weights."""
    stacks = [label for label in (FUNCTION, FLOOR, *PEERS) if (BATCH, label) in samples.answers]
    if not stacks:
        return []
    expected = embeddings.reference_vectors(list(inputs.embed_batch_texts()))
    found = {label: embeddings.cosines(embeddings.answer_vectors(samples.answers[(BATCH, label)]), expected)
             for label in stacks}
    rows = [[label, f"{values.min():.6f}", f"{values.mean():.6f}"] for label, values in found.items()]
    return ["The batch's 32 vectors from each stack (texts the conversion gate never saw), cosine to the float64 numpy "
            "reference of the original weights (each text run alone); the gate asks >= 0.99 for every text and "
            ">= 0.999 on average (docs/conversion.md):", "",
            table(["stack", "min cosine", "mean cosine"], rows)]


def _memory(samples: Samples, stages: list[tuple]) -> list[str]:
    rows = [[label, _cell(samples.rss_mb, ("/embed", label), 0)] for label in (FUNCTION, FLOOR, *PEERS)
            if samples.rss_mb.get(("/embed", label))]
    steps = [[step, f"{rss:.0f}", f"{anon:.0f}" if anon else "", f"{file:.0f}" if file else ""]
             for step, rss, anon, file, _ in stages]
    return ["Peak RSS of the runtime process after the cold /embed answer (VmHWM, MB, median (min-max)):", "",
            table(["stack", "peak RSS MB"], rows), "",
            "Where a minilm process's memory goes (`bench/rss_stages.py`: the floor's libraries in the Lambda venv, "
            "VmRSS after each step, split into anonymous memory the process built and file-backed pages mapped "
            "from the model and the libraries):", "",
            table(["step", "RSS MB", "anonymous MB", "file-backed MB"], steps)]


def _modes(modes: dict[str, dict[str, list[float]]]) -> list[str]:
    rows = [[mode, f"{summarize(m['file_mb']).median:.0f}", _cell(m, "first_invoke_ms", 0),
             _cell(m, "rss_after_first_mb", 0), _cell(m, "peak_mb", 0)] for mode, m in modes.items()]
    served = next((mode for mode in modes if mode == _served_minilm_mode()), "?")
    return [f"minilm in each mode it passes the gate in (`bench/embed_modes.py`: fresh processes of the Lambda venv, "
            f"alternating, {len(next(iter(modes.values()))['peak_mb'])} each; served: **{served}**). The first "
            "invoke is where XNNPACK packs the weights (a float16 file is widened to float32 first):", "",
            table(["mode", "file MB", "first invoke ms", "RSS after it MB", "peak after 33 sentences MB"], rows)]


def _served_minilm_mode() -> str | None:
    from bench.conversion import served_mode  # noqa: PLC0415

    return served_mode("minilm")


def render(routes: list[Route], samples: Samples, rounds: int, requests: int,
           stages: list[tuple], modes: dict[str, dict[str, list[float]]]) -> tuple[str, list[str]]:
    cold, cold_verdicts = _cold(routes, samples)
    warm, warm_verdicts = _warm(routes, samples)
    lines = [
        f"{rounds} rounds after one discarded, every route's stacks in turn (the order flipped every round), on the "
        "same API Gateway v2 event. *Floor*: bench/baselines/floor_handler.py, the event JSON -> decode/tokenize -> "
        "LiteRT -> answer JSON with the libraries alone, in the function's own Lambda venv. *ONNX Runtime*: the "
        "same model converted to ONNX (tf2onnx of its SavedModel; bench/minilm_onnx.py for all-MiniLM-L6-v2 from "
        "the same weights), the floor's preprocessing and answers, one intra-op thread. *sentence-transformers*: "
        "PyTorch CPU on the same weights, Python 3.11 (its CPU wheel's), one thread. Every stack runs with "
        "OPENBLAS_NUM_THREADS=1, the setting the function gives itself. Cells: median (min-max) over the rounds.",
        "",
        "**Cold start** to the first answer: a fresh emulated Lambda environment per sample, client clock from "
        "starting the emulator (the function as the image runs it with no table: SQLite in the fresh /tmp):",
        "",
        *cold,
        "",
        f"**Warm**: per round, one fresh process per stack; the function and its floor alternate call by call in "
        f"one process of the Lambda venv, the floor calling the function's own interpreter (one copy of the "
        f"weights, as in Lambda; RESULTS_CACHE=off, so every call computes), {requests} timed calls per "
        f"route ({BATCH_REQUESTS} for the 32-sentence batch) after untimed warm-up; a round's p50 is one sample. "
        "*Added*: the "
        "median over the rounds of each round's median paired difference (a call minus the floor call right after "
        "it). *Function alone*: the function's embedding routes once more in a fresh process of their own, as each "
        "peer runs: the figure held against the peers.",
        "",
        *warm,
        "",
        *_answers(samples),
        "",
        *_memory(samples, stages),
        "",
        *_modes(modes),
    ]
    if samples.not_measured:
        lines += ["", "Not measured: " + "; ".join(f"{key}: `{why}`" for key, why in samples.not_measured.items())]
    return "\n".join(lines), cold_verdicts + warm_verdicts
