#!/usr/bin/env python3
"""Dev-time differential cases for the byte-level BPE tokenizers.

Builds a Hugging Face `tokenizers` tokenizer from each vocab-only GGUF (vocab, merges and the
family's original split regex), tokenizes random text with it and writes
[{"vocab": name, "text": str, "ids": [...]}] as JSON. The Swift test
TokenizerDifferentialTests reads the file named by RUNANYWHERE_TOKENIZER_CASES.

usage: make_cases.py TESTDATA_DIR OUT.json [COUNT_PER_VOCAB]
needs: pip install gguf tokenizers   (dev only, never a dependency of the package)
"""
import json
import random
import sys

from gguf import GGUFReader
from tokenizers import Regex, Tokenizer, models, pre_tokenizers

PATTERNS = {
    "gpt-2": r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+",
    "llama-bpe": r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+",
    "qwen2": r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+",
}

ALPHABET = (
    list("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ") * 6
    + list("0123456789") * 3
    + [" "] * 25 + ["  ", "\n", "\n\n", "\t", "\r\n", " \n "]
    + list("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")
    + ["'s", "'S", "'t", "'re", "'RE", "'ve", "'m", "'ll", "'Ll", "'d", "'D"]
    + list("éèüößñçÅØæœ") + list("абвгдеЖЗИКЛ") + list("αβγΔΩ") + list("你好世界中文") + list("こんにちは")
    + list("한국어") + list("مرحبا") + list("שלום") + list("ก่าน")
    + ["\u00a0", "\u3000", "\u2003", "\u2028", "\u0085", "\u200b", "\u0301", "\u0308"]
    + list("²½٣Ⅻ①") + list("€£¥©®™§¶…—–“”‘’«»") + ["🦙", "😀", "👍🏽", "🇺🇸", "😶‍🌫️"]
)


def random_text(rng):
    r = rng.random()
    if r < 0.05:  # long words for the heap path
        piece = rng.choice(["a", "ab", " ", "!", "x1", "é", "\n", "ल"])
        return piece * rng.randint(20, 120)
    n = rng.randint(0, 40)
    return "".join(rng.choice(ALPHABET) for _ in range(n))


def build(path, pattern, ignore_merges):
    r = GGUFReader(path)
    tokens = r.fields["tokenizer.ggml.tokens"].contents()
    merges = r.fields["tokenizer.ggml.merges"].contents()
    vocab = {t: i for i, t in enumerate(tokens)}
    pairs = [tuple(m.split(" ", 1)) for m in merges]
    tok = Tokenizer(models.BPE(vocab=vocab, merges=pairs, ignore_merges=ignore_merges))
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(pattern), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
    ])
    return tok


def main():
    root, out = sys.argv[1], sys.argv[2]
    count = int(sys.argv[3]) if len(sys.argv) > 3 else 3000
    rng = random.Random(1234)
    cases = []
    for name, pattern in PATTERNS.items():
        tok = build(f"{root}/vocab/ggml-vocab-{name}.gguf", pattern, ignore_merges=(name == "llama-bpe"))
        for _ in range(count):
            text = random_text(rng)
            ids = tok.encode(text, add_special_tokens=False).ids
            cases.append({"vocab": name, "text": text, "ids": ids})
    with open(out, "w") as f:
        json.dump(cases, f, ensure_ascii=False)
    print(f"wrote {len(cases)} cases to {out}")


if __name__ == "__main__":
    main()
