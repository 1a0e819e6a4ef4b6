#!/usr/bin/env python3
"""Drives `runanywhere serve` with concurrent streaming chat clients and writes a report.

Started by bench/serve/run.sh, which prepares the model. Starts the server (port 0), warms the model up, then runs
CLIENTS clients back to back for SECONDS twice: with the official openai package (openai.AsyncOpenAI), then with the
curl program (light, so that the server sets the pace). Samples the server's RSS before, during and after each load,
its CPU time, and sends SIGTERM at the end. Every 10th request of each client asks for a long answer and leaves
early (a client that disconnects, so generations are cancelled under load); those are counted apart and not in the
latency figures.
"""
import argparse
import asyncio
import json
import os
import platform
import signal
import statistics
import subprocess
import sys
import time

import openai
from openai import AsyncOpenAI

PROMPTS = ["Once upon a time", "Tom and Lily went to the park.", "The little dog was sad.", "One day, a bird",
           "Sue had a red ball.", "The sun was hot and"]


def rss_mib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def percentile(values, p):
    if not values:
        return float("nan")
    s = sorted(values)
    k = (len(s) - 1) * p / 100
    lo, hi = int(k), min(int(k) + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (k - lo)


class Tally:
    def __init__(self):
        self.ok, self.abandoned, self.typed, self.untyped, self.stalled = [], 0, {}, [], 0
        self.tokens = 0


async def one_request(client, model, n, tally, abandon, stall_timeout):
    messages = [{"role": "system", "content": "Tell a short story."}, {"role": "user", "content": PROMPTS[n % len(PROMPTS)]}]
    start = time.monotonic()
    first = None
    usage = None
    try:
        stream = await asyncio.wait_for(client.chat.completions.create(
            model=model, messages=messages, max_tokens=1000 if abandon else 64, temperature=0.8, seed=n, stream=True,
            stream_options={"include_usage": True}), stall_timeout)
        iterator = stream.__aiter__()
        while True:
            try:
                chunk = await asyncio.wait_for(iterator.__anext__(), stall_timeout)
            except StopAsyncIteration:
                break
            if first is None and chunk.choices and chunk.choices[0].delta.content:
                first = time.monotonic()
                if abandon:
                    await stream.close()
                    tally.abandoned += 1
                    return
            if chunk.usage is not None:
                usage = chunk.usage
        end = time.monotonic()
        if usage is None:
            tally.untyped.append("stream ended without a usage chunk")
            return
        tally.ok.append((first - start if first else end - start, end - start, usage.completion_tokens))
        tally.tokens += usage.completion_tokens
    except asyncio.TimeoutError:
        tally.stalled += 1
    except openai.APIStatusError as e:
        code = (e.body or {}).get("code") if isinstance(e.body, dict) else None
        key = f"{e.status_code} {code}"
        tally.typed[key] = tally.typed.get(key, 0) + 1
    except Exception as e:  # anything else is an untyped failure: the report shows it
        tally.untyped.append(f"{type(e).__name__}: {e}")


async def curl_request(base_url, model, n, tally, abandon, stall_timeout):
    """One streaming request through the curl program: a light C client, so that the server, not the client, sets
    the pace. Its time to the first byte of the body is the time to the first token (the server sends the headers
    with the first text)."""
    body = json.dumps({"model": model, "messages": [{"role": "system", "content": "Tell a short story."},
                                                     {"role": "user", "content": PROMPTS[n % len(PROMPTS)]}],
                       "max_tokens": 1000 if abandon else 64, "temperature": 0.8, "seed": n, "stream": True,
                       "stream_options": {"include_usage": True}})
    args = ["curl", "-sS", "-N", "-H", "Content-Type: application/json", "--data-binary", body,
            "-w", "\n%{http_code} %{time_starttransfer} %{time_total}", "--max-time", "0.3" if abandon else str(stall_timeout),
            base_url + "/chat/completions"]
    proc = await asyncio.create_subprocess_exec(*args, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL)
    out, _ = await proc.communicate()
    text = out.decode("utf-8", "replace")
    body_text, _, trailer = text.rpartition("\n")
    if abandon:
        tally.abandoned += 1
        return
    if proc.returncode == 28:
        tally.stalled += 1
        return
    try:
        status, ttfb, total = trailer.split()
        status = int(status)
    except ValueError:
        tally.untyped.append(f"curl exit {proc.returncode}: {text[-200:]!r}")
        return
    if status != 200:
        try:
            code = json.loads(body_text)["error"]["code"]
        except (ValueError, KeyError, TypeError):
            tally.untyped.append(f"status {status} without an OpenAI error body: {body_text[:200]!r}")
            return
        key = f"{status} {code}"
        tally.typed[key] = tally.typed.get(key, 0) + 1
        return
    events = [b[6:] for b in body_text.split("\n\n") if b.startswith("data: ")]
    usage = None
    for e in events[:-1]:
        chunk = json.loads(e)
        if "error" in chunk:
            tally.untyped.append(f"error event in a stream: {e[:200]}")
            return
        usage = chunk.get("usage") or usage
    if not events or events[-1] != "[DONE]" or usage is None:
        tally.untyped.append(f"stream without usage or [DONE]: {body_text[-200:]!r}")
        return
    tally.ok.append((float(ttfb), float(total), usage["completion_tokens"]))
    tally.tokens += usage["completion_tokens"]


async def client_loop(kind, base_url, model, index, deadline, tally, stall_timeout):
    client = AsyncOpenAI(base_url=base_url, api_key="unused", max_retries=0, timeout=stall_timeout * 2) if kind == "openai" else None
    n = 0
    while time.monotonic() < deadline:
        n += 1
        if client:
            await one_request(client, model, index * 100000 + n, tally, abandon=(n % 10 == 0), stall_timeout=stall_timeout)
        else:
            await curl_request(base_url, model, index * 100000 + n, tally, abandon=(n % 10 == 0), stall_timeout=stall_timeout)
    if client:
        await client.close()


async def sample_rss(pid, stop, samples):
    while not stop.is_set():
        samples.append(rss_mib(pid))
        await asyncio.sleep(0.5)


async def load(kind, base_url, model, pid, seconds, clients, stall_timeout):
    tally = Tally()
    samples = []
    stop = asyncio.Event()
    sampler = asyncio.create_task(sample_rss(pid, stop, samples))
    deadline = time.monotonic() + seconds
    start = time.monotonic()
    await asyncio.gather(*(client_loop(kind, base_url, model, i, deadline, tally, stall_timeout) for i in range(clients)))
    wall = time.monotonic() - start
    stop.set()
    await sampler
    return tally, wall, samples


def phase_rows(kind, tally, wall, cpu, rss_before, samples, rss_after):
    ttft = [t for t, _, _ in tally.ok]
    total = [d for _, d, _ in tally.ok]
    requests = len(tally.ok) + tally.abandoned + sum(tally.typed.values()) + len(tally.untyped) + tally.stalled
    ms = lambda v: f"{v * 1000:.0f}"
    return {
        "requests": f"{requests} in {wall:.1f} s",
        "completed": f"{len(tally.ok)} ({len(tally.ok) / wall:.2f} requests/s)",
        "disconnected on purpose": str(tally.abandoned),
        "typed errors (status code)": ", ".join(f"{k}: {v}" for k, v in sorted(tally.typed.items())) or "none",
        "untyped failures": str(len(tally.untyped)),
        "stalled (no progress for 60 s)": str(tally.stalled),
        "tokens generated (completed requests)": f"{tally.tokens} ({tally.tokens / wall:.1f} tokens/s)",
        "time to first token p50 / p90 / p99, ms": f"{ms(percentile(ttft, 50))} / {ms(percentile(ttft, 90))} / {ms(percentile(ttft, 99))}",
        "total time p50 / p90 / p99, ms": f"{ms(percentile(total, 50))} / {ms(percentile(total, 90))} / {ms(percentile(total, 99))}",
        "server CPU time (share of one core)": f"{cpu:.1f} s ({cpu / wall * 100:.0f}%)",
        "server RSS before / peak / 2 s after, MiB": f"{rss_before:.1f} / {max(samples or [float('nan')]):.1f} / {rss_after:.1f}",
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", required=True)
    ap.add_argument("--model", required=True)
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--command", default="bench/serve/run.sh")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    stall_timeout = 60

    # The server logs a line per request: into a file, never a pipe nobody reads during the load.
    log_path = os.path.join(os.path.dirname(os.path.abspath(args.out)), "..", "work", "serve", "server.log")
    os.makedirs(os.path.dirname(log_path), exist_ok=True)
    log_file = open(log_path, "w")
    server = subprocess.Popen([args.binary, "serve", "--port", "0", "--queue-depth", "16"],
                              stdout=subprocess.PIPE, stderr=log_file, text=True)
    url = server.stdout.readline().strip()
    if not url.startswith("http://"):
        sys.exit(f"serve did not start: {open(log_path).read()}")
    base = url + "/v1"
    rss_start = rss_mib(server.pid)

    async def warm():
        c = AsyncOpenAI(base_url=base, api_key="unused", max_retries=0)
        await c.chat.completions.create(model=args.model, messages=[{"role": "user", "content": "Hi"}], max_tokens=8)
        await c.close()
    asyncio.run(warm())
    time.sleep(1)
    rss_loaded = rss_mib(server.pid)

    phases, failures = {}, []
    for kind in ("openai", "curl"):
        print(f"serve bench: {args.clients} {kind} clients for {args.seconds:.0f} s", file=sys.stderr)
        rss_before, cpu_before = rss_mib(server.pid), cpu_seconds(server.pid)
        tally, wall, samples = asyncio.run(load(kind, base, args.model, server.pid, args.seconds, args.clients, stall_timeout))
        cpu = cpu_seconds(server.pid) - cpu_before
        time.sleep(2)
        phases[kind] = phase_rows(kind, tally, wall, cpu, rss_before, samples, rss_mib(server.pid))
        failures += [f"{kind}: {u}" for u in tally.untyped] + ([f"{kind}: {tally.stalled} stalled"] if tally.stalled else [])
    rss_end = rss_mib(server.pid)

    server.send_signal(signal.SIGTERM)
    try:
        code = server.wait(timeout=30)
    except subprocess.TimeoutExpired:
        server.kill()
        code = "did not exit within 30 s of SIGTERM"
    log_file.close()
    log = open(log_path).read().strip().splitlines()
    logged = sum(1 for line in log if line.startswith("POST /v1/chat/completions "))
    verdict_ok = not failures and code == 0

    lines = [
        "# `runanywhere serve` under load",
        "",
        f"`{args.command}`: {args.clients} concurrent streaming chat clients for {args.seconds:.0f} s, twice against one "
        f"server: first the official `openai` package {openai.__version__} (`AsyncOpenAI`, `stream_options.include_usage`), "
        "then the `curl` program (a light C client, so that the server rather than Python sets the pace). One model, "
        f"`{args.model}` (stories260K, F32, from RUNANYWHERE_TESTDATA); each request `max_tokens: 64`, `temperature: 0.8`, "
        "its own seed. Requests to one model run one at a time in arrival order, so the clients queue behind each "
        "other: time to first token includes the wait in the queue. Every 10th request of each client asks for 1000 "
        "tokens and leaves early (openai: after its first text; curl: after 0.3 s), so the server cancels generations "
        "under load. Debug build with `RUNANYWHERE_DEV_OPTIMIZE=1`; clients and server share this machine's "
        f"{os.cpu_count()} cores ({platform.processor() or platform.machine()}, shared with other work: absolute figures "
        "are noisy).",
        "",
        "| | openai clients | curl clients |",
        "|---|---:|---:|",
        *[f"| {k} | {phases['openai'][k]} | {phases['curl'][k]} |" for k in phases["openai"]],
        "",
        f"Server RSS: {rss_start:.1f} MiB started, {rss_loaded:.1f} MiB with the model loaded, {rss_end:.1f} MiB after "
        f"both loads ({rss_end - rss_loaded:+.1f} MiB). SIGTERM: exit code {code}.",
        "",
        f"Verdict: {'every request completed or got a typed error, none stalled, clean exit.' if verdict_ok else 'FAILED.'}",
        "",
        f"The server logged {logged} chat completion requests (one line each, in bench/work/serve/server.log). Its last words:",
        "",
        "```",
        *log[-3:],
        "```",
    ]
    if failures:
        lines += ["", "Failures:", ""] + [f"- {u}" for u in failures[:20]]
    with open(args.out, "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    sys.exit(0 if verdict_ok else 1)


if __name__ == "__main__":
    main()
