#!/usr/bin/env bash
# Build the Warden image from the repository's Dockerfile without Docker and without a registry, and write it
# as an OCI image layout (tests/deploy/test_image.py starts `warden serve` from it).
#
#   deploy/image/build.sh [OUT]        OUT defaults to .cache/image; prints the image reference last
#
# 1. mmdebstrap makes a Debian trixie root filesystem (variant minbase, the content of debian:trixie-slim)
#    from Debian's mirror, and podman imports it as localhost/warden-base:trixie.
# 2. buildah builds ./Dockerfile on it (--build-arg BASE=..., --pull=never); the Dockerfile's own RUN steps
#    reach Debian's mirror (apt) and PyPI (pip), so the build needs those two and nothing else.
# 3. buildah pushes the result to OUT/oci (an OCI layout, tag = the package version; `skopeo copy
#    oci:OUT/oci:TAG docker://REGISTRY/warden:TAG` publishes it), and umoci unpacks that layout into
#    OUT/bundle (rootfs + config.json), which tests/deploy/test_image.py runs with runc
#    (WARDEN_IMAGE_DIR=OUT; default .cache/image). OUT/image.env names the layout: WARDEN_IMAGE_OCI=OUT/oci:TAG.
#
# Exit 3 means the sandbox refuses what a build needs (the tools cannot be installed, or a container cannot
# run a command): OUT/skip-reason says which, and the test skips with it. Any other failure is a real one.
# Environment: WARDEN_BUILD_RUNTIME (OCI runtime for RUN steps, default runc: crun refuses hybrid cgroups),
# DEBIAN_MIRROR (default http://deb.debian.org/debian), HOST_CA (CA bundle pip trusts in the build, default
# /etc/ssl/certs/ca-certificates.crt when present).
set -euo pipefail
cd "$(dirname "$0")/../.."

OUT=$(realpath -m "${1:-.cache/image}")
RUNTIME=${WARDEN_BUILD_RUNTIME:-runc}
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
HOST_CA=${HOST_CA:-/etc/ssl/certs/ca-certificates.crt}
VERSION=$(sed -n 's/^version = "\(.*\)"$/\1/p' pyproject.toml)
BASE=localhost/warden-base:trixie
IMAGE=localhost/warden:$VERSION
mkdir -p "$OUT"
rm -f "$OUT/skip-reason" "$OUT/image.env"

refuse() {
  echo "$*" >"$OUT/skip-reason"
  echo "deploy/image/build.sh: the sandbox refuses the image build: $*" >&2
  exit 3
}
step() { echo "== $(date -u +%H:%M:%S) $*" >&2; }

if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo -n"; fi
missing=()  # each tool is the Debian package of the same name
for tool in mmdebstrap buildah podman umoci "$RUNTIME"; do
  command -v "$tool" >/dev/null 2>&1 || missing+=("$tool")
done
if [ "${#missing[@]}" -gt 0 ]; then
  step "installing ${missing[*]} with apt"
  { $SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -qq \
    && $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" uidmap >/dev/null; } \
    || refuse "apt-get could not install ${missing[*]}"
fi

start=$(date +%s)
if [ -n "${WARDEN_REBASE:-}" ] || ! podman image exists "$BASE"; then
  step "mmdebstrap: Debian trixie minbase -> $BASE"
  mmdebstrap --quiet --variant=minbase --mode=auto trixie "$OUT/base.tar" "$MIRROR" \
    || refuse "mmdebstrap could not make a trixie root filesystem (mode auto: root, or unshare for non-root)"
  podman import --quiet "$OUT/base.tar" "$BASE" >/dev/null
  rm -f "$OUT/base.tar"
else
  step "reusing $BASE (WARDEN_REBASE=1 makes it again)"
fi

step "probe: can buildah run a command in a container ($RUNTIME)?"
probe=$(buildah from --pull=never "$BASE")
if ! buildah run --runtime "$RUNTIME" --network host "$probe" true; then
  buildah rm "$probe" >/dev/null
  refuse "buildah run --runtime $RUNTIME cannot start a container here (namespaces or cgroups refused)"
fi
buildah rm "$probe" >/dev/null

step "buildah bud: Dockerfile -> $IMAGE"
# pip trusts what the host trusts (a TLS-intercepting proxy's CA is in the host's bundle, not in certifi's).
ca=()
if [ -f "$HOST_CA" ]; then ca=(-v "$HOST_CA:/run/host-ca.crt:ro" --build-arg PIP_CERT=/run/host-ca.crt); fi
buildah bud --quiet --layers --pull=never --runtime "$RUNTIME" --network host "${ca[@]}" \
  --build-arg "BASE=$BASE" -t "$IMAGE" -f Dockerfile .

step "buildah push: $OUT/oci:$VERSION"
rm -rf "$OUT/oci"
buildah push --quiet "$IMAGE" "oci:$OUT/oci:$VERSION"
step "umoci unpack: $OUT/bundle (the runtime bundle the test starts with runc)"
rm -rf "$OUT/bundle"
rootless=()
if [ "$(id -u)" != 0 ]; then rootless=(--rootless); fi
umoci unpack "${rootless[@]}" --image "$OUT/oci:$VERSION" "$OUT/bundle" >/dev/null
echo "WARDEN_IMAGE_OCI=$OUT/oci:$VERSION" >"$OUT/image.env"
step "built in $(($(date +%s) - start)) s: $(du -sh "$OUT/oci" | cut -f1) in $OUT/oci"
echo "$OUT/oci:$VERSION"
