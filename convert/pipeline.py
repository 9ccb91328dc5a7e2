"""One conversion from start to finish: inspect, convert, gate, time, and write OUT_DIR atomically."""
from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import numpy as np

from convert import fidelity, manifest, quantize, report
from convert.errors import ConversionError
from convert.latency import Latency, measure_latencies
from convert.litert_model import LiteRTModel
from convert.output_dir import check_replaceable, staged_output_dir
from convert.quiet import import_tensorflow
from convert.samples import Samples, generate_samples, load_samples
from convert.saved_model_inspect import SavedModelInfo, check_saved_model_dir, load_saved_model, map_input_roles
from convert.sidecar import Sidecar, load_sidecar

# Enough real inputs to measure agreement to a tenth of a percent while keeping the TF reference run short.
MAX_VALIDATION_SAMPLES = 2000


@dataclass
class ModeResult:
    mode: str
    content: bytes
    model: LiteRTModel
    fidelity: fidelity.FidelityResult
    gate_error: ConversionError | None  # why the fidelity gate rejects this model, if it does


class ConversionJob:
    """What every mode of one SavedModel shares: the loaded model, its inputs and the reference answers."""

    def __init__(self, saved_model_dir: Path, representative_path: Path | None = None,
                 log: Callable[[str], None] = print, min_agreement: float | None = None) -> None:
        self._start = time.monotonic()
        self.min_agreement = min_agreement  # None: each mode's own threshold (fidelity.THRESHOLDS)
        self._log = log
        self.saved_model_dir = saved_model_dir
        check_saved_model_dir(saved_model_dir)
        self.sidecar: Sidecar | None = load_sidecar(saved_model_dir)
        self.representative_path = representative_path or (self.sidecar.representative if self.sidecar else None)
        self.stage(f"loading the SavedModel {saved_model_dir}")
        self.info: SavedModelInfo = load_saved_model(saved_model_dir)
        self.roles = map_input_roles(self.info.inputs, self.sidecar.inputs if self.sidecar else None)
        self.name = self.sidecar.name if self.sidecar else saved_model_dir.resolve().name
        self.primary_output = next(iter(self.info.outputs))  # by name: output_0 for a one-output Keras export
        self._check_labels()

    def stage(self, message: str) -> None:
        self._log(f"  [{time.monotonic() - self._start:6.1f}s] {message}")

    def _check_labels(self) -> None:
        if self.sidecar is None:
            return
        units = int(np.prod([dim or 1 for dim in self.info.outputs[self.primary_output].shape[1:]]))
        expected = 2 if units == 1 else units
        if len(self.sidecar.labels) != expected:
            raise ConversionError("bad_sidecar", f"sidecar.json has {len(self.sidecar.labels)} labels but output "
                                  f"'{self.primary_output}' has {units} unit(s): give {expected} labels")

    @cached_property
    def converter_version(self) -> str:
        tf = import_tensorflow()
        return f"tensorflow {tf.__version__}"

    @cached_property
    def validation(self) -> Samples:
        if self.sidecar is None:
            return generate_samples(self.roles, self.info.inputs)
        return load_samples(self.sidecar.samples, self.roles, self.info.inputs, MAX_VALIDATION_SAMPLES)

    @cached_property
    def representative(self) -> Samples | None:
        if self.representative_path is None:
            return None
        return load_samples(self.representative_path, self.roles, self.info.inputs)

    @cached_property
    def reference(self) -> dict[str, np.ndarray]:
        source = "generated" if self.validation.source == "generated" else f"from {self.validation.source}"
        self.stage(f"running the SavedModel on {self.validation.count} inputs {source}")
        return fidelity.reference_outputs(self.info.function, self.validation)

    @cached_property
    def output_kind(self) -> str:
        if self.sidecar is not None:
            return self.sidecar.output
        return fidelity.guess_output_kind(self.reference[self.primary_output])

    def convert(self, mode: str) -> ModeResult:
        """Convert one mode and hold it against the SavedModel; raises ConversionError when no model comes out."""
        self.stage(f"converting to {mode}")
        representative = self.representative if mode == "int8" else None
        content = quantize.convert_saved_model(self.saved_model_dir, mode, representative)
        model = LiteRTModel(content)
        if set(model.outputs) != set(self.info.outputs) or set(model.inputs) != set(self.info.inputs):
            raise ConversionError("converter_failed", "the converted model's signature does not match the "
                                  "SavedModel's: export the Keras model with model.export(DIR)")
        result = fidelity.measure(self.reference, model, self.validation, mode, self.output_kind, self.primary_output,
                                  self.min_agreement)
        verdict = fidelity.gate_error(result, model, mode)
        self.stage(f"{mode}: {len(content) / 1e3:.1f} KB, top-1 agreement {result.top1_agreement:.2%}, "
                   f"gate {'pass' if verdict is None else 'FAIL'}")
        return ModeResult(mode, content, model, result, verdict)

    def float32_size(self) -> int | None:
        """Size of the plain float32 conversion: the yardstick for every size ratio."""
        try:
            return len(quantize.convert_saved_model(self.saved_model_dir, "float32"))
        except ConversionError:
            return None


def _row(result: ModeResult, latency: Latency, float32_size: int | None) -> report.ReportRow:
    size = len(result.content)
    return report.ReportRow(
        mode=result.mode, passed=result.gate_error is None, size_bytes=size,
        size_ratio_vs_float32=round(size / float32_size, 4) if float32_size else None,
        top1_agreement=result.fidelity.top1_agreement, max_abs_diff=result.fidelity.max_abs_diff,
        accuracy=result.fidelity.accuracy, reference_accuracy=result.fidelity.reference_accuracy,
        threshold=result.fidelity.threshold, mean_ms=latency.mean_ms, p50_ms=latency.p50_ms,
        p99_ms=latency.p99_ms, latency_runs=latency.runs,
        error=None if result.gate_error is None else result.gate_error.message)


def _convert_modes(job: ConversionJob,
                   modes: tuple[str, ...]) -> tuple[dict[str, ModeResult], dict[str, ConversionError]]:
    """Every mode that produced a model (gate passed or not), and why the others produced none."""
    results: dict[str, ModeResult] = {}
    failures: dict[str, ConversionError] = {}
    for mode in modes:
        try:
            results[mode] = job.convert(mode)
        except ConversionError as error:
            if len(modes) == 1:
                raise
            failures[mode] = error
            job.stage(f"{mode}: FAILED: {error.message}")
    return results, failures


def _report(job: ConversionJob, served_mode: str, results: dict[str, ModeResult],
            failures: dict[str, ConversionError]) -> report.Report:
    job.stage(f"timing {', '.join(results)} in LiteRT (1 thread, batch 1)")
    latencies = measure_latencies({mode: result.content for mode, result in results.items()}, job.validation.one(0))
    if "float32" in results:
        float32_size = len(results["float32"].content)
    else:  # never convert again a float32 that already failed: the ratio column just stays empty
        float32_size = None if "float32" in failures else job.float32_size()
    conversion_report = report.Report(
        name=job.name, saved_model=job.saved_model_dir.as_posix(), served_mode=served_mode,
        samples={"source": job.validation.source, "count": job.validation.count}, converter=job.converter_version)
    for mode in quantize.MODES:
        if mode in results:
            conversion_report.rows.append(_row(results[mode], latencies[mode], float32_size))
        elif mode in failures:
            conversion_report.rows.append(report.ReportRow(mode=mode, passed=False, error=failures[mode].message))
    return conversion_report


def run(saved_model_dir: Path, out_dir: Path, mode: str = quantize.DEFAULT_MODE,
        representative_path: Path | None = None, compare: bool = False,
        log: Callable[[str], None] = print, min_agreement: float | None = None) -> report.Report:
    """Convert SAVED_MODEL_DIR into OUT_DIR in `mode` (and, with compare, measure the other modes too)."""
    if mode not in quantize.MODES:
        raise ConversionError("bad_mode", f"unknown quantization {mode!r}: choose one of {', '.join(quantize.MODES)}")
    check_replaceable(out_dir)
    if min_agreement is not None and not 0.0 < min_agreement <= 1.0:
        raise ConversionError("bad_min_agreement", f"--min-agreement must be a fraction in (0, 1], not {min_agreement}")
    job = ConversionJob(saved_model_dir, representative_path, log, min_agreement)
    results, failures = _convert_modes(job, quantize.MODES if compare else (mode,))
    if not compare and results[mode].gate_error is not None:
        raise results[mode].gate_error  # fail before spending time on timing a model that will not be written
    conversion_report = _report(job, mode, results, failures)
    log(report.markdown_table(conversion_report))
    if mode in failures:
        raise failures[mode]
    served = results[mode]
    if served.gate_error is not None:
        raise served.gate_error
    model_manifest = manifest.build_manifest(
        name=job.name, sidecar=job.sidecar, output_kind=job.output_kind, roles=job.roles, content=served.content,
        model=served.model, mode=mode, saved_model_digest=job.info.digest, converter=job.converter_version,
        fidelity=served.fidelity)
    with staged_output_dir(out_dir) as staging:
        manifest.write_model_files(staging, served.content, model_manifest, job.sidecar)
        report.write_report(staging, conversion_report)
    job.stage(f"wrote {out_dir} ({mode}, sha256 {model_manifest['model_sha256'][:12]})")
    return conversion_report
