// libarchive for Swift (tar.gz/bz2/xz/zst and zip).
#ifndef RUNANYWHERE_CARCHIVE_SHIM_H
#define RUNANYWHERE_CARCHIVE_SHIM_H
#include <archive.h>
#include <archive_entry.h>
#endif
