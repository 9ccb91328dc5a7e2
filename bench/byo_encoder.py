"""Section 19: bring your own encoder. all-mpnet-base-v2 (MPNet, 12 layers, 768-d: sentence-transformers' own
directory, from its registry packages) converted as a user converts theirs (`make models-mpnet`: one `convert`
command, its default mode), served by the function next to the two stacks people serve it with today, in one run:

- the function: the image's task root with this model alone in models/, /embed through the function's core;
- ONNX Runtime + tokenizers: the directory exported to ONNX (bench/encoder_onnx.py, checked against the numpy
  reference), the floor's preprocessing (the converted tokenizer.json), one intra-op thread;
- sentence-transformers on PyTorch (CPU, one thread) loading the directory itself.

Each round runs every stack in turn (the order flips every round; one discarded round first): cold, a fresh
emulated Lambda environment to the first answer for one short sentence and the runtime process's peak RSS (VmHWM);
warm, a fresh process of the stack's own venv (bench/embed_worker.py) timing one short sentence and a batch of 32
real sentences from 3 to over 128 tokens. A round's p50 is one sample; cells are medians over the rounds. After the
discarded round every stack's 33 vectors are held against sentence-transformers' own, and the ONNX export, below
MIN_COSINE, is reported, not timed (the function's fidelity is its conversion gate's: the table shows its cosine).

`python -m bench.byo_encoder [--rounds N]` runs it alone and prints it.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import numpy as np

from bench import embeddings, footprint, inputs, lambda_runtimes
from bench.cold_start import first_answer
from bench.floors_peers import EVERY_STACK
from bench.paths import ENCODERS_DIR
from bench.report import SectionResult, table
from bench.stats import percentile, summarize
from kit.events import http_api_event
from saved_model.recipes.encoder_packages import MPNET_NAME

NUMBER = 19
TITLE = "Bring your own encoder: all-mpnet-base-v2 against sentence-transformers and ONNX Runtime + tokenizers"
SOURCE = ENCODERS_DIR / "source" / MPNET_NAME
CONVERTED = ENCODERS_DIR / "models" / MPNET_NAME
SHORT, BATCH = "1 short sentence", "32 mixed sentences"
# (fewest tokens, most tokens, how many) of the batch: every real sentence of the corpus past 128 tokens is 4.
BANDS = ((3, 16, 7), (17, 32, 7), (33, 64, 7), (65, 128, 7), (129, 256, 4))
BATCH_REQUESTS, BATCH_WARMUP = 2, 1  # per round: a 32-sentence call of a 110M-parameter model takes seconds
SHORT_WARMUP = 5
MIN_ROUNDS = 1
MIN_COSINE = 0.9999  # to sentence-transformers' vectors, every one of the 33
FUNCTION, ONNX, TORCH = "function, LiteRT", "ONNX Runtime + tokenizers", "sentence-transformers (PyTorch)"


@lru_cache(maxsize=2)
def batch_texts(tokenizer_file: Path = CONVERTED / "tokenizer.json") -> tuple[str, ...]:
    """32 distinct VADER sentences in BANDS of the model's own token counts, seeded, lengths interleaved."""
    from tokenizers import Tokenizer  # noqa: PLC0415  (the converted model's tokenizer, once per run)

    from saved_model.recipes.vader_corpus import load_rated_sentences  # noqa: PLC0415

    tokenizer = Tokenizer.from_file(str(tokenizer_file))
    tokenizer.no_padding()
    tokenizer.no_truncation()
    sentences = sorted({s.text for s in load_rated_sentences()})
    lengths = np.array([len(e.ids) for e in tokenizer.encode_batch(sentences)])
    rng = np.random.default_rng(0)
    chosen = []
    for low, high, count in BANDS:
        band = np.flatnonzero((lengths >= low) & (lengths <= high))
        chosen += [sentences[i] for i in rng.choice(band, size=count, replace=False)]
    return tuple(chosen[i] for i in rng.permutation(len(chosen)))


def events() -> dict[str, dict]:
    return {SHORT: http_api_event("POST", "/embed", {"text": inputs.EMBED_SHORT_SENTENCE, "model": MPNET_NAME}),
            BATCH: http_api_event("POST", "/embed", {"texts": list(batch_texts()), "model": MPNET_NAME})}


@dataclass
class Samples:
    cold_ms: dict[str, list[float]] = field(default_factory=dict)  # stack -> per round
    rss_mb: dict[str, list[float]] = field(default_factory=dict)
    warm_p50: dict[tuple[str, str], list[float]] = field(default_factory=dict)  # (stack, case) -> per round
    vectors: dict[str, np.ndarray] = field(default_factory=dict)  # stack -> the 33 vectors of the discarded round
    not_measured: dict[str, str] = field(default_factory=dict)  # stack -> why


def stacks(samples: Samples) -> dict[str, lambda_runtimes.Configuration]:
    """The three configurations, leaving out one that cannot be built (and saying why)."""
    builds = {FUNCTION: lambda: lambda_runtimes.encoder_function_configuration(CONVERTED),
              ONNX: lambda: lambda_runtimes.encoder_onnx_configuration(SOURCE, CONVERTED),
              TORCH: lambda: lambda_runtimes.encoder_sentence_transformers_configuration(SOURCE)}
    built = {}
    for label, build in builds.items():
        try:
            built[label] = build()
        except Exception as error:  # noqa: BLE001  (a stack that cannot install is a result to report)
            samples.not_measured[label] = why(error)
    return built


def why(error: Exception) -> str:
    """One line for a table cell: the error's kind, its start and its end (where an emulator says what happened)."""
    text = " ".join(f"{type(error).__name__}: {error}".split()).replace("`", "'")
    return text if len(text) <= 400 else f"{text[:150]} ... {text[-250:]}"


def cold(label: str, configuration, event: dict, samples: Samples, record: bool) -> None:
    rss: list[float] = []
    runtime = configuration.runtime(EVERY_STACK)
    try:
        elapsed_ms, invocation = first_answer(runtime, event, rss)
    except (OSError, ValueError) as error:  # the emulator's 502 when the init failed, no JSON when it timed out
        raise RuntimeError(f"{label}: {error}; the emulator's last lines: {runtime.output()[-600:]}") from error
    if invocation.status != 200:
        raise RuntimeError(f"{label} answered {invocation.status}: {str(invocation.payload)[:300]}")
    if record:
        samples.cold_ms.setdefault(label, []).append(elapsed_ms)
        samples.rss_mb.setdefault(label, []).append(rss[0])


def warm(label: str, configuration, cases: dict[str, dict], short_requests: int, samples: Samples,
         record: bool) -> None:
    """Both cases in one fresh process of the stack's own venv (the function with RESULTS_CACHE=off)."""
    stack = embeddings.Stack(label, configuration, environment={
        **EVERY_STACK, **({"RESULTS_CACHE": "off"} if label == FUNCTION else {})})
    embeddings.measure_warm(stack, cases, {SHORT: short_requests, BATCH: BATCH_REQUESTS},
                            warmup={SHORT: SHORT_WARMUP, BATCH: BATCH_WARMUP})
    if record:
        for case in cases:
            samples.warm_p50.setdefault((label, case), []).append(percentile(stack.warm[case]["ms"], 0.5))
    else:
        samples.vectors[label] = np.concatenate([embeddings.answer_vectors(stack.warm[case]["body"])
                                                 for case in (SHORT, BATCH)])


def cosines_to_torch(samples: Samples) -> dict[str, float]:
    """Each stack's smallest cosine to sentence-transformers' own vector of the same text."""
    expected = samples.vectors.get(TORCH)
    if expected is None:
        return {}
    return {label: float(embeddings.cosines(vectors, expected).min()) for label, vectors in samples.vectors.items()}


def measure(rounds: int, short_requests: int) -> tuple[Samples, dict[str, lambda_runtimes.Configuration]]:
    samples = Samples()
    configurations = stacks(samples)
    cases = events()

    def attempt(label: str, step) -> None:
        if label not in configurations:
            return
        try:
            step()
        except Exception as error:  # noqa: BLE001  (one stack that fails must not cost the others their numbers)
            samples.not_measured[label] = why(error)
            del configurations[label]

    for round_number in range(rounds + 1):  # round 0 warms the page cache and bytecode, and is discarded
        record = round_number > 0
        order = list(configurations)
        for label in order[::-1] if round_number % 2 else order:
            attempt(label, lambda label=label: cold(label, configurations[label], cases[SHORT], samples, record))
        for label in order[::-1] if round_number % 2 else order:
            attempt(label, lambda label=label: warm(label, configurations[label], cases, short_requests, samples,
                                                    record))
        found = cosines_to_torch(samples).get(ONNX)
        if not record and found is not None and found < MIN_COSINE and ONNX in configurations:
            # the export must answer what sentence-transformers answers before it is timed
            samples.not_measured[ONNX] = f"cosine {found:.6f} to sentence-transformers, under {MIN_COSINE}"
            del configurations[ONNX]
        print(f"==> [{time.strftime('%T')}] bring your own encoder: round {round_number}/{rounds} done", flush=True)
    return samples, configurations


def _cell(values: list[float] | None, digits: int) -> str:
    if not values:
        return "-"
    s = summarize(values)
    return f"{s.median:.{digits}f} ({s.low:.{digits}f}-{s.high:.{digits}f})"


def _versus(values: list[float] | None, ours: list[float] | None) -> str:
    if not values or not ours:
        return "-"
    return f"{summarize(values).median / summarize(ours).median:.2f}x"


def render(samples: Samples, installed_mb: dict[str, float], rounds: int, short_requests: int, manifest: dict,
           model_mb: float, texts: tuple[str, ...]) -> str:
    """The section's text and its one table; a stack missing from `installed_mb` was not measured."""
    found = cosines_to_torch(samples)
    ours = samples.warm_p50.get((FUNCTION, SHORT)), samples.warm_p50.get((FUNCTION, BATCH))
    rows = []
    for label in (FUNCTION, ONNX, TORCH):
        if label not in installed_mb:
            rows.append([label, f"not measured: `{samples.not_measured.get(label, '?')}`", *[""] * 8])
            continue
        short, batch = samples.warm_p50.get((label, SHORT)), samples.warm_p50.get((label, BATCH))
        rows.append([label, _cell(samples.cold_ms.get(label), 0),
                     _versus(samples.cold_ms.get(label), samples.cold_ms.get(FUNCTION)),
                     _cell(samples.rss_mb.get(label), 0), _cell(short, 1), _versus(short, ours[0]),
                     _cell(batch, 0), _versus(batch, ours[1]),
                     f"{found[label]:.6f}" if label in found else "-", f"{installed_mb[label]:.0f} MB"])
    words = [len(text.split()) for text in texts]
    band_text = ", ".join(f"{count} of {low}-{high}" for low, high, count in BANDS)
    return "\n".join([
        f"all-mpnet-base-v2 (sentence-transformers' directory: MPNet, 12 layers, 768-d, mean pooling + normalize, up "
        f"to 384 tokens) in every stack. The function serves it as `make models-mpnet` converts it, one `convert` "
        f"command in its default mode: **{manifest['quantization']}**, {model_mb:.0f} MB, alone in the image's "
        "models/. ONNX Runtime runs the directory exported by bench/encoder_onnx.py (the encoder + mean pooling, "
        "checked against the numpy reference before it is kept) with the converted tokenizer.json; "
        "sentence-transformers loads the directory itself (Python 3.11, its CPU wheel's). One thread each; every "
        "stack with OPENBLAS_NUM_THREADS=1.",
        "",
        f"{rounds} rounds after one discarded, the stacks in turn (the order flipped every round). *Cold*: a fresh "
        "emulated Lambda environment to the first /embed answer for one short sentence "
        f"(\"{inputs.EMBED_SHORT_SENTENCE}\"), client clock from starting the emulator; *peak RSS*: the runtime "
        "process's VmHWM after that answer. *Warm*: per round a fresh process of each stack's own venv "
        f"(RESULTS_CACHE=off for the function), {short_requests} timed calls of the short sentence after "
        f"{SHORT_WARMUP} untimed, {BATCH_REQUESTS} of the batch after {BATCH_WARMUP}; the batch is 32 real VADER "
        f"sentences of {min(words)}-{max(words)} words ({band_text} tokens: every corpus sentence past 128 tokens "
        "is among them), each stack padding as it does (the function groups texts by length; the others pad the "
        "batch to its longest). A round's p50 is one sample; cells are median (min-max) over the rounds, and "
        "*x function* is the stack's median over the function's. *Cosine*: the smallest of the 33 vectors' "
        "cosines to sentence-transformers' own (from the discarded round). *Installed*: the bytes under the "
        "stack's venv's site-packages.",
        "",
        table(["stack", "cold: first answer ms", "x function", "peak RSS MB", f"warm {SHORT} p50 ms", "x function",
               f"warm {BATCH} p50 ms", "x function", "cosine to sentence-transformers (min)", "installed"], rows),
    ])


def run(context) -> SectionResult:
    return measured_section(max(MIN_ROUNDS, context.runs), context.warm_requests)


def measured_section(rounds: int, warm_requests: int) -> SectionResult:
    started = time.perf_counter()
    if not (CONVERTED / "manifest.json").is_file():
        return SectionResult(NUMBER, TITLE, f"Not measured in this run: {MPNET_NAME} is not converted (`make "
                             "models-mpnet`).", [], time.perf_counter() - started)
    short_requests = max(10, warm_requests // rounds)
    samples, configurations = measure(rounds, short_requests)
    manifest = json.loads((CONVERTED / "manifest.json").read_text())
    installed = {label: footprint.tree_bytes(c.venv.site_packages()) / footprint.MB
                 for label, c in configurations.items()}
    markdown = render(samples, installed, rounds, short_requests, manifest,
                      (CONVERTED / manifest["model_file"]).stat().st_size / footprint.MB, batch_texts())
    return SectionResult(NUMBER, TITLE, markdown, [], time.perf_counter() - started)


if __name__ == "__main__":
    import argparse  # noqa: PLC0415

    parser = argparse.ArgumentParser(prog="python -m bench.byo_encoder", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5, help="measured rounds (default 5)")
    parser.add_argument("--warm-requests", type=int, default=200, help="short-sentence calls, spread over the rounds")
    args = parser.parse_args()
    print(measured_section(args.rounds, args.warm_requests).markdown)
