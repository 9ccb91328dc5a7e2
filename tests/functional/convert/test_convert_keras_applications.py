"""keras.applications models, one per preprocessing family (caffe: VGG16, tf: MobileNetV2, torch: DenseNet121), built
with weights=None and fitted briefly on real photos: with the module's preset, /classify on raw photos of other
sizes answers as model.predict(<module>.preprocess_input(resized photos)) does; with another family's preset the
served gate refuses the model and names the family that matches."""
from __future__ import annotations

import json
import shutil

import pytest

from function.catalog.registry import ModelRegistry
from tests.support.function_fixtures import make_service
from kit.keras_applications_models import FAMILIES, build_family_model, classify_agreement

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module", params=list(FAMILIES))
def family_model(request, tmp_path_factory):
    directory = tmp_path_factory.mktemp("keras-applications") / FAMILIES[request.param].module
    return request.param, build_family_model(request.param, directory)


def test_the_preset_serves_what_keras_predicts_on_raw_photos(family_model, run_convert, tmp_path):
    name, model = family_model
    family, saved_model = model.family, model.directory
    assert len(set(model.wanted.argmax(axis=1))) >= 3  # a model whose answers vary: agreement means something
    code, out, err = run_convert(saved_model, tmp_path / "models" / name, "--quantization", "float16")
    assert code == 0, err
    assert f"equal keras.applications.{family.module}.preprocess_input on 36 raw images" in out
    assert "the served path was checked: served on 36 raw samples" in out
    manifest = json.loads((tmp_path / "models" / name / "manifest.json").read_text())
    assert manifest["fidelity"]["served"]["passed"] and manifest["fidelity"]["served"]["samples"] == 36
    agreement, labels = classify_agreement(make_service(ModelRegistry(tmp_path / "models")), name, model)
    assert len(model.served) == 36 and agreement >= 0.98, (labels, model.wanted.argmax(axis=1))


def test_another_familys_preset_is_refused_naming_the_family_that_matches(family_model, run_convert, tmp_path):
    name, model = family_model
    family, saved_model = model.family, model.directory
    assert len(set(model.wanted.argmax(axis=1))) >= 3
    wrong = tmp_path / "wrong"
    shutil.copytree(saved_model, wrong)
    sidecar = json.loads((wrong / "sidecar.json").read_text())
    sidecar["preprocessing"]["keras_applications"] = family.wrong_module
    (wrong / "sidecar.json").write_text(json.dumps(sidecar))
    code, _, err = run_convert(wrong, tmp_path / "out", "--quantization", "float16")
    assert code == 2 and err.strip().endswith("[preprocessing_mismatch]"), err
    assert f"your model's answers match {name} preprocessing" in err
    assert "\"preprocessing.keras_applications\"" in err and family.module in err.split("set ")[-1]
    assert not (tmp_path / "out").exists()
