#!/bin/bash
# Entry point under the Lambda Web Adapter (template.yaml: Handler run.sh, AWS_LAMBDA_EXEC_WRAPPER=/opt/bootstrap).
# /opt/bootstrap execs this script instead of the Python runtime; the adapter extension waits for the app on
# $PORT and relays each Function URL request to it, streaming the response (AWS_LWA_INVOKE_MODE=response_stream).
set -euo pipefail
export PYTHONPATH="/opt/python:${LAMBDA_TASK_ROOT}${PYTHONPATH:+:$PYTHONPATH}"
# uvloop and httptools (uvicorn's choice when installed, named so it stays so): the event loop and HTTP parser in C.
exec python3 -m uvicorn app:app --host 127.0.0.1 --port "${PORT:-8080}" --log-level warning --no-access-log --loop uvloop --http httptools
