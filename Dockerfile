# Jellybit worker and panel image.
FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1
WORKDIR /app
COPY pyproject.toml README.md ./
COPY jellybit ./jellybit
COPY migrations ./migrations
COPY ui ./ui
RUN pip install . && useradd --uid 1000 --user-group --create-home jellybit \
    && mkdir -p /var/lib/jellybit /var/lib/jellybit-panel \
    && chown 1000:1000 /var/lib/jellybit /var/lib/jellybit-panel
USER 1000:1000
# The panel's per-user session files (NiceGUI storage): /app is not writable by the user.
ENV JELLYBIT_CONFIG=/config/jellybit.toml NICEGUI_STORAGE_PATH=/var/lib/jellybit-panel
ENTRYPOINT ["jellybit"]
CMD ["run"]
