"""One converted model directory: its manifest, serving version, files, LiteRT runner and classifier outputs.

Nothing here knows which models are served or imports a task (that is function/catalog/)."""
