"""The Lambda function: every route, task and protocol of lambda-tflite-serving (README.md)."""

# The one place the version is written: pyproject.toml reads it, `lambda-tflite --version` prints it.
__version__ = "0.2.0"
