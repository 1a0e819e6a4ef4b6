#!/usr/bin/env bash
# Small PNG and JPEG variants of one generated 24x16 picture, for the decoder tests and the fuzz seeds
# (bench/vlm/tiny/codec, committed: about 10 KB). Needs ImageMagick (Debian: imagemagick).
set -euo pipefail
out="${1:-$(dirname "$0")/tiny/codec}"
mkdir -p "$out"
cd "$out"
# A gradient with a disc: smooth areas and edges.
convert -size 24x16 gradient:'#1040c0-#f0c020' \( -size 24x16 xc:none -fill '#c02020' -draw 'circle 12,8 12,3' \) \
  -composite -depth 8 -type TrueColor -define png:color-type=2 -strip rgb.png
convert rgb.png -depth 8 source.ppm
convert rgb.png -colors 16 -type Palette -strip png8:palette.png
convert rgb.png -colorspace Gray -alpha set -channel A -evaluate set 80% +channel -depth 16 -interlace PNG -strip \
  -define png:color-type=4 gray-alpha16-interlaced.png
convert rgb.png -quality 95 -sampling-factor 2x2 -strip baseline.jpg
convert rgb.png -quality 95 -interlace JPEG -strip progressive.jpg
convert rgb.png -colorspace Gray -quality 90 -strip gray.jpg
convert palette.png -depth 8 palette.ppm
ls -l .
