// OpenSSL libcrypto (EVP digests) for Swift.
#ifndef RUNANYWHERE_CCRYPTO_SHIM_H
#define RUNANYWHERE_CCRYPTO_SHIM_H
#include <openssl/evp.h>
#include <openssl/sha.h>
#endif
