"""`tabular`: a feature model with three inputs and two outputs, on scikit-learn's bundled diabetes data set.

442 patients, ten baseline measurements each, and a quantitative measure of disease progression one year later
(`load_diabetes(scaled=False)`: the raw units, so a client sends what a clinic records). The model takes them as
three named tensors of two dtypes and answers two named tensors of two shapes, so both protocols' multi-tensor
paths run on a real model:

  inputs   vitals  float32 [batch, 3]  age (years), BMI (kg/m2), mean blood pressure (mm Hg)
           sex     int32   [batch]     1 or 2, as the data set codes it
           serum   float32 [batch, 6]  the six blood serum measurements s1..s6
  outputs  progression  float32 [batch, 1]  the predicted progression score (the data set's target, ~25-346)
           risk         float32 [batch, 3]  probabilities of the low / medium / high tertile of progression

Normalisation lives inside the model (Keras Normalization layers adapted on the training split), so a client
sends raw values and nothing else has to know the training statistics.
"""
from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np

from saved_model.recipes.common import SEED, seed_everything, stage, write_saved_model

NAME = "tabular"
TEST_FRACTION = 0.2
EPOCHS = 100
HIDDEN_UNITS = 16
# Small data: one small hidden layer with L2 and dropout. Tried: 32+16 units for 300 epochs overfit (test MAE 50.5,
# worse than least squares' 44.2); 8 to 32 units, 60 to 200 epochs, L2 0 to 1e-2 all landed at 42.5-43.8.
L2 = 1e-3
VITALS = ("age", "bmi", "bp")
SERUM = ("s1", "s2", "s3", "s4", "s5", "s6")
RISK_LEVELS = ("low", "medium", "high")
INPUTS = ("vitals", "sex", "serum")
OUTPUTS = ("progression", "risk")
REFERENCE_FILE = "reference_outputs.npz"  # the SavedModel's own outputs on validation.npz, for serving tests


def load_split(seed: int = SEED) -> tuple[dict, dict, np.ndarray, np.ndarray, np.ndarray]:
    """(train inputs, test inputs, train target, test target, tertile edges of the training target)."""
    from sklearn.datasets import load_diabetes  # noqa: PLC0415
    from sklearn.model_selection import train_test_split  # noqa: PLC0415

    data = load_diabetes(scaled=False)
    columns = {name: data.data[:, i] for i, name in enumerate(data.feature_names)}
    inputs = {
        "vitals": np.stack([columns[name] for name in VITALS], axis=1).astype(np.float32),
        "sex": columns["sex"].astype(np.int32),
        "serum": np.stack([columns[name] for name in SERUM], axis=1).astype(np.float32),
    }
    target = data.target.astype(np.float32)
    train_index, test_index = train_test_split(np.arange(len(target)), test_size=TEST_FRACTION, random_state=seed)
    train = {name: value[train_index] for name, value in inputs.items()}
    test = {name: value[test_index] for name, value in inputs.items()}
    edges = np.percentile(target[train_index], [100 / 3, 200 / 3]).astype(np.float32)
    return train, test, target[train_index], target[test_index], edges


def risk_level(target: np.ndarray, edges: np.ndarray) -> np.ndarray:
    return np.digitize(target, edges).astype(np.int64)


def make_model(train: dict, train_target: np.ndarray):
    import keras  # noqa: PLC0415

    vitals = keras.Input(shape=(len(VITALS),), name="vitals")
    sex = keras.Input(shape=(), dtype="int32", name="sex")
    serum = keras.Input(shape=(len(SERUM),), name="serum")
    vitals_norm = keras.layers.Normalization(name="vitals_norm")
    vitals_norm.adapt(train["vitals"])
    serum_norm = keras.layers.Normalization(name="serum_norm")
    serum_norm.adapt(train["serum"])
    # 1 or 2 -> -1 or +1: the one binary feature, centred without training statistics.
    sex_feature = keras.layers.Reshape((1,), name="sex_column")(
        keras.ops.cast(sex, "float32") * 2.0 - 3.0)
    features = keras.layers.Concatenate(name="features")([vitals_norm(vitals), sex_feature, serum_norm(serum)])
    l2 = keras.regularizers.L2(L2)
    hidden = keras.layers.Dense(HIDDEN_UNITS, activation="relu", kernel_regularizer=l2, name="hidden")(features)
    hidden = keras.layers.Dropout(0.2, name="dropout")(hidden)
    # The regression head learns the standardised target; the last layer scales it back to the data set's units.
    mean, std = float(train_target.mean()), float(train_target.std())
    standardised = keras.layers.Dense(1, kernel_regularizer=l2, name="progression_standardised")(hidden)
    progression = keras.layers.Rescaling(std, offset=mean, name="progression")(standardised)
    risk = keras.layers.Dense(len(RISK_LEVELS), activation="softmax", kernel_regularizer=l2, name="risk")(hidden)
    model = keras.Model([vitals, sex, serum], {"progression": progression, "risk": risk}, name=NAME)
    model.compile(optimizer=keras.optimizers.Adam(3e-3),
                  loss={"progression": "mse", "risk": "sparse_categorical_crossentropy"},
                  # mse on raw units would drown the classification loss: weight it back to standardised scale
                  loss_weights={"progression": 1.0 / std ** 2, "risk": 1.0})
    return model


def baseline_mae(train: dict, test: dict, train_target: np.ndarray, test_target: np.ndarray) -> float:
    """Ordinary least squares on the same ten raw features: what the network has to beat."""
    from sklearn.linear_model import LinearRegression  # noqa: PLC0415

    def table(inputs: dict) -> np.ndarray:
        return np.concatenate([inputs["vitals"], inputs["sex"][:, None], inputs["serum"]], axis=1)

    fitted = LinearRegression().fit(table(train), train_target)
    return float(np.mean(np.abs(fitted.predict(table(test)) - test_target)))


def saved_model_outputs(directory: Path, inputs: dict) -> dict[str, np.ndarray]:
    """The exported SavedModel's own serving_default outputs, as TensorFlow computes them."""
    import tensorflow as tf  # noqa: PLC0415

    signature = tf.saved_model.load(str(directory)).signatures["serving_default"]
    outputs = signature(**{name: tf.constant(value) for name, value in inputs.items()})
    return {name: tensor.numpy() for name, tensor in outputs.items()}


def sidecar(metrics: dict) -> dict:
    return {
        "schema": 1,
        "name": NAME,
        "task": "tensor",
        "inputs": list(INPUTS),
        "outputs": list(OUTPUTS),
        "metrics": metrics,
        "description": "Diabetes progression one year ahead from ten baseline measurements (scikit-learn's "
                       "load_diabetes, raw units): vitals [age, bmi, bp], sex (1 or 2), serum [s1..s6] -> "
                       "progression score and low/medium/high risk probabilities.",
    }


def build(out_dir: Path) -> None:
    stage(f"{NAME}: loading scikit-learn's diabetes data set")
    seed_everything()
    train, test, train_target, test_target, edges = load_split()
    stage(f"{NAME}: training a two-headed MLP on {len(train_target)} patients ({EPOCHS} epochs)")
    model = make_model(train, train_target)
    model.fit(train, {"progression": train_target, "risk": risk_level(train_target, edges)},
              epochs=EPOCHS, batch_size=32, verbose=0, shuffle=True)
    predicted = model.predict(test, verbose=0)
    mae = float(np.mean(np.abs(predicted["progression"][:, 0] - test_target)))
    accuracy = float(np.mean(predicted["risk"].argmax(axis=1) == risk_level(test_target, edges)))
    baseline = baseline_mae(train, test, train_target, test_target)
    stage(f"{NAME}: test MAE {mae:.1f} (least squares {baseline:.1f}), risk tertile accuracy {accuracy:.3f} "
          f"on {len(test_target)} held-out patients")
    metrics = {"test_mae": round(mae, 2), "least_squares_test_mae": round(baseline, 2),
               "risk_accuracy": round(accuracy, 4), "risk_edges": [round(float(e), 2) for e in edges]}
    with tempfile.TemporaryDirectory(prefix=f"{NAME}-reference-") as tmp:
        # The reference comes from an export of this very model, loaded back by TensorFlow: the SavedModel's own
        # answers, not Keras's, computed before the directory is swapped in so it is never missing.
        export = Path(tmp) / "export"
        model.export(str(export), verbose=False)
        reference = saved_model_outputs(export, test)
        np.savez_compressed(Path(tmp) / REFERENCE_FILE, **{f"outputs_{k}": v for k, v in reference.items()})
        write_saved_model(
            model,
            out_dir,
            sidecar(metrics),
            validation={f"inputs_{name}": value for name, value in test.items()},
            representative={f"inputs_{name}": value for name, value in train.items()},
            extra_files={REFERENCE_FILE: Path(tmp) / REFERENCE_FILE},
        )
