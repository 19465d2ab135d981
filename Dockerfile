# Jellybit worker and panel image.
# The base is pinned to a full version tag (for a byte-identical base, pin its digest too:
# --build-arg PYTHON_IMAGE=python:3.11.13-slim-bookworm@sha256:…), and every Python package to
# the version in constraints.txt (regenerate it with scripts/lock).
ARG PYTHON_IMAGE=python:3.11.13-slim-bookworm
FROM ${PYTHON_IMAGE}
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /app
# The dependencies first, exactly as locked: this layer is reused until constraints.txt changes.
# Builds without the index (scripts/compose-test) pass PIP_NO_INDEX=1, PIP_FIND_LINKS=<wheels URL>
# and PIP_TRUSTED_HOST=<its host>.
ARG PIP_NO_INDEX
ARG PIP_FIND_LINKS
ARG PIP_TRUSTED_HOST
COPY constraints.txt ./
RUN pip install -r constraints.txt && useradd --uid 1000 --user-group --create-home jellybit \
    && mkdir -p /var/lib/jellybit /var/lib/jellybit-panel \
    && chown 1000:1000 /var/lib/jellybit /var/lib/jellybit-panel
COPY pyproject.toml README.md ./
COPY jellybit ./jellybit
COPY migrations ./migrations
COPY ui ./ui
# Built with the locked backend (installed above); pip check: the lock satisfies pyproject.toml.
RUN pip install --no-deps --no-build-isolation . && pip check
USER 1000:1000
# The panel's per-user session files (NiceGUI storage): /app is not writable by the user.
ENV JELLYBIT_CONFIG=/config/jellybit.toml NICEGUI_STORAGE_PATH=/var/lib/jellybit-panel
ENTRYPOINT ["jellybit"]
CMD ["run"]
