#!/usr/bin/env bash
# Regenerates the CI fixtures in bench/vlm/tiny: the tiny random-weight SmolVLM pairs (F16 and Q8_0), the test
# images, and llama.cpp mtmd's reference outputs for them (needs the bench venv with llama-cpp-python 0.3.36).
# The models themselves are not committed: models.sha256 records their bytes, and scripts/make-vision-fixtures.sh
# (run by scripts/test.sh) writes them again for the tests.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
py="${PYTHON:-$here/../.venv/bin/python}"
out="$here/tiny"
mkdir -p "$out"
"$py" "$here/test_images.py" "$out" >/dev/null
# A photo-like picture (plasma fractal, fixed seed) as PNG and JPEG, made with ImageMagick.
convert -seed 11 -size 160x120 plasma:fractal -blur 0x1 -strip "$out/photo.png"
convert "$out/photo.png" -quality 90 -strip "$out/photo.jpg"
# f16, q8_0, and q8_0 with a projector lacking clip.vision.preproc_image_size (mtmd's older tiling).
for t in f16 q8_0 q8_0-legacy; do
  "$py" "$here/make_smolvlm.py" --shape tiny --type "${t%-legacy}" $([ "$t" = q8_0-legacy ] && echo --legacy) --out "$out" >/dev/null
  "$py" "$here/mtmd_reference.py" --text "$out/smolvlm-tiny-$t.gguf" --mmproj "$out/mmproj-smolvlm-tiny-$t.gguf" \
    --images "$out/gradient.ppm" "$out/shapes.ppm" "$out/stripes.ppm" "$out/photo.png" "$out/photo.jpg" --threads 2 --out "$out/smolvlm-tiny-$t.json"
done
(cd "$out" && sha256sum smolvlm-tiny-{f16,q8_0,q8_0-legacy}.gguf mmproj-smolvlm-tiny-{f16,q8_0,q8_0-legacy}.gguf > models.sha256)
du -ch "$out"/*.gguf "$out"/*.json "$out"/*.bin "$out"/*.ppm | tail -1
