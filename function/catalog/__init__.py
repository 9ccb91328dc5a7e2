"""Which models are served: where they come from (a directory or an S3 prefix), their download, and the registry
of the task that serves each (function/model/ is what one model directory is)."""
