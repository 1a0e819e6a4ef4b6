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

LETTER_RANGES = [
    (0x41, 0x5A), (0x61, 0x7A), (0xB5, 0xB5), (0xC0, 0xD6), (0xD8, 0xF6), (0xF8, 0x1BA), (0x1BC, 0x1BF),
    (0x1C4, 0x293), (0x295, 0x2AF), (0x370, 0x373), (0x376, 0x377), (0x37B, 0x37D), (0x37F, 0x37F),
    (0x386, 0x386), (0x388, 0x38A), (0x38C, 0x38C), (0x38E, 0x3A1), (0x3A3, 0x3F5), (0x3F7, 0x481),
    (0x48A, 0x52F), (0x531, 0x556), (0x10A0, 0x10C5), (0x13A0, 0x13F5), (0x13F8, 0x13FD),
    (0x1C90, 0x1CBA), (0x1CBD, 0x1CBF), (0x1D00, 0x1D2B), (0x1D6B, 0x1D77), (0x1D79, 0x1D9A),
    (0x1E00, 0x1F15), (0x1F18, 0x1F1D), (0x1F20, 0x1F45), (0x1F48, 0x1F4D), (0x1F50, 0x1F57),
    (0x1F59, 0x1F59), (0x1F5B, 0x1F5B), (0x1F5D, 0x1F5D), (0x1F5F, 0x1F7D), (0x1F80, 0x1FB4),
    (0x1FB6, 0x1FBC), (0x1FBE, 0x1FBE), (0x1FC2, 0x1FC4), (0x1FC6, 0x1FCC), (0x1FD0, 0x1FD3),
    (0x1FD6, 0x1FDB), (0x1FE0, 0x1FEC), (0x1FF2, 0x1FF4), (0x1FF6, 0x1FFC), (0x2102, 0x2102),
    (0x2107, 0x2107), (0x210A, 0x2113), (0x2115, 0x2115), (0x2119, 0x211D), (0x2124, 0x2124),
    (0x2126, 0x2126), (0x2128, 0x2128), (0x212A, 0x212D), (0x212F, 0x2134), (0x2139, 0x2139),
    (0x213C, 0x213F), (0x2145, 0x2149), (0x214E, 0x214E), (0x2183, 0x2184), (0x2C00, 0x2C7B),
    (0x2C7E, 0x2CE4), (0x2CEB, 0x2CEE), (0x2CF2, 0x2CF3), (0xA640, 0xA66D), (0xA680, 0xA69B),
    (0xA722, 0xA76F), (0xA771, 0xA787), (0xA78B, 0xA78E), (0xAB70, 0xABBF), (0xFB00, 0xFB06),
    (0xFB13, 0xFB17), (0xFF21, 0xFF3A), (0xFF41, 0xFF5A), (0x10400, 0x1044F), (0x104B0, 0x104D3),
    (0x104D8, 0x104FB), (0x10C80, 0x10CB2), (0x10CC0, 0x10CF2), (0x118A0, 0x118DF), (0x1E900, 0x1E943),
]


def char_class(ranges):
    return "[" + "".join("\\x{%X}-\\x{%X}" % r for r in ranges) + "]"


# Regex chains applied one after the other (each splits every piece of the previous one),
# as llama.cpp applies them; vocabulary qwen2 is reused with another pre-tokenizer.
CHAINS = {
    "deepseek-llm": [r"[\r\n]", r"\s?" + char_class(LETTER_RANGES) + "+",
                     r"\s?[!-/:-~\x{FF01}-\x{FF0F}\x{FF1A}-\x{FF5E}\x{2018}-\x{201F}\x{3000}-\x{3002}]+",
                     r"\s+$", r"[\x{4E00}-\x{9FA5}\x{0800}-\x{4E00}\x{AC00}-\x{D7FF}]+", r"\p{N}+"],
    "starcoder": [r"\p{N}", PATTERNS["gpt-2"]],
    "default": [r"[\p{P}\$\+<=>\^~\|]+", PATTERNS["gpt-2"], r"\p{N}+", r"[0-9][0-9][0-9]"],
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


def build(path, pattern, ignore_merges, chain=None):
    r = GGUFReader(path)
    tokens = r.fields["tokenizer.ggml.tokens"].contents()
    merges = r.fields["tokenizer.ggml.merges"].contents()
    vocab = {t: i for i, t in enumerate(tokens)}
    pairs = [tuple(m.split(" ", 1)) for m in merges]
    tok = Tokenizer(models.BPE(vocab=vocab, merges=pairs, ignore_merges=ignore_merges))
    splits = [pre_tokenizers.Split(Regex(p), behavior="isolated", invert=False) for p in (chain or [pattern])]
    tok.pre_tokenizer = pre_tokenizers.Sequence(splits + [
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
    for pre, chain in CHAINS.items():
        tok = build(f"{root}/vocab/ggml-vocab-qwen2.gguf", None, ignore_merges=False, chain=chain)
        for _ in range(count):
            text = random_text(rng)
            ids = tok.encode(text, add_special_tokens=False).ids
            cases.append({"vocab": "qwen2", "pre": pre, "text": text, "ids": ids})
    with open(out, "w") as f:
        json.dump(cases, f, ensure_ascii=False)
    print(f"wrote {len(cases)} cases to {out}")


if __name__ == "__main__":
    main()
