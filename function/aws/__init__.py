"""Calls to AWS services on the standard library: one SigV4 signer (sigv4.py) shared by every client."""
