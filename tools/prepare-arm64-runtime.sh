#!/usr/bin/env bash
# Prepares what tests/e2e/test_arm64.py runs offline to prove the function on Graviton (arm64) without arm64 hardware
# or Docker, all under build/arm64-runtime/:
#   - the aarch64 wheels of requirements.txt for CPython 3.11, the Python Debian ships for arm64 (Lambda's 3.12 ones,
#     the arm64 image's dependency layer, come with tools/prepare-lambda-runtime.sh);
#   - sysroot/: an arm64 Debian userland (libc, libstdc++, python3.11...) unpacked from .debs with `dpkg -x`, never
#     installed, so qemu-aarch64-static (Debian's qemu-user-static) runs SYSROOT/usr/bin/python3.11 on this host;
#     plus SYSROOT/proc/cpuinfo in ARM's format: qemu's -L serves it as /proc/cpuinfo, and LiteRT's CPU detection
#     crashes on the host's x86 one;
#   - site/: the cp311 aarch64 wheels installed and pruned by runtime-prune.txt, as the image prunes its layer.
# Idempotent: each part is skipped while its inputs are unchanged. Needs the registries (root for apt-get); pytest not.
set -euo pipefail
cd "$(dirname "$0")/.."

OUT=build/arm64-runtime
SYSROOT="$OUT/sysroot"
SITE="$OUT/site"
# The arm64 userland python3.11 needs (its shared libraries and their own dependencies), and nothing else.
DEBS=(libc6 libgcc-s1 libstdc++6 libgomp1 zlib1g libexpat1 libffi8 libssl3 libbz2-1.0 liblzma5 libsqlite3-0 libuuid1
      libncursesw6 libtinfo6 libreadline8 libdb5.3 libgdbm6 libnsl2 libtirpc3 libcrypt1 libgssapi-krb5-2 libkrb5-3
      libk5crypto3 libcom-err2 libkrb5support0 libkeyutils1 libpython3.11-minimal python3.11-minimal
      libpython3.11-stdlib python3.11)
# Neoverse-N1 (Graviton2), the CPU qemu is told to emulate (tests/support/arm64.py passes -cpu neoverse-n1).
CPUINFO_ENTRY='processor	: %d
BogoMIPS	: 243.75
Features	: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid asimdrdm lrcpc dcpop asimddp ssbs
CPU implementer	: 0x41
CPU architecture: 8
CPU variant	: 0x3
CPU part	: 0xd0c
CPU revision	: 1

'

log() { echo "==> [$(date +%T)] $*"; }

prepare_sysroot() {
  local stamp debs
  stamp=$(printf '%s\n' "${DEBS[@]}" "$CPUINFO_ENTRY" | sha256sum | cut -d' ' -f1)
  if [ -f "$SYSROOT/.stamp" ] && [ "$(cat "$SYSROOT/.stamp")" = "$stamp" ]; then
    return
  fi
  if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
    echo "==> no arm64 sysroot and not root with apt-get: the arm64 emulation test will fail (run this as root)" >&2
    return 1
  fi
  log "building the arm64 sysroot from Debian's arm64 .debs (downloaded, unpacked, never installed)"
  # Lets apt download arm64 packages; installs nothing.
  if ! dpkg --print-foreign-architectures | grep -qx arm64; then dpkg --add-architecture arm64; fi
  apt-get update -qq
  debs=$(mktemp -d)
  chmod 0777 "$debs"  # apt downloads as its own _apt user
  (cd "$debs" && apt-get download -qq "${DEBS[@]/%/:arm64}")
  rm -rf "$SYSROOT"
  mkdir -p "$SYSROOT/proc"
  for deb in "$debs"/*.deb; do dpkg -x "$deb" "$SYSROOT"; done
  rm -rf "$debs"
  for cpu in 0 1; do printf "$CPUINFO_ENTRY" "$cpu"; done >"$SYSROOT/proc/cpuinfo"
  echo "$stamp" >"$SYSROOT/.stamp"
  log "arm64 sysroot ready: $(du -sh "$SYSROOT" | cut -f1)"
}

prepare_site() {
  local stamp wheels="$OUT/wheels/aarch64-cp311" platforms=()
  bash tools/download-wheels.sh aarch64 3.11 "$wheels"
  stamp=$(cat "$wheels/.stamp" runtime-prune.txt tools/prune_runtime.py | sha256sum | cut -d' ' -f1)
  if [ -f "$SITE/.stamp" ] && [ "$(cat "$SITE/.stamp")" = "$stamp" ]; then
    return
  fi
  log "installing requirements.txt's aarch64 cp311 wheels into $SITE, pruned as the image is"
  rm -rf "$SITE"
  for tag in manylinux_2_28 manylinux_2_27 manylinux_2_17 manylinux2014; do platforms+=(--platform "${tag}_aarch64"); done
  build/lambda-runtime/venv/bin/python -m pip install --quiet --disable-pip-version-check --no-deps --no-index \
    --find-links "$wheels" --only-binary=:all: --implementation cp --python-version 3.11 "${platforms[@]}" \
    --no-compile --target "$SITE" -r requirements.txt
  build/lambda-runtime/venv/bin/python tools/prune_runtime.py "$SITE" --list runtime-prune.txt | tail -1
  # Bytecode by the arm64 Python itself, once: compiling at every emulated import would cost each test run seconds.
  qemu-aarch64-static -L "$SYSROOT" "$SYSROOT/usr/bin/python3.11" -m compileall -q "$SITE" >/dev/null
  echo "$stamp" >"$SITE/.stamp"
}

mkdir -p "$OUT"
if ! command -v qemu-aarch64-static >/dev/null 2>&1; then
  echo "==> qemu-aarch64-static not found: install Debian's qemu-user-static (tools/install-test-deps.sh does, as root)" >&2
  exit 1
fi
prepare_sysroot
prepare_site
