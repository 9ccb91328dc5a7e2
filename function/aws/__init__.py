"""Calls to AWS services on the standard library: one SigV4 signer (sigv4.py) and one HTTP transport
(transport.py) under every client (client.py; s3.py, dynamodb.py)."""
