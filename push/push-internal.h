/* push-internal.h - what push/'s files share and no one else needs: the
 * libcurl functions, loaded at the first upload (curl.c). */
#ifndef EMBER_PUSH_INTERNAL_H
#define EMBER_PUSH_INTERNAL_H

#define CURL_DISABLE_TYPECHECK     /* setopt is called through a pointer */
#include <curl/curl.h>

/* The libcurl entry points push/ calls, with libcurl's own signatures. */
struct push_curl {
	CURLcode (*global_init)(long flags);
	void (*global_cleanup)(void);
	CURL *(*easy_init)(void);
	CURLcode (*easy_setopt)(CURL *h, CURLoption option, ...);
	CURLcode (*easy_perform)(CURL *h);
	CURLcode (*easy_getinfo)(CURL *h, CURLINFO info, ...);
	void (*easy_cleanup)(CURL *h);
	const char *(*easy_strerror)(CURLcode rc);
	char *(*easy_escape)(CURL *h, const char *s, int len);
	void (*free)(void *p);
	struct curl_slist *(*slist_append)(struct curl_slist *list, const char *s);
	void (*slist_free_all)(struct curl_slist *list);
};

/* libcurl's functions, loaded once per process; NULL with err_set() when
 * libcurl is not installed. */
const struct push_curl *push_curl(void);

#endif
