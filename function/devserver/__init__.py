"""The development server: the Lambda handler behind plain HTTP on 127.0.0.1 (`python -m function.devserver`,
what `make serve` runs). Development only: the image leaves this whole folder out (.dockerignore, one rule), and
nothing in function/ outside it imports it.

- __main__.py: the command line, one line saying what is served, then the request log;
- command.py: the same server as `lambda-tflite serve`, with defaults for a command run from any folder;
- server.py: each HTTP request -> the API Gateway HTTP API event the handler receives in AWS, and back;
- framing.py: HTTP/1.1 on one connection (h11), its limits and time-outs, framing errors as the API's JSON.
"""
