# Jellybit worker and panel image.
FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1
WORKDIR /app
COPY pyproject.toml README.md ./
COPY jellybit ./jellybit
COPY ui ./ui
RUN pip install . && useradd --uid 1000 --user-group --create-home jellybit \
    && mkdir -p /var/lib/jellybit && chown 1000:1000 /var/lib/jellybit
USER 1000:1000
ENV JELLYBIT_CONFIG=/config/jellybit.toml
ENTRYPOINT ["jellybit"]
CMD ["run"]
