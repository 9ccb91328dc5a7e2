"""Result reuse: the same input is never computed twice (see docs/caching.md)."""
