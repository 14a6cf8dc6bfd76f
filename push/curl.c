/* curl.c - libcurl, loaded when the first upload needs it.  Linked as an
 * ordinary library, libcurl and what it brings (GnuTLS, OpenSSL, LDAP,
 * Kerberos, whose constructors run at load) cost every ember start about
 * 20 ms of its 38 (measured with `perf stat -r 50`), for every command,
 * though only push uploads; so the library is opened with dlopen here. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "common/common.h"
#include "push/push-internal.h"

/* The SONAME of libcurl's ABI 4, stable since 2006 (Debian's libcurl4). */
#define PUSH_CURL_SONAME "libcurl.so.4"

static struct push_curl loaded;
static bool loaded_ok;
static char load_error[256];
static pthread_once_t load_once = PTHREAD_ONCE_INIT;

/* One symbol into *slot; false when the library lacks it. */
static bool bind_symbol(void *lib, const char *name, void *slot)
{
	void *f = dlsym(lib, name);
	if (!f) {
		snprintf(load_error, sizeof(load_error), "%s has no %s: install libcurl4 (make deps)",
			 PUSH_CURL_SONAME, name);
		return false;
	}
	memcpy(slot, &f, sizeof(f));    /* object to function pointer, as POSIX allows */
	return true;
}

static void load(void)
{
	void *lib = dlopen(PUSH_CURL_SONAME, RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		snprintf(load_error, sizeof(load_error), "cannot load %s (%s): install libcurl4 (make deps)",
			 PUSH_CURL_SONAME, dlerror());
		return;
	}
	struct push_curl *c = &loaded;
	loaded_ok = bind_symbol(lib, "curl_global_init", &c->global_init) &&
		    bind_symbol(lib, "curl_global_cleanup", &c->global_cleanup) &&
		    bind_symbol(lib, "curl_easy_init", &c->easy_init) &&
		    bind_symbol(lib, "curl_easy_setopt", &c->easy_setopt) &&
		    bind_symbol(lib, "curl_easy_perform", &c->easy_perform) &&
		    bind_symbol(lib, "curl_easy_getinfo", &c->easy_getinfo) &&
		    bind_symbol(lib, "curl_easy_cleanup", &c->easy_cleanup) &&
		    bind_symbol(lib, "curl_easy_strerror", &c->easy_strerror) &&
		    bind_symbol(lib, "curl_easy_escape", &c->easy_escape) &&
		    bind_symbol(lib, "curl_free", &c->free) &&
		    bind_symbol(lib, "curl_slist_append", &c->slist_append) &&
		    bind_symbol(lib, "curl_slist_free_all", &c->slist_free_all);
	/* The library stays loaded to the end: its threads and atexit
	 * handlers may outlive any one client. */
}

const struct push_curl *push_curl(void)
{
	pthread_once(&load_once, load);
	if (!loaded_ok) {
		err_set("%s", load_error);
		return NULL;
	}
	return &loaded;
}
