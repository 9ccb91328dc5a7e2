"""Converted models: the manifest that says how to feed one, its LiteRT runner, and the registry of loaded ones."""
