#!/usr/bin/env bash
# Installs the speech runtime: sherpa-onnx's C API (libsherpa-onnx-c-api.so with the ONNX Runtime it bundles)
# from the PyPI wheel sherpa-onnx-core, into a project-local, git-ignored folder the SDK searches at run time,
# and Silero VAD (silero_vad.onnx from the PyPI wheel silero-vad, MIT), which cuts long audio at silences.
#   scripts/install-speech.sh            -> .runanywhere-deps/sherpa-onnx/sherpa_onnx/lib/
#                                           .runanywhere-deps/silero-vad/silero_vad.onnx
#   RUNANYWHERE_SHERPA_ONNX_DIR=/opt/x scripts/install-speech.sh   (somewhere else; then set
#   RUNANYWHERE_SHERPA_ONNX_LIB=/opt/x/sherpa_onnx/lib for the SDK to find it)
# Safe to run again: does nothing when the library is already there.
set -euo pipefail

version="2.0.1"
root="$(cd "$(dirname "$0")/.." && pwd)"
dest="${RUNANYWHERE_SHERPA_ONNX_DIR:-$root/.runanywhere-deps/sherpa-onnx}"
lib="$dest/sherpa_onnx/lib/libsherpa-onnx-c-api.so"

vad_version="6.2.3"
vad_dir="${RUNANYWHERE_SILERO_VAD_DIR:-$root/.runanywhere-deps/silero-vad}"

py="$(command -v python3 || true)"
need_pip() {
  [ -n "$py" ] || { echo "install-speech: python3 with pip is needed to fetch the wheels" >&2; exit 1; }
  "$py" -m pip --version >/dev/null 2>&1 || { echo "install-speech: pip is missing (Debian: apt-get install python3-pip)" >&2; exit 1; }
}

. "$root/scripts/lib/wheel.sh"

if [ -f "$lib" ] && [ -f "$dest/.version-$version" ]; then
  echo "install-speech: sherpa-onnx $version already in $dest" >&2
else
  need_pip
  echo "install-speech: installing sherpa-onnx-core==$version into $dest" >&2
  rm -rf "$dest"
  mkdir -p "$dest"
  "$py" -m pip install --quiet --disable-pip-version-check --no-deps --target "$dest" "sherpa-onnx-core==$version"
  [ -f "$lib" ] || { echo "install-speech: the wheel did not contain $lib" >&2; exit 1; }
  touch "$dest/.version-$version"
fi

if [ -f "$vad_dir/silero_vad.onnx" ] && [ -f "$vad_dir/.version-$vad_version" ]; then
  echo "install-speech: silero_vad.onnx $vad_version already in $vad_dir" >&2
else
  need_pip
  tmp="$(mktemp -d)"
  "$py" -m pip download --quiet --disable-pip-version-check --no-deps -d "$tmp" "silero-vad==$vad_version"
  mkdir -p "$vad_dir"
  wheel_extract "$(ls "$tmp"/silero_vad-"$vad_version"-*.whl)" silero_vad/data/silero_vad.onnx "$vad_dir"
  rm -rf "$tmp"
  touch "$vad_dir/.version-$vad_version"
fi
echo "install-speech: done; the SDK finds $lib and $vad_dir/silero_vad.onnx by itself from this checkout (or set RUNANYWHERE_SHERPA_ONNX_LIB and RUNANYWHERE_SILERO_VAD)" >&2
