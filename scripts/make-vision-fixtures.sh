#!/usr/bin/env bash
# Writes the tiny random-weight SmolVLM pairs (F16, Q8_0, and Q8_0 with a legacy projector) the vision tests read, into bench/vlm/tiny, with
# bench/vlm/make_smolvlm.py (deterministic: fixed seeds) and checks them against bench/vlm/tiny/models.sha256, the
# bytes llama.cpp mtmd's committed reference outputs were made from. The models are generated, never committed.
# Needs python3 with venv and PyPI (numpy and gguf, pinned, into the git-ignored .runanywhere-deps/fixtures-venv).
# Safe to run again: does nothing when the files are there and match.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
out="$root/bench/vlm/tiny"
if (cd "$out" && sha256sum --quiet -c models.sha256 >/dev/null 2>&1); then exit 0; fi
venv="$root/.runanywhere-deps/fixtures-venv"
if ! "$venv/bin/python" -c 'import numpy, gguf' >/dev/null 2>&1; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q numpy==2.4.6 gguf==0.19.0
fi
for t in f16 q8_0; do
  "$venv/bin/python" "$root/bench/vlm/make_smolvlm.py" --shape tiny --type "$t" --out "$out" >/dev/null
done
# A projector without clip.vision.preproc_image_size, as files converted before llama.cpp wrote it.
"$venv/bin/python" "$root/bench/vlm/make_smolvlm.py" --shape tiny --type q8_0 --legacy --out "$out" >/dev/null
(cd "$out" && sha256sum --quiet -c models.sha256) || {
  echo "make-vision-fixtures: the generated models differ from bench/vlm/tiny/models.sha256 (regenerate the references with bench/vlm/make_tiny.sh)" >&2
  exit 1
}
echo "make-vision-fixtures: wrote the tiny SmolVLM pairs into bench/vlm/tiny" >&2
