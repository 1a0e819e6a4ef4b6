#!/usr/bin/env bash
# Installs what the package needs to build on Debian/Ubuntu: the C libraries behind the
# CCurl, CCrypto, CArchive, CPNG, CJPEG and CMicroHTTPD modules, and pkg-config. Safe to run again: installs only what is missing.
set -euo pipefail

need=()
have_pc() { pkg-config --exists "$1" 2>/dev/null; }
command -v pkg-config >/dev/null 2>&1 || need+=(pkg-config)
have_pc libcurl || need+=(libcurl4-openssl-dev)
have_pc libcrypto || need+=(libssl-dev)
have_pc libarchive || need+=(libarchive-dev)
have_pc libpng || need+=(libpng-dev)
have_pc libjpeg || need+=(libjpeg62-turbo-dev)
have_pc libmicrohttpd || need+=(libmicrohttpd-dev)

if [ ${#need[@]} -gt 0 ]; then
  echo "bootstrap: installing ${need[*]}" >&2
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null 2>&1 || { echo "bootstrap: need root (or sudo) to apt-get install ${need[*]}" >&2; exit 1; }
    sudo="sudo"
  fi
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

if ! command -v swift >/dev/null 2>&1; then
  if [ -x /opt/swift/usr/bin/swift ]; then
    echo "bootstrap: add /opt/swift/usr/bin to PATH" >&2
  else
    echo "bootstrap: Swift 6 is required (https://www.swift.org/install/linux/)" >&2
  fi
  exit 1
fi
