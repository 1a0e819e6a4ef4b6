#!/usr/bin/env python3
"""Deterministic test images (gradients and shapes) as binary PPM (P6) files: raw RGB pixels any tool reads."""
import os
import sys

import numpy as np


def gradient(w=50, h=40):
    y, x = np.mgrid[0:h, 0:w]
    r = x * 255 // (w - 1)
    g = y * 255 // (h - 1)
    b = (x + y) * 255 // (w + h - 2)
    return np.stack([r, g, b], -1).astype(np.uint8)


def shapes(w=37, h=90):
    y, x = np.mgrid[0:h, 0:w]
    img = np.zeros((h, w, 3), np.uint8)
    img[...] = (30, 60, 200)
    disc = (x - 18) ** 2 + (y - 25) ** 2 < 12 ** 2
    img[disc] = (250, 220, 40)
    box = (x > 5) & (x < 30) & (y > 50) & (y < 80)
    img[box] = (200, 30, 30)
    img[(y % 11 == 0)] = (255, 255, 255)
    return img


def stripes(w=120, h=45):
    y, x = np.mgrid[0:h, 0:w]
    v = ((x // 7 + y // 5) % 2) * 200 + 20
    noise = (np.sin(x * 0.37) * np.cos(y * 0.21) * 30).astype(int)
    return np.stack([v, 255 - v, np.clip(v // 2 + noise + 60, 0, 255)], -1).astype(np.uint8)


IMAGES = {"gradient": gradient, "shapes": shapes, "stripes": stripes}


def write_ppm(path, img):
    h, w, _ = img.shape
    with open(path, "wb") as f:
        f.write(b"P6\n%d %d\n255\n" % (w, h))
        f.write(img.tobytes())


def read_ppm(path):
    data = open(path, "rb").read()
    parts = data.split(maxsplit=4)
    assert parts[0] == b"P6" and parts[3] == b"255"
    w, h = int(parts[1]), int(parts[2])
    pixels = parts[4][: w * h * 3]
    return w, h, pixels


if __name__ == "__main__":
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for name, make in IMAGES.items():
        write_ppm(os.path.join(out, name + ".ppm"), make())
        print(os.path.join(out, name + ".ppm"))
