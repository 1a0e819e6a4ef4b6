#!/usr/bin/env bash
# The official `openai` Python package (PyPI), pinned, in a venv of its own for the server's client test
# (Tests/ServerTests/OpenAIClientTests.swift runs scripts/openai-client-check.py with it) and bench/serve.
# Default place: .runanywhere-deps/openai-venv (git-ignored); OPENAI_VENV overrides. Safe to run again: does
# nothing when the pinned version is already there.
set -euo pipefail
cd "$(dirname "$0")/.."
VERSION=3.57.0
VENV="${OPENAI_VENV:-.runanywhere-deps/openai-venv}"
PYTHON="${PYTHON:-python3}"
if [ -x "$VENV/bin/python" ] && [ "$("$VENV/bin/python" -c 'import importlib.metadata as m; print(m.version("openai"))' 2>/dev/null)" = "$VERSION" ]; then
  exit 0
fi
mkdir -p "$(dirname "$VENV")"
"$PYTHON" -m venv "$VENV"
"$VENV/bin/pip" install -q --disable-pip-version-check "openai==$VERSION"
echo "install-openai-client: openai $VERSION in $VENV" >&2
