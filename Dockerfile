# syntax=docker/dockerfile:1.7
# The selected system as a service (finrag serve). Multi-stage: uv builds the virtual environment in `build`;
# the runtime image holds that environment, the code and the study's committed files, and runs as a non-root user.
#
#   docker build --build-context wheels=/opt/wheels -t finrag-serve .
#
# torch is the CPU build from a local wheel folder (pyproject.toml: [[tool.uv.index]] local-wheels = /opt/wheels),
# passed in as the named build context `wheels`. The chunks, questions and documents the service reads are DVC
# outputs, not in git: the Kubernetes init container (deploy/k8s/deployment.yaml) rebuilds them into /app/data
# from the data mirror (the ingest, questions and chunk stage scripts, ~140 s on 2 cores; data-seed/ holds the
# one committed data file); with plain Docker, mount a prepared data/ folder at /app/data.
# Not built here: these machines have the docker client but no engine (see README, "Deployment").

ARG PYTHON_IMAGE=python:3.11-slim-bookworm

FROM ${PYTHON_IMAGE} AS build
RUN pip install --no-cache-dir uv==0.9.*
ENV UV_LINK_MODE=copy UV_COMPILE_BYTECODE=1 UV_PYTHON_DOWNLOADS=never UV_PROJECT_ENVIRONMENT=/app/.venv
WORKDIR /app
COPY pyproject.toml uv.lock README.md ./
# dependencies first (a layer that survives code changes), then the project itself
RUN --mount=type=cache,target=/root/.cache/uv --mount=type=bind,from=wheels,target=/opt/wheels \
    uv sync --frozen --no-dev --no-install-project
COPY src ./src
RUN --mount=type=cache,target=/root/.cache/uv --mount=type=bind,from=wheels,target=/opt/wheels \
    uv sync --frozen --no-dev --no-editable

FROM ${PYTHON_IMAGE} AS runtime
RUN groupadd --gid 10001 finrag && useradd --uid 10001 --gid finrag --create-home --shell /usr/sbin/nologin finrag
WORKDIR /app
COPY --from=build /app/.venv /app/.venv
# what the service and the init container read: parameters, the pipeline definition and stage scripts (to rebuild
# data/), the frozen contexts and metrics in results/, the response cache (the recorded answers)
COPY --chown=finrag:finrag params.yaml dvc.yaml dvc.lock ./
COPY --chown=finrag:finrag scripts ./scripts
COPY --chown=finrag:finrag data/questions/trick.yaml ./data/questions/trick.yaml
COPY --chown=finrag:finrag data/questions/trick.yaml ./data-seed/questions/trick.yaml
COPY --chown=finrag:finrag results ./results
COPY --chown=finrag:finrag llm_cache ./llm_cache
ENV PATH=/app/.venv/bin:$PATH PYTHONUNBUFFERED=1 FINRAG_NO_MLFLOW=1
USER 10001:10001
EXPOSE 8080
HEALTHCHECK --interval=15s --timeout=3s --start-period=60s --retries=3 \
    CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8080/healthz', timeout=2)"]
CMD ["finrag", "serve", "--host", "0.0.0.0", "--port", "8080"]
