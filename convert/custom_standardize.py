"""A TextVectorization layer's custom `standardize` function as tokenizer normalizers, when it is made only of ops
the function's tokenizer can express: `tf.strings.lower`, `tf.strings.regex_replace` (every match, a literal
replacement) and `tf.strings.strip`, one after the other (keras.io's "Text classification from scratch"
`custom_standardization` is lowercase + two regex replaces).

The function is traced on a string tensor and its graph read op by op; any other op is refused naming it
(code `unsupported_text_vectorization`). What the normalizers give is then proved against the layer itself on every
validation text (convert/keras_file.py check_tokenizer), as for the built-in standardize modes: a regex that RE2
(TensorFlow) and Oniguruma (tokenizers) read differently is caught there.
"""
from __future__ import annotations

import re

from convert.errors import ConversionError
from convert.quiet import import_tensorflow

CODE = "unsupported_text_vectorization"
ASCII_EDGE_WHITESPACE = r"^[ \t\n\x0b\x0c\r]+|[ \t\n\x0b\x0c\r]+$"  # tf.strings.strip: ASCII isspace at both ends
PASSING_OPS = ("Placeholder", "Identity", "NoOp", "Const")
STRING_OP_WORDS = ("String", "Regex", "Substr", "Unicode", "Reduce")
BACKREFERENCE = re.compile(r"\\[0-9]")


def _refuse(layer: str, name: str, problem: str) -> ConversionError:
    return ConversionError(CODE, f"TextVectorization layer '{layer}': standardize {name} {problem}, which the "
                           "function's tokenizer cannot reproduce: use only tf.strings.lower, "
                           "tf.strings.regex_replace (a literal replacement) and tf.strings.strip, or standardize "
                           "the texts before the model")


def _steps(layer: str, function) -> list[tuple[str, dict]]:
    """The string ops of `function` in the order they apply, each with its attributes."""
    tf = import_tensorflow()
    name = getattr(function, "__name__", repr(function))
    try:
        graph = tf.function(function, input_signature=[tf.TensorSpec([None, 1], tf.string)]
                            ).get_concrete_function().graph
    except Exception as error:  # noqa: BLE001  (the user's function may do anything with a tensor)
        raise _refuse(layer, name, f"cannot be traced on a string tensor ({type(error).__name__})") from None
    steps, others = [], []
    for op in graph.get_operations():
        if op.type in PASSING_OPS:
            continue
        if op.type == "StringLower":
            steps.append(("lower", {"encoding": op.get_attr("encoding").decode()}))
        elif op.type == "StaticRegexReplace":
            steps.append(("replace", {"pattern": op.get_attr("pattern").decode(),
                                      "rewrite": op.get_attr("rewrite").decode(),
                                      "global": op.get_attr("replace_global")}))
        elif op.type == "StringStrip":
            steps.append(("strip", {}))
        else:
            others.append(op.type)
    if others:  # the string op the user wrote, rather than the shape arithmetic around it
        shown = next((op for op in others if any(word in op for word in STRING_OP_WORDS)), others[0])
        raise _refuse(layer, name, f"uses the TensorFlow op {shown}")
    for kind, attributes in steps:
        if kind == "replace" and not attributes["global"]:
            raise _refuse(layer, name, f"replaces only the first match of {attributes['pattern']!r} "
                          "(replace_global=False)")
        if kind == "replace" and BACKREFERENCE.search(attributes["rewrite"]):
            raise _refuse(layer, name, f"rewrites {attributes['pattern']!r} with a group reference "
                          f"({attributes['rewrite']!r})")
    return steps


def normalizers_for(layer: str, function) -> list:
    """The tokenizers normalizers that do what `function` does, in order."""
    from tokenizers import Regex, normalizers  # noqa: PLC0415

    result = []
    for kind, attributes in _steps(layer, function):
        if kind == "lower" and attributes["encoding"] == "":  # ASCII letters only, as the built-in "lower"
            result += [normalizers.Replace(chr(code), chr(code + 32)) for code in range(ord("A"), ord("Z") + 1)]
        elif kind == "lower":
            result.append(normalizers.Lowercase())
        elif kind == "replace":
            result.append(normalizers.Replace(Regex(attributes["pattern"]), attributes["rewrite"]))
        else:
            result.append(normalizers.Replace(Regex(ASCII_EDGE_WHITESPACE), ""))
    return result


def describe_standardize(function) -> str:
    """The function's name for the progress log."""
    return getattr(function, "__name__", "a custom function")
