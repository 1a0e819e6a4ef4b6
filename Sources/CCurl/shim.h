// libcurl for Swift. curl_easy_setopt/getinfo are variadic, which Swift cannot call:
// these typed wrappers are the only reason this header exists.
#ifndef RUNANYWHERE_CCURL_SHIM_H
#define RUNANYWHERE_CCURL_SHIM_H
#include <curl/curl.h>

static inline CURLcode ra_curl_setopt_long(CURL *h, CURLoption o, long v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode ra_curl_setopt_string(CURL *h, CURLoption o, const char *v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode ra_curl_setopt_pointer(CURL *h, CURLoption o, void *v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode ra_curl_setopt_off(CURL *h, CURLoption o, curl_off_t v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode ra_curl_setopt_slist(CURL *h, CURLoption o, struct curl_slist *v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode ra_curl_setopt_write_cb(CURL *h, size_t (*cb)(char *, size_t, size_t, void *)) { return curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, cb); }
static inline CURLcode ra_curl_setopt_header_cb(CURL *h, size_t (*cb)(char *, size_t, size_t, void *)) { return curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, cb); }
static inline CURLcode ra_curl_setopt_xferinfo_cb(CURL *h, int (*cb)(void *, curl_off_t, curl_off_t, curl_off_t, curl_off_t)) { return curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, cb); }
static inline CURLcode ra_curl_getinfo_long(CURL *h, CURLINFO i, long *v) { return curl_easy_getinfo(h, i, v); }
static inline CURLcode ra_curl_getinfo_off(CURL *h, CURLINFO i, curl_off_t *v) { return curl_easy_getinfo(h, i, v); }
static inline CURLcode ra_curl_getinfo_string(CURL *h, CURLINFO i, char **v) { return curl_easy_getinfo(h, i, v); }

// curl_multi_info_read hands back a struct whose result sits in a union; this reads the first
// finished transfer of `m` without Swift having to reach into the union.
// Returns 1 and fills *result when a transfer has finished, 0 when none has.
static inline int ra_curl_multi_next_result(CURLM *m, CURLcode *result) {
    int pending = 0;
    CURLMsg *msg;
    while ((msg = curl_multi_info_read(m, &pending)) != NULL) {
        if (msg->msg == CURLMSG_DONE) { *result = msg->data.result; return 1; }
    }
    return 0;
}
#endif
