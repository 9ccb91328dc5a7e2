"""The suite's own helpers and pytest fixtures (fixtures on kit/'s servers: aws_fixtures, dynamodb_fixtures).
What the benchmarks use too lives in kit/; nothing here imports bench/."""
