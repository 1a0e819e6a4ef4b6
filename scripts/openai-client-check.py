#!/usr/bin/env python3
"""Talks to a running `runanywhere serve` with the official `openai` Python package, as other tools do.

Usage: openai-client-check.py BASE_URL MODEL [API_KEY]
  BASE_URL  e.g. http://127.0.0.1:8080/v1
Checks: models.list names MODEL; chat completion (non-streaming, temperature 0) has text, finish_reason and usage;
the same request streamed (with stream_options.include_usage) gives the same text and usage; a text completion;
an unknown model raises NotFoundError; with API_KEY, a wrong key raises AuthenticationError.
Prints one JSON object with what it saw on stdout; exits 1 with the failed check on stderr.
"""
import json
import sys

import openai
from openai import OpenAI


def fail(message):
    print("openai-client-check: " + message, file=sys.stderr)
    sys.exit(1)


def main():
    if len(sys.argv) not in (3, 4):
        fail("usage: openai-client-check.py BASE_URL MODEL [API_KEY]")
    base_url, model = sys.argv[1], sys.argv[2]
    key = sys.argv[3] if len(sys.argv) == 4 else "unused"
    client = OpenAI(base_url=base_url, api_key=key, max_retries=0, timeout=120)
    seen = {"openai_version": openai.__version__}

    ids = [m.id for m in client.models.list().data]
    if model not in ids:
        fail(f"models.list() does not name {model}: {ids}")
    seen["models"] = ids

    messages = [{"role": "system", "content": "You tell stories."}, {"role": "user", "content": "Once upon a time"}]
    whole = client.chat.completions.create(model=model, messages=messages, max_tokens=16, temperature=0)
    choice = whole.choices[0]
    if choice.message.role != "assistant" or not choice.message.content:
        fail(f"chat completion without assistant text: {whole}")
    if choice.finish_reason not in ("stop", "length"):
        fail(f"unexpected finish_reason {choice.finish_reason}")
    if whole.usage is None or whole.usage.total_tokens != whole.usage.prompt_tokens + whole.usage.completion_tokens:
        fail(f"bad usage block: {whole.usage}")
    seen["chat"] = {"text": choice.message.content, "finish_reason": choice.finish_reason,
                    "usage": whole.usage.model_dump()}

    pieces, finish, usage, chunks = [], None, None, 0
    stream = client.chat.completions.create(model=model, messages=messages, max_tokens=16, temperature=0, stream=True,
                                            stream_options={"include_usage": True})
    for chunk in stream:
        chunks += 1
        if chunk.usage is not None:
            usage = chunk.usage
        for c in chunk.choices:
            if c.delta.content:
                pieces.append(c.delta.content)
            if c.finish_reason:
                finish = c.finish_reason
    streamed = "".join(pieces)
    if streamed != choice.message.content:
        fail(f"streamed text {streamed!r} differs from the non-streamed {choice.message.content!r}")
    if finish != choice.finish_reason or usage is None or usage.model_dump() != whole.usage.model_dump():
        fail(f"stream ended with finish_reason {finish} and usage {usage}")
    seen["stream"] = {"chunks": chunks, "text": streamed, "finish_reason": finish}

    completion = client.completions.create(model=model, prompt="Once upon a time", max_tokens=8, temperature=0)
    if not completion.choices[0].text:
        fail(f"text completion without text: {completion}")
    seen["completion"] = completion.choices[0].text

    try:
        client.chat.completions.create(model="no-such-model", messages=messages, max_tokens=4)
        fail("an unknown model did not raise")
    except openai.NotFoundError as e:
        seen["unknown_model"] = e.status_code
    if len(sys.argv) == 4:
        try:
            OpenAI(base_url=base_url, api_key=key + "-wrong", max_retries=0).models.list()
            fail("a wrong API key was accepted")
        except openai.AuthenticationError as e:
            seen["wrong_key"] = e.status_code
    print(json.dumps(seen))


if __name__ == "__main__":
    main()
