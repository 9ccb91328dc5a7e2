# The Lambda image: LiteRT + the converted models + function/. Never TensorFlow (requirements.txt is the whole runtime).
# models/ is a build input made by `make models` before `docker build` / `serverless deploy` (docs/deploy.md):
# converting inside the build would pull ~1.7 GB of TensorFlow and minutes of conversion into every image build.
FROM public.ecr.aws/lambda/python:3.12

# Layers from least to most often changed, so a code edit rebuilds only the last two.
COPY requirements.txt runtime-prune.txt tools/prune_runtime.py ${LAMBDA_TASK_ROOT}/
# --no-deps: requirements.txt is a complete lock; declared dependencies would drag in what the function never imports.
# Then, in the same RUN so the dropped bytes never land in a layer, the parts runtime-prune.txt lists (GPU and NPU
# plugins, test suites, build tools: ~55 MB). tools/prepare-lambda-runtime.sh prunes the tests' runtime the same way.
RUN pip install --no-cache-dir --no-deps --target "${LAMBDA_TASK_ROOT}" -r "${LAMBDA_TASK_ROOT}/requirements.txt" \
    && python "${LAMBDA_TASK_ROOT}/prune_runtime.py" "${LAMBDA_TASK_ROOT}" --list "${LAMBDA_TASK_ROOT}/runtime-prune.txt"

ENV MODEL_DIR=${LAMBDA_TASK_ROOT}/models
COPY models/ ${LAMBDA_TASK_ROOT}/models/

COPY function/ ${LAMBDA_TASK_ROOT}/function/
# The task root is read-only in Lambda: bytecode compiled now is bytecode a cold start does not compile again.
RUN python -m compileall -q "${LAMBDA_TASK_ROOT}/function"

CMD ["function.app.handler"]
