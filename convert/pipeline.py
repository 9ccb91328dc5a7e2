"""One conversion from start to finish: check, probe, convert, gate, time, and write OUT_DIR atomically."""
from __future__ import annotations

import contextlib
import json
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import cached_property
from pathlib import Path

import numpy as np

from convert import (agreement_interval, inference_mode, manifest, mixed_precision, mode_choice, quantize, report,
                     report_samples, runtime_measure, runtime_report)
from convert.errors import ConversionError
from convert.function_check import verify_with_function
from convert.fidelity.base import Gate, GateResult
from convert.fidelity.runs import converted_outputs, reference_outputs
from convert.latency import Latency, measure_latencies
from convert.input_bounds import input_bounds
from convert.tokenizer_fit import check_tokenizer_fits
from convert.litert_model import VARIABLE_OPS, LiteRTModel
from convert.output_dir import carry_over_model, check_replaceable, served_mode_in, staged_output_dir
from convert.preprocessing_check import (check_output, check_preset, describe, diagnose,
                                         matching_preprocessing)
from convert.progress import progress
from convert.quiet import import_tensorflow
from convert.npz_reader import read_arrays
from convert.raw_samples import RawSamples, load_raw_samples, raw_items
from convert.samples import Samples, check_value_ranges, generate_samples, load_samples
from convert.served_gate import NOT_CHECKED, SERVED_COLUMN, Served, ServedGate, served_error
from convert.saved_model_inspect import SavedModelInfo, check_saved_model_dir, load_saved_model
from convert.sidecar import Sidecar
from convert.sidecar_fields import served_name
from convert.sidecar_inference import check, has_raw_samples, infer, signature_facts
from convert.sidecar_reader import load_sidecar, parse_sidecar
from convert.tasks import TASK_KINDS, WITHOUT_SIDECAR
from convert.tasks.base import Binding

# Enough real inputs to measure agreement to a tenth of a percent while keeping the TF reference run short.
MAX_VALIDATION_SAMPLES = 2000
# Gate numbers report.json keeps and the manifest leaves out (convert/agreement_interval.py adds the last two).
REPORT_ONLY = frozenset({"worst", "intervals", "evidence"})
WEIGHTLESS_ADVICE = ("the converted model has no weights (it reads uninitialised variables): the SavedModel was "
                     "written with tf.saved_model.save(); export the Keras model with model.export(DIR)")


@dataclass
class ModeResult:
    mode: str
    content: bytes
    model: LiteRTModel
    fidelity: GateResult
    served: GateResult | None  # the served gate on raw samples; None when there are none
    serves_raw_inputs: bool  # an image or text model: clients send raw inputs, not tensors
    float_layers: tuple[str, ...] | None = None  # mixed: the fully connected layers kept float32
    outputs: dict[str, np.ndarray] | None = None  # its answers to the validation inputs, for the report's samples

    @property
    def gate_error(self) -> ConversionError | None:
        if not self.fidelity.passed or self.served is None or self.served.passed:
            return self.fidelity.error(self.mode)
        return served_error(self.mode, self.served)

    @property
    def metrics(self) -> dict:
        """The tensor gate's numbers, and (image and text models) the served gate's under "served"."""
        if not self.serves_raw_inputs:
            return self.fidelity.metrics
        served = {"checked": False} if self.served is None else {**self.served.metrics, "passed": self.served.passed}
        return {**self.fidelity.metrics, "served": served}

    def as_manifest(self) -> dict:
        """The metrics without what report.json alone keeps: the served gate's worst samples, the intervals and the
        evidence of the verdict rule (REPORT_ONLY)."""
        metrics = {key: value for key, value in self.metrics.items() if key not in REPORT_ONLY}
        if isinstance(metrics.get("served"), dict):
            metrics["served"] = {key: value for key, value in metrics["served"].items() if key not in REPORT_ONLY}
        return {**metrics, "passed": self.gate_error is None}

    @property
    def shortfall(self) -> str | None:
        """The verdict rule's "not enough samples" (convert/agreement_interval.py), tensor gate or served gate."""
        served = None if self.served is None else agreement_interval.shortfall(self.served.metrics)
        tensor = agreement_interval.shortfall(self.fidelity.metrics)
        return "; ".join(f"{where}{text}" for where, text in (("", tensor), ("raw samples: ", served)) if text) or None


class ConversionJob:
    """What every mode of one SavedModel shares: the checked sidecar, its binding to the signature, the inputs,
    the reference answers and the gate. Constructing it runs every check that needs no conversion."""

    def __init__(self, saved_model_dir: Path, representative_path: Path | None = None,
                 log: Callable[[str], None] = print, min_agreement: float | None = None,
                 source: Path | None = None, name: str | None = None, settle_preprocessing: bool = False) -> None:
        self._start = time.monotonic()
        self.settle_preprocessing = settle_preprocessing  # an inferred image preprocessing, found on the raw samples
        self._log = log
        self.saved_model_dir = saved_model_dir
        self.source = source or saved_model_dir  # what the user pointed convert at
        check_saved_model_dir(saved_model_dir)
        self.sidecar: Sidecar | None = load_sidecar(saved_model_dir)
        self.task = TASK_KINDS[self.sidecar.task] if self.sidecar else WITHOUT_SIDECAR
        self.check_min_agreement(min_agreement)
        self.min_agreement = min_agreement
        self.representative_path = representative_path or (self.sidecar.representative if self.sidecar else None)
        self.stage(f"loading the SavedModel {saved_model_dir}")
        with progress().step("loading the SavedModel"):
            self.info: SavedModelInfo = load_saved_model(saved_model_dir)
        inference_mode.check_graph(self.source, self.info.function)
        if self.sidecar is None and has_raw_samples(saved_model_dir):
            self.sidecar = self.inferred_sidecar(source.stem if source else saved_model_dir.resolve().name)
            self.task = TASK_KINDS[self.sidecar.task]
            self.check_min_agreement(min_agreement)
            self.representative_path = representative_path or self.sidecar.representative
        self.binding: Binding = self.task.bind(self.sidecar, self.info)
        # The served name: --name, else the sidecar's, else the SavedModel's (or its .keras file's) name.
        self.name = name or (self.sidecar.name if self.sidecar else
                             (source.stem if source else saved_model_dir.resolve().name))

    def check_min_agreement(self, min_agreement: float | None) -> None:
        if min_agreement is not None and not self.task.uses_min_agreement:
            raise ConversionError("bad_min_agreement", f"--min-agreement sets the top-1 agreement of classifiers; "
                                  f"a {self.task.name} model's gate has fixed bounds (docs/conversion.md): drop it")

    def inferred_sidecar(self, stem: str) -> Sidecar:
        """No sidecar.json but raw samples + expected beside the SavedModel: the sidecar inferred from its signature,
        `expected` and the files beside it (convert/sidecar_inference.py)."""
        inference = infer(signature_facts(self.info, self.saved_model_dir), self.saved_model_dir, stem)
        check(inference)
        for line in inference.describe():
            self.stage(f"sidecar {line}")
        self.settle_preprocessing = inference.settle_preprocessing
        return parse_sidecar(inference.data, self.saved_model_dir)

    def stage(self, message: str) -> None:
        with progress().paused():
            self._log(f"  [{time.monotonic() - self._start:6.1f}s] {message}")

    @cached_property
    def converter_version(self) -> str:
        tf = import_tensorflow()
        return f"tensorflow {tf.__version__}"

    @cached_property
    def float32_probe(self) -> bytes:
        """The plain float32 conversion, made before any other mode: a model written with tf.saved_model.save()
        converts to one that reads uninitialised variables, which every mode would inherit (int8 calibration then
        dies on READ_VARIABLE), so it is refused here with one piece of advice. Also the size yardstick."""
        self.stage("converting to float32 (checks the exported weights; the size yardstick)")
        content = quantize.convert_saved_model(self.saved_model_dir, "float32")
        if VARIABLE_OPS & LiteRTModel(content).op_names():
            raise ConversionError("weightless_export", WEIGHTLESS_ADVICE)
        return content

    @property
    def serves_raw_inputs(self) -> bool:
        return self.sidecar is not None and self.sidecar.preprocessing is not None

    @cached_property
    def raw(self) -> RawSamples | None:
        """The validation file's raw samples and expected answers (convert/raw_samples.py), if any."""
        if self.sidecar is None:
            return None
        return load_raw_samples(self.sidecar.samples, read_arrays(self.sidecar.samples), self.sidecar.raw_images,
                                next(iter(self.binding.outputs.values())))

    @cached_property
    def served_gate(self) -> ServedGate | None:
        if self.raw is None:
            return None
        return ServedGate(Served(self.name, self.sidecar, self.binding, self.sidecar.output, self.raw),
                          self.min_agreement)

    @cached_property
    def validation_is_raw(self) -> bool:
        """The tensor gate's inputs are the function's preprocessing of the raw samples (no tensors were given)."""
        return self.served_gate is not None and not any(
            key.startswith("inputs_") for key in read_arrays(self.sidecar.samples))

    @cached_property
    def validation(self) -> Samples:
        if self.sidecar is None:
            return generate_samples(self.binding.inputs, self.info.inputs)
        if self.validation_is_raw:
            # Raw samples alone: the tensor gate's inputs are what the function makes of them.
            self.stage(f"preprocessing {self.raw.count} raw samples with the function's own code")
            probe = self.float32_probe
            inputs = self.served_gate.model_inputs(probe, LiteRTModel(probe))
            return Samples(inputs=inputs, labels=None, source=f"{self.sidecar.samples.name} (raw samples)")
        return load_samples(self.sidecar.samples, self.binding.inputs, self.info.inputs, MAX_VALIDATION_SAMPLES)

    @cached_property
    def representative(self) -> Samples | None:
        """int8's calibration inputs: the file's inputs_<role> tensors, or, when it holds only raw samples, what the
        function's own preprocessing makes of them (the validation file's are the validation inputs themselves)."""
        path = self.representative_path
        if path is None:
            return None
        if self.served_gate is not None and path.is_file():
            arrays = read_arrays(path)
            if not any(key.startswith("inputs_") for key in arrays):
                if path == self.sidecar.samples:
                    return self.validation
                found = raw_items(path.name, arrays)
                if found is not None:
                    self.stage(f"preprocessing {len(found[1])} raw samples of {path.name} with the function's own "
                               "code (int8 calibration)")
                    probe = self.float32_probe
                    inputs = self.served_gate.model_inputs(probe, LiteRTModel(probe), found[1])
                    return Samples(inputs=inputs, labels=None, source=f"{path.name} (raw samples)")
        return load_samples(path, self.binding.inputs, self.info.inputs)

    @cached_property
    def reference(self) -> dict[str, np.ndarray]:
        source = "generated" if self.validation.source == "generated" else f"from {self.validation.source}"
        self.stage(f"running the SavedModel on {self.validation.count} inputs {source}")
        inference_mode.check_answers(self.source, self.info.function, self.validation.inputs)
        return reference_outputs(self.info.function, self.validation)

    @cached_property
    def gate(self) -> Gate:
        return self.task.gate(self.sidecar, self.binding, self.min_agreement, self.reference)

    @property
    def output_kind(self) -> str | None:
        """probabilities | logits for classifiers, else None; without a sidecar, the gate's guess."""
        if self.sidecar is not None:
            return self.sidecar.output
        return self.gate.output_kind

    def settle(self) -> None:
        """An image preprocessing convert inferred (no Rescaling inside the model): the one under which the float32
        model, served, answers the raw samples as expected does, before anything is preprocessed with it."""
        if not self.settle_preprocessing or self.served_gate is None or self.raw.kind != "image":
            return
        probe = self.float32_probe
        model = LiteRTModel(probe)
        if self.served_gate.judge(probe, model, "float32").passed:
            self.stage(f"preprocessing: {describe(self.sidecar.preprocessing)} answers the raw samples as expected")
            return
        self.stage("finding the preprocessing that made expected on the raw samples")
        found = matching_preprocessing(self.served_gate, probe, model, self.sidecar.preprocessing)
        if found is None:
            return  # float32_served refuses with everything that was tried
        fix, preprocessing, result = found
        self.sidecar = replace(self.sidecar, preprocessing=preprocessing)
        del self.__dict__["served_gate"]
        self.stage(f"preprocessing inferred from the raw samples against expected: {fix} ({result.summary})")

    def check_samples(self, modes: tuple[str, ...]) -> None:
        """Read the .npz files now: a sample that does not fit the signature fails in a second, not after the
        minutes a large model takes to convert."""
        self.settle()
        self.validation  # noqa: B018
        if "int8" in modes:
            self.representative  # noqa: B018
        self.served_gate  # noqa: B018  (raw samples are read and checked now too)

    @cached_property
    def float32_served(self) -> GateResult | None:
        """The float32 model answering the raw samples as the function will; if it disagrees with expected, no
        quantization is to blame: the preprocessing is, and the known modes are tried to say which one fits."""
        if self.served_gate is None:
            return None
        check_output(self.served_gate)
        compared = check_preset(self.served_gate, self.sidecar.preprocessing)
        if compared:
            self.stage(f"the preset's pixels equal keras.applications."
                       f"{self.sidecar.preprocessing['keras_applications']}.preprocess_input on {compared} raw images")
        self.stage(f"answering {self.raw.count} raw samples with the function's own code and the float32 model")
        probe = self.float32_probe
        result = self.served_gate.judge(probe, LiteRTModel(probe), "float32")
        self.stage(f"float32: {result.summary}")
        if not result.passed:
            self.stage(f"float32: {result.summary}: trying the known preprocessing modes")
            raise diagnose(self.served_gate, probe, LiteRTModel(probe), self.sidecar.preprocessing, result)
        return result

    def raw_outputs(self, result: ModeResult) -> dict[str, np.ndarray] | None:
        """A mode's model on the function's preprocessing of the raw samples (the report's samples; not a gate)."""
        if self.raw is None:
            return None
        if self.validation_is_raw:
            return result.outputs
        return converted_outputs(result.model, Samples(self.raw_model_inputs, None, self.raw.source), result.mode)

    @cached_property
    def raw_model_inputs(self) -> dict[str, np.ndarray]:
        probe = self.float32_probe
        return self.served_gate.model_inputs(probe, LiteRTModel(probe))

    # The mixed mode ranks layers on this many validation samples (a run per layer): minilm ranks its 36 the same on
    # 8 as on 32, 3x sooner; the gate then judges on every sample.
    MIXED_RANKING_SAMPLES = 8

    @cached_property
    def mixed(self) -> mixed_precision.Choice:
        """The float32 model with int8 weights on every fully connected layer but the fewest the gate needs."""
        self.stage("converting to mixed (int8 weights on the fully connected layers the gate allows)")
        ranking = self.validation.first(self.MIXED_RANKING_SAMPLES)
        reference = {name: array[:ranking.count] for name, array in self.reference.items()}

        def error(content: bytes) -> float:
            return mixed_precision.output_error(reference, converted_outputs(LiteRTModel(content), ranking, "mixed"))

        def passes(content: bytes) -> bool:
            model = LiteRTModel(content)
            if not self.gate.judge(self.reference, converted_outputs(model, self.validation, "mixed"),
                                   self.validation, "mixed").passed:
                return False
            return self.served_gate is None or self.served_gate.judge(content, model, "mixed").passed

        choice = mixed_precision.choose(mixed_precision.WeightQuantizer(self.float32_probe), error, passes,
                                        self.stage)
        kept = f": {', '.join(choice.float_layers)}" if choice.float_layers else ""
        self.stage(f"mixed: {choice.layers - len(choice.float_layers)} of {choice.layers} fully connected layers "
                   f"int8, {len(choice.float_layers)} float32{kept}")
        return choice

    def convert(self, mode: str) -> ModeResult:
        """Convert one mode and hold it against the SavedModel; raises ConversionError when no model comes out."""
        if mode == "float32":
            content = self.float32_probe
        elif mode == "mixed":
            content = self.mixed.content
        else:
            representative = self.representative if mode == "int8" else None
            if representative is not None:  # before calibrating: a wrong scale would only show as a failed gate
                check_value_ranges(representative, self.validation,
                                   [name for name in self.binding.inputs.values() if self.info.inputs[name].is_float])
            self.stage(f"converting to {mode}")
            content = quantize.convert_saved_model(self.saved_model_dir, mode, representative)
        model = LiteRTModel(content)
        if set(model.outputs) != set(self.info.outputs) or set(model.inputs) != set(self.info.inputs):
            raise ConversionError("converter_failed", "the converted model's signature does not match the "
                                  "SavedModel's: export the Keras model with model.export(DIR)")
        outputs = converted_outputs(model, self.validation, mode)
        result = self.gate.judge(self.reference, outputs, self.validation, mode)
        agreement_interval.annotate(result.metrics)
        served = None
        if self.served_gate is not None:
            served = self.float32_served if mode == "float32" else self.served_gate.judge(content, model, mode)
            agreement_interval.annotate(served.metrics, served.per_sample)
        outcome = ModeResult(mode, content, model, result, served, self.serves_raw_inputs,
                             self.mixed.float_layers if mode == "mixed" else None, outputs)
        summary = result.summary + (f", {served.summary}" if served else "")
        gate = "pass" if outcome.gate_error is None else "FAIL"
        self.stage(f"{mode}: {len(content) / 1e3:.1f} KB, {summary}, gate {gate}")
        return outcome


def _row(result: ModeResult, latency: Latency, float32_size: int) -> report.ReportRow:
    size = len(result.content)
    error = result.gate_error
    return report.ReportRow(
        mode=result.mode, passed=error is None, size_bytes=size, size_ratio_vs_float32=round(size / float32_size, 4),
        fidelity=result.metrics, mean_ms=latency.mean_ms, p50_ms=latency.p50_ms, p99_ms=latency.p99_ms,
        latency_runs=latency.runs, error=None if error is None else error.message, shortfall=result.shortfall,
        float32_layers=None if result.float_layers is None else list(result.float_layers))


def _convert_modes(job: ConversionJob,
                   modes: tuple[str, ...]) -> tuple[dict[str, ModeResult], dict[str, ConversionError]]:
    """Every mode that produced a model (gate passed or not), and why the others produced none."""
    results: dict[str, ModeResult] = {}
    failures: dict[str, ConversionError] = {}
    counted = progress().step("--compare: modes", total=len(modes)) if len(modes) > 1 else contextlib.nullcontext()
    with counted as step:
        for mode in modes:
            try:
                results[mode] = job.convert(mode)
            except ConversionError as error:
                if len(modes) == 1:
                    raise
                failures[mode] = error
                job.stage(f"{mode}: FAILED: {error.message}")
            if step is not None:
                step.advance()
    return results, failures


def _report(job: ConversionJob, served_mode: str | None, results: dict[str, ModeResult],
            failures: dict[str, ConversionError]) -> report.Report:
    job.stage(f"timing {', '.join(results)} in LiteRT (1 thread, batch 1)")
    latencies = measure_latencies({mode: result.content for mode, result in results.items()}, job.validation.one(0))
    float32_size = len(job.float32_probe)
    conversion_report = report.Report(
        name=job.name, task=job.sidecar.task if job.sidecar else None, saved_model=job.source.as_posix(),
        served_mode=served_mode, samples={"source": job.validation.source, "count": job.validation.count,
                                          "raw": None if job.raw is None else {"source": job.raw.source,
                                                                               "kind": job.raw.kind,
                                                                               "count": job.raw.count}},
        converter=job.converter_version,
        columns=job.gate.columns + ((SERVED_COLUMN,) if job.serves_raw_inputs else ()))
    for mode in quantize.MODES:
        if mode in results:
            conversion_report.rows.append(_row(results[mode], latencies[mode], float32_size))
        elif mode in failures:
            conversion_report.rows.append(report.ReportRow(mode=mode, passed=False, error=failures[mode].message))
    return conversion_report


def _choose(job: ConversionJob, conversion_report: report.Report, results: dict[str, ModeResult],
            failures: dict[str, ConversionError]) -> str:
    """No --quantization: the mode convert/mode_choice.py picks from the measured rows, recorded in the report; when
    no mode passes, the float32 conversion's refusal (else the first mode's)."""
    choice = mode_choice.choose(conversion_report.rows)
    if choice.mode is None:
        errors = [results[mode].gate_error if mode in results else failures[mode]
                  for mode in quantize.MODES if mode in results or mode in failures]
        raise errors[0]
    conversion_report.served_mode = choice.mode
    conversion_report.choice = choice.as_dict()
    job.stage(f"chose {choice.mode}: {choice.reason}")
    return choice.mode


def warn(message: str) -> None:
    """A verdict the user must know about before serving, on stderr (the model is still written)."""
    print(f"convert: warning: {message}", file=sys.stderr)


def run(saved_model_dir: Path, out_dir: Path, mode: str | None = None,
        representative_path: Path | None = None, compare: bool = False,
        log: Callable[[str], None] = print, min_agreement: float | None = None,
        source: Path | None = None, name: str | None = None, settle_preprocessing: bool = False) -> report.Report:
    """Convert SAVED_MODEL_DIR into OUT_DIR in `mode` (default: the mode chosen by measurement, convert/mode_choice.py)
    and, with compare, measure every mode. compare without a mode leaves a model already in OUT_DIR as it is and
    rewrites only its report. `source`: the file the SavedModel was exported from (a .keras file), named in the
    report instead."""
    if mode is not None and mode not in quantize.MODES:
        raise ConversionError("bad_mode", f"unknown quantization {mode!r}: choose one of {', '.join(quantize.MODES)}")
    check_replaceable(out_dir)
    kept_mode = served_mode_in(out_dir) if compare and mode is None else None
    mode = kept_mode or mode  # None: chosen by measurement among every mode
    if min_agreement is not None and not 0.0 < min_agreement <= 1.0:
        raise ConversionError("bad_min_agreement", f"--min-agreement must be a fraction in (0, 1], not {min_agreement}")
    if name is not None:
        served_name(name)
    job = ConversionJob(saved_model_dir, representative_path, log, min_agreement, source, name, settle_preprocessing)
    modes = quantize.MODES if compare or mode is None else (mode,)
    job.check_samples(modes)
    job.float32_probe  # noqa: B018  (before any mode-specific conversion: the same advice in every mode)
    job.float32_served  # noqa: B018  (a preprocessing mismatch is refused before any other mode is converted)
    results, failures = _convert_modes(job, modes)
    if not compare and mode is not None and results[mode].gate_error is not None:
        raise results[mode].gate_error  # fail before spending time on timing a model that will not be written
    conversion_report = _report(job, mode, results, failures)
    conversion_report.model_kept = kept_mode is not None
    if mode is None:
        mode = _choose(job, conversion_report, results, failures)
    if compare:
        job.stage(f"serving {', '.join(results)} with the function in fresh processes (cold start, first invoke, "
                  "warm at 1 and 2 threads, peak RSS)")
        conversion_report.runtime = runtime_measure.compare_runtime(job, results)
    log(report.markdown_table(conversion_report))
    if conversion_report.choice is not None:
        log(mode_choice.choice_text(conversion_report.choice))
    if conversion_report.runtime is not None:
        log(runtime_report.markdown(conversion_report.runtime))
    if kept_mode is not None:
        _write_comparison(job, out_dir, conversion_report, report_samples.collect(job, mode, results))
        return conversion_report
    if mode in failures:
        raise failures[mode]
    served = results[mode]
    if served.gate_error is not None:
        raise served.gate_error
    if served.shortfall is not None:
        warn(f"the {mode} model's verdict rests on too few samples: {served.shortfall} [not_enough_samples]")
    samples = report_samples.collect(job, mode, results)
    with progress().step("input bounds"):
        bounds = input_bounds(served.content)
    model_manifest = manifest.build_manifest(
        name=job.name, sidecar=job.sidecar, output_kind=job.output_kind, binding=job.binding, content=served.content,
        model=served.model, mode=mode, saved_model_digest=job.info.digest, converter=job.converter_version,
        fidelity=served.as_manifest(), bounds=bounds)
    with staged_output_dir(out_dir) as staging:
        manifest.write_model_files(staging, served.content, model_manifest, job.sidecar)
        report.write_report(staging, conversion_report)
        report_samples.write(staging, samples)
        check_tokenizer_fits(staging)  # before any sample: a tokenizer the function cannot use is the user's
        checked = verify_with_function(staging, served.model, job.validation)
        job.stage(f"the function loads {out_dir.name} and answers {checked} validation samples as the model does")
    job.stage(f"wrote {out_dir} ({mode}, sha256 {model_manifest['files'][manifest.MODEL_FILE][:12]})")
    if job.serves_raw_inputs and job.served_gate is None:
        job.stage(f"note: {NOT_CHECKED}")
    elif job.served_gate is not None:
        job.stage(f"the served path was checked: {served.served.summary}")
    return conversion_report


def _write_comparison(job: ConversionJob, out_dir: Path, conversion_report: report.Report,
                      samples: report_samples.ReportSamples | None) -> None:
    """--compare without --quantization over an earlier conversion: its model files stay byte for byte as they
    were (carried into the new directory unchanged), only the report files are new; still one atomic swap."""
    with staged_output_dir(out_dir) as staging:
        kept = carry_over_model(out_dir, staging)
        report.write_report(staging, conversion_report)
        report_samples.write(staging, samples)
    job.stage(f"kept {', '.join(kept)} in {out_dir} as they were (the {conversion_report.served_mode} model); "
              f"wrote the comparison to its report files (--quantization MODE would replace the model)")
    if _source_digest(out_dir) != job.info.digest:
        job.stage(f"note: the model kept in {out_dir} was converted from another SavedModel than this comparison's")


def _source_digest(out_dir: Path) -> str | None:
    try:
        return json.loads((out_dir / manifest.MANIFEST_FILE).read_text(encoding="utf-8"))["source"][
            "saved_model_sha256"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
