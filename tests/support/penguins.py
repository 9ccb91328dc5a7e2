"""A structured-data model as keras.io's "Structured data classification from scratch" builds one, on the Palmer
penguins (PyPI `palmerpenguins`, installed --no-deps and read as a CSV file, never imported: it would pull pandas).

One named keras.Input per column: the string columns `island` (StringLookup, int -> Embedding) and `sex`
(StringLookup, one_hot; "NA" is a category of its own), the integer column `year` (IntegerLookup, one_hot) and four
numeric columns (Normalization), concatenated into Dense layers that answer the species (softmax over three).
"""
from __future__ import annotations

import csv

import numpy as np

from saved_model.recipes.common import package_file

SPECIES = ("Adelie", "Chinstrap", "Gentoo")
STRINGS = ("island", "sex")
INTEGERS = ("year",)
NUMBERS = ("bill_length_mm", "bill_depth_mm", "flipper_length_mm", "body_mass_g")
COLUMNS = STRINGS + INTEGERS + NUMBERS
HELD_OUT = 64  # the last rows of a fixed shuffle


def load_rows() -> tuple[dict[str, np.ndarray], np.ndarray]:
    """Every row with its four measurements (two have none): columns by name, and the species index."""
    path = package_file("palmerpenguins", "palmerpenguins/data/penguins.csv")
    with path.open(newline="", encoding="utf-8") as handle:
        rows = [row for row in csv.DictReader(handle) if all(row[name] != "NA" for name in NUMBERS)]
    columns = {name: np.array([row[name] for row in rows]) for name in STRINGS}
    columns.update({name: np.array([int(row[name]) for row in rows], dtype=np.int64) for name in INTEGERS})
    columns.update({name: np.array([float(row[name]) for row in rows], dtype=np.float32) for name in NUMBERS})
    return columns, np.array([SPECIES.index(row["species"]) for row in rows])


def split(seed: int = 7) -> tuple[dict, np.ndarray, dict, np.ndarray]:
    """(train columns, train labels, held-out columns, held-out labels)."""
    columns, labels = load_rows()
    order = np.random.default_rng(seed).permutation(len(labels))
    train, test = order[:-HELD_OUT], order[-HELD_OUT:]
    return ({name: values[train] for name, values in columns.items()}, labels[train],
            {name: values[test] for name, values in columns.items()}, labels[test])


def build_model(train: dict[str, np.ndarray]):
    """The tutorial's functions: encode_numerical_feature and encode_categorical_feature, adapted on the training
    columns, then concatenate -> Dense -> Dropout -> Dense."""
    import keras  # noqa: PLC0415  (TensorFlow is heavy: only the tests that build the model import it)
    from keras import layers  # noqa: PLC0415

    def encode_numerical_feature(feature, name):
        normalizer = layers.Normalization(name=f"{name}_normalization")
        normalizer.adapt(train[name].reshape(-1, 1))
        return normalizer(feature)

    def encode_categorical_feature(feature, name, is_string, output_mode="one_hot"):
        lookup_class = layers.StringLookup if is_string else layers.IntegerLookup
        lookup = lookup_class(output_mode=output_mode, name=f"{name}_lookup")
        lookup.adapt(train[name].reshape(-1, 1))
        return lookup(feature), lookup.vocabulary_size()

    island = keras.Input(shape=(1,), name="island", dtype="string")
    sex = keras.Input(shape=(1,), name="sex", dtype="string")
    year = keras.Input(shape=(1,), name="year", dtype="int64")
    numbers = [keras.Input(shape=(1,), name=name) for name in NUMBERS]
    all_inputs = [island, sex, year, *numbers]

    island_ids, island_size = encode_categorical_feature(island, "island", True, output_mode="int")
    island_encoded = layers.Flatten()(layers.Embedding(island_size, 4, name="island_embedding")(island_ids))
    sex_encoded, _ = encode_categorical_feature(sex, "sex", True)
    year_encoded, _ = encode_categorical_feature(year, "year", False)
    all_features = layers.concatenate([island_encoded, sex_encoded, year_encoded,
                                       *[encode_numerical_feature(feature, feature.name) for feature in numbers]])
    x = layers.Dense(32, activation="relu")(all_features)
    x = layers.Dropout(0.5)(x)
    output = layers.Dense(len(SPECIES), activation="softmax")(x)
    model = keras.Model(all_inputs, output)
    model.compile("adam", "sparse_categorical_crossentropy", metrics=["accuracy"])
    return model


def as_inputs(columns: dict[str, np.ndarray]) -> dict:
    """Columns as the model's (1,) Inputs take them in model.predict: tensors (Keras reads numpy strings as no
    dtype it knows)."""
    import tensorflow as tf  # noqa: PLC0415

    return {name: tf.constant(values.reshape(-1, 1)) for name, values in columns.items()}


def dataframe_to_dataset(columns: dict[str, np.ndarray], labels: np.ndarray):
    """The tutorial's input pipeline: a tf.data.Dataset of (column dict, label), shuffled, in batches of 32."""
    import tensorflow as tf  # noqa: PLC0415

    dataset = tf.data.Dataset.from_tensor_slices(({name: values.reshape(-1, 1) for name, values in columns.items()},
                                                  labels))
    return dataset.shuffle(buffer_size=len(labels), seed=5).batch(32)


def trained_model(epochs: int = 30):
    """The model trained briefly (seeded), and the held-out columns and labels."""
    import keras  # noqa: PLC0415

    keras.utils.set_random_seed(3)
    train, train_labels, test, test_labels = split()
    model = build_model(train)
    model.fit(dataframe_to_dataset(train, train_labels), epochs=epochs, verbose=0)
    return model, test, test_labels
