#!/usr/bin/env bash
# Speech benchmark: Moonshine base (English) through RunAnywhere (RunAnywhere.stt on the sherpa-onnx backend)
# against sherpa-onnx's own decoder, sherpa-onnx-offline (PyPI sherpa-onnx-bin 2.0.1), on the same model files,
# the same library build and the same LibriVox clips. Writes bench/results/stt.md.
#   bench/stt/run.sh [ROUNDS]     (default 3 rounds, alternating the two decoders)
# Needs scripts/install-speech.sh and scripts/fetch-speech-testdata.sh (run here when missing).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
rounds="${1:-3}"
threads=2
export PATH=/opt/swift/usr/bin:$PATH
scripts/install-speech.sh
scripts/fetch-speech-testdata.sh
data="${RUNANYWHERE_SPEECH_TESTDATA:-$root/.runanywhere-deps/speech-testdata}"
lib="$root/.runanywhere-deps/sherpa-onnx/sherpa_onnx/lib"
work="$root/bench/work/stt"
mkdir -p "$work"

# sherpa-onnx-offline from its wheel (it needs libonnxruntime.so, which the core wheel has).
bin="$work/sherpa-onnx-offline"
if [ ! -x "$bin" ]; then
  python3 -m pip download --quiet --disable-pip-version-check --no-deps -d "$work" sherpa-onnx-bin==2.0.1
  py=python3
  . "$root/scripts/lib/wheel.sh"
  wheel_extract "$(ls "$work"/sherpa_onnx_bin-2.0.1-*.whl)" sherpa_onnx_bin-2.0.1.data/data/bin/sherpa-onnx-offline "$work"
  chmod +x "$bin"
fi

RUNANYWHERE_DEV_OPTIMIZE=1 swift build --product stt-bench >&2
bench="$root/.build/debug/stt-bench"
clips=("$data"/librivox/*.wav)
m="$data/moonshine-base-en"

for r in $(seq 1 "$rounds"); do
  echo "round $r: sherpa-onnx-offline" >&2
  for c in "${clips[@]}"; do
    start=$(date +%s.%N)
    LD_LIBRARY_PATH="$lib" "$bin" --num-threads=$threads --moonshine-encoder="$m/encoder_model.ort" \
      --moonshine-merged-decoder="$m/decoder_model_merged.ort" --tokens="$m/tokens.txt" "$c" > "$work/theirs-$r-$(basename "$c").log" 2>&1
    end=$(date +%s.%N)
    echo "WALL $start $end" >> "$work/theirs-$r-$(basename "$c").log"
  done
  echo "round $r: RunAnywhere" >&2
  # One process per clip, as sherpa-onnx-offline runs: each clip is the first decode after a load.
  for c in "${clips[@]}"; do
    "$bench" "$data" $threads 1 "$c" > "$work/ours-$r-$(basename "$c").json"
  done
done

python3 - "$work" "$rounds" "$data" "$(nproc)" "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)" <<'PY' > bench/results/stt.md
import json, os, re, statistics as st, sys
work, rounds, data, ncpu, cpu = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]

def words(t):
    t = t.lower().replace("mr.", "mister").replace("mrs.", "missus")
    return re.findall(r"[a-z0-9']+", t)

def wer(ref, hyp):
    prev = list(range(len(hyp) + 1))
    for i in range(1, len(ref) + 1):
        cur = [i] + [0] * len(hyp)
        for j in range(1, len(hyp) + 1):
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ref[i - 1] != hyp[j - 1]))
        prev = cur
    return prev[-1] / max(1, len(ref))

refs = {}
for line in open(os.path.join(data, "librivox", "transcription")):
    m = re.match(r"(.*)\((.*)\)\s*$", line)
    if m: refs[m.group(2) + ".wav"] = words(m.group(1).replace("<s>", "").replace("</s>", ""))

names = sorted(f[len("ours-1-"):-len(".json")] for f in os.listdir(work) if f.startswith("ours-1-") and f.endswith(".json"))
# ours[r][clip] = that round's report for that clip (its own process)
ours = [{n: json.load(open(os.path.join(work, f"ours-{r}-{n}.json"))) for n in names} for r in range(1, rounds + 1)]
clips = names
rows, same_all = [], True
tot = {"ref": 0, "ours_err": 0, "theirs_err": 0}
rtf_o, rtf_t, load_t = [], [], []
for name in clips:
    o = [rep[name]["clips"][0] for rep in ours]
    audio = o[0]["audioSeconds"]
    o_rtf = st.median([c["processingSeconds"][0] / audio for c in o])
    t_rtfs, t_text, t_load = [], None, []
    for r in range(1, rounds + 1):
        log = open(os.path.join(work, f"theirs-{r}-{name}.log")).read()
        el = float(re.search(r"Elapsed seconds: ([0-9.]+)", log).group(1))
        t_rtfs.append(el / audio)
        t_text = json.loads(re.findall(r"^\{.*\}$", log, re.M)[-1])["text"]
        s, e = map(float, re.search(r"WALL ([0-9.]+) ([0-9.]+)", log).groups())
        t_load.append(e - s - el)
    t_rtf = st.median(t_rtfs)
    rtf_o.append(o_rtf); rtf_t.append(t_rtf); load_t.append(st.median(t_load))
    ow, tw, ref = words(o[0]["text"]), words(t_text), refs[name]
    same = ow == tw
    same_all &= same
    tot["ref"] += len(ref); tot["ours_err"] += wer(ref, ow) * len(ref); tot["theirs_err"] += wer(ref, tw) * len(ref)
    rows.append(f"| {name.replace('sense_and_sensibility_01_austen_64kb-', '')} | {audio:.2f} | {wer(ref, ow):.3f} | {wer(ref, tw):.3f} | {'yes' if same else 'NO'} | {o_rtf:.3f} | {t_rtf:.3f} | {o_rtf / t_rtf:.2f} |")

load_o = st.median([rep[n]["loadSeconds"][0] for rep in ours for n in names])
mem = [rep[n] for rep in ours for n in names]
r0 = {k: st.median([m[k] for m in mem]) for k in mem[0] if k.startswith(("rss", "heap"))}
threads_used = mem[0]["threads"]
mb = lambda b: f"{b / 1e6:.0f} MB"
print("# Speech recognition: RunAnywhere vs sherpa-onnx-offline\n")
print(f"Moonshine base English (moonshine-cpp 0.1.4: encoder_model.ort + decoder_model_merged.ort, tokens.txt from tokenizer.bin), "
      f"the 5 LibriVox clips of Debian's pocketsphinx-testdata (16 kHz PCM16), {threads_used} threads, median of {rounds} alternating rounds, one process per clip for both (each clip is the first decode after a load). "
      f"Both decoders run the same libsherpa-onnx-c-api / libonnxruntime from sherpa-onnx-core 2.0.1. Machine: {cpu}, {ncpu} cores, "
      f"shared with other jobs while measured (timings are noisy; both sides equally).\n")
print("Reproduce: `bench/stt/run.sh [ROUNDS]`.\n")
print("| clip | audio s | WER ours | WER sherpa-onnx-offline | same words | RTF ours | RTF theirs | ours/theirs |")
print("|---|---|---|---|---|---|---|---|")
print("\n".join(rows))
print(f"\nAll clips: WER ours {tot['ours_err'] / tot['ref']:.3f}, theirs {tot['theirs_err'] / tot['ref']:.3f}; same words on every clip: **{'yes' if same_all else 'NO'}**. "
      f"WER counts words after lower-casing, dropping punctuation, splitting hyphens, and 'Mr.' as 'mister'.\n")
print(f"- Real-time factor, mean over clips: ours {st.mean(rtf_o):.3f}, theirs {st.mean(rtf_t):.3f} (ratio {st.mean(rtf_o) / st.mean(rtf_t):.2f}). "
      "Ours is `TranscriptionResult.processingSeconds` (WAV read + recognition); theirs is sherpa-onnx-offline's `Elapsed seconds` (the same span).")
print(f"- Time to load: ours {load_o:.2f} s (`LoadedModel.loadSeconds`, first load in the process, including opening the library); "
      f"theirs {st.median(load_t):.2f} s (process wall time minus its `Elapsed seconds`: start-up plus recognizer creation).")
print(f"- Resident memory of the benchmark process (median over its {len(mem)} runs): before the first load {mb(r0['rssBeforeFirstLoad'])}, loaded {mb(r0['rssAfterLoad'])}, "
      f"after unload {mb(r0['rssAfterFirstUnload'])} (+{(r0['rssAfterFirstUnload'] / r0['rssBeforeFirstLoad'] - 1) * 100:.1f}%: the library's code stays mapped); "
      f"heap alone {mb(r0['heapBeforeFirstLoad'])} → {mb(r0['heapAfterLoad'])} → {mb(r0['heapAfterFirstUnload'])} "
      f"(+{(r0['heapAfterFirstUnload'] / r0['heapBeforeFirstLoad'] - 1) * 100:.1f}%). Second load/unload cycle: {mb(r0['rssBeforeSecondLoad'])} → "
      f"{mb(r0['rssAfterSecondUnload'])} ({(r0['rssAfterSecondUnload'] / r0['rssBeforeSecondLoad'] - 1) * 100:+.1f}%).")
PY
cat bench/results/stt.md
