#!/usr/bin/env bash
# Optional: installs llama.cpp's shared libraries for the llama.cpp backend (BackendID .llamaCpp).
#
# Builds the llama.cpp that the PyPI sdist llama-cpp-python==0.3.36 vendors (llama.cpp commit 0c1e570, the
# version the backend's declarations are written for) for THIS machine's CPU (-DGGML_NATIVE=ON), into
# .runanywhere-deps/llamacpp (git-ignored), and links .runanywhere-deps/llamacpp/lib to the folder holding
# libllama, libggml-base, libggml-cpu, libggml and libmtmd. The SDK finds them there; elsewhere, set
# RUNANYWHERE_LLAMACPP_LIB or LlamaCppBackend(libraryDirectory:). Takes 6-10 minutes on 2 cores.
#
# Usage: scripts/install-llamacpp.sh [--force]        (env: RUNANYWHERE_LLAMACPP_HOME to install elsewhere)
# Needs: python3 with venv, a C/C++ compiler (installed with apt-get when missing), and PyPI.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
dest="${RUNANYWHERE_LLAMACPP_HOME:-$root/.runanywhere-deps/llamacpp}"
version="0.3.36"
ext=so; [ "$(uname -s)" = Darwin ] && ext=dylib

if [ -e "$dest/lib/libllama.$ext" ] && [ "${1:-}" != "--force" ]; then
  echo "install-llamacpp: already installed in $dest/lib (use --force to rebuild)"
  exit 0
fi

need=()
command -v g++ >/dev/null 2>&1 || need+=(g++ gcc make)
python3 -c 'import venv, ensurepip' >/dev/null 2>&1 || need+=(python3-venv)
if [ ${#need[@]} -gt 0 ]; then
  command -v apt-get >/dev/null 2>&1 || { echo "install-llamacpp: install ${need[*]} first" >&2; exit 1; }
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null 2>&1 || { echo "install-llamacpp: need root (or sudo) to apt-get install ${need[*]}" >&2; exit 1; }
    sudo="sudo"
  fi
  echo "install-llamacpp: installing ${need[*]}" >&2
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

flags=""
# AMX tile instructions are not wanted: gcc's -march=native may enable them on CPUs whose OS or VM does not.
if [ "$(uname -m)" = x86_64 ]; then flags="-mno-amx-tile -mno-amx-int8 -mno-amx-bf16"; fi

rm -rf "$dest/venv" "$dest/lib"
mkdir -p "$dest"
python3 -m venv "$dest/venv"
start=$(date +%s)
echo "install-llamacpp: building llama-cpp-python==$version from source into $dest (6-10 minutes on 2 cores)..."
CFLAGS="$flags" CXXFLAGS="$flags" CMAKE_ARGS="-DGGML_NATIVE=ON -DLLAMA_CURL=OFF" \
  "$dest/venv/bin/pip" install --quiet --no-cache-dir --no-deps --no-binary llama-cpp-python "llama-cpp-python==$version"
lib="$("$dest/venv/bin/python" -c 'import sys, os; print(os.path.join(next(p for p in sys.path if p.endswith("site-packages")), "llama_cpp", "lib"))')"
[ -e "$lib/libllama.$ext" ] || { echo "install-llamacpp: the build finished but $lib has no libllama.$ext" >&2; exit 1; }
ln -sfn "$lib" "$dest/lib"
echo "install-llamacpp: done in $(( $(date +%s) - start )) s; libraries in $dest/lib:"
ls "$dest/lib"
