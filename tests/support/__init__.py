"""Helpers the tests share: real servers, started and stopped by the suite."""
