#include <curl/curl.h>

/* curl_easy_setopt and curl_easy_getinfo are variadic, which Swift cannot call. */
static inline CURLcode tl_curl_set_long(CURL *c, CURLoption o, long v) { return curl_easy_setopt(c, o, v); }
static inline CURLcode tl_curl_set_string(CURL *c, CURLoption o, const char *v) { return curl_easy_setopt(c, o, v); }
static inline CURLcode tl_curl_set_pointer(CURL *c, CURLoption o, void *v) { return curl_easy_setopt(c, o, v); }
static inline CURLcode tl_curl_set_offset(CURL *c, CURLoption o, curl_off_t v) { return curl_easy_setopt(c, o, v); }
typedef size_t (*tl_curl_data_callback)(char *data, size_t size, size_t count, void *context);
static inline CURLcode tl_curl_set_write_function(CURL *c, tl_curl_data_callback f) {
    return curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, f);
}
static inline CURLcode tl_curl_get_response_code(CURL *c, long *code) {
    return curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, code);
}
static inline CURLcode tl_curl_set_header_function(CURL *c, tl_curl_data_callback f) {
    return curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, f);
}
