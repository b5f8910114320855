// Shared by the forwarders of each lazily opened library (see include/CCodecLoader.h). Each
// library's .c file includes this once: the names below are static to that file.
#ifndef WEBIMAGE_LAZY_H
#define WEBIMAGE_LAZY_H

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

// Whether WEBIMAGE_DISABLE_CODECS (a comma-separated list; spaces and case ignored) names `name`.
static inline int webimage_lazy_disabled(const char *name) {
    const char *list = getenv("WEBIMAGE_DISABLE_CODECS");
    size_t length = strlen(name);
    for (const char *p = list; p && *p;) {
        const char *end = strchr(p, ',');
        const char *last = end ? end : p + strlen(p);
        while (p < last && *p == ' ') p++;
        while (last > p && last[-1] == ' ') last--;
        if ((size_t)(last - p) == length && strncasecmp(p, name, length) == 0) return 1;
        p = end ? end + 1 : NULL;
    }
    return 0;
}

// A library's function table, its opening and its forwarders, from an X-macro list
// `LIST(F, V)` where F(ret, name, params, args) names a function with a result and
// V(name, params, args) a void one. The forwarders are only called after
// webimage_load_NAME() returned NULL (the coders check first); the table is written once,
// inside pthread_once, and only read after it returned.
#define WEBIMAGE_LAZY_LIBRARY(NAME, LIST, PACKAGE, ...)                                            \
    static struct {                                                                               \
        LIST(WEBIMAGE_LAZY_FIELD, WEBIMAGE_LAZY_VFIELD)                                           \
    } lazy;                                                                                       \
    static char lazy_error[512];                                                                  \
    static const char *lazy_outcome;                                                              \
    static void lazy_open(void) {                                                                 \
        static const char *const sonames[] = {__VA_ARGS__};                                       \
        if (webimage_lazy_disabled(#NAME)) {                                                      \
            lazy_outcome = "switched off by WEBIMAGE_DISABLE_CODECS";                             \
            return;                                                                               \
        }                                                                                         \
        void *handle = NULL;                                                                      \
        for (unsigned i = 0; i < sizeof sonames / sizeof sonames[0] && !handle; i++)               \
            handle = dlopen(sonames[i], RTLD_NOW | RTLD_LOCAL);                                   \
        if (!handle) {                                                                            \
            const char *reason = dlerror();                                                       \
            snprintf(lazy_error, sizeof lazy_error, "%s cannot be loaded (Debian package %s): %s", \
                     sonames[0], PACKAGE, reason ? reason : "not found");                         \
            lazy_outcome = lazy_error;                                                            \
            return;                                                                               \
        }                                                                                         \
        LIST(WEBIMAGE_LAZY_LOAD, WEBIMAGE_LAZY_VLOAD)                                             \
        lazy_outcome = NULL;                                                                      \
    }                                                                                             \
    const char *webimage_load_##NAME(void) {                                                      \
        static pthread_once_t once = PTHREAD_ONCE_INIT;                                           \
        pthread_once(&once, lazy_open);                                                           \
        return lazy_outcome;                                                                      \
    }                                                                                             \
    LIST(WEBIMAGE_LAZY_FORWARD, WEBIMAGE_LAZY_VFORWARD)

#define WEBIMAGE_LAZY_FIELD(ret, name, params, args) ret (*name) params;
#define WEBIMAGE_LAZY_VFIELD(name, params, args) void (*name) params;
// `*(void **)&pointer = dlsym(…)`: the POSIX way to store a symbol in a function pointer.
#define WEBIMAGE_LAZY_LOAD(ret, name, params, args)                                                \
    if (!(*(void **)&lazy.name = dlsym(handle, #name))) {                                          \
        snprintf(lazy_error, sizeof lazy_error, "the installed library lacks %s", #name);         \
        lazy_outcome = lazy_error;                                                                \
        return;                                                                                   \
    }
#define WEBIMAGE_LAZY_VLOAD(name, params, args) WEBIMAGE_LAZY_LOAD(void, name, params, args)
#define WEBIMAGE_LAZY_FORWARD(ret, name, params, args) \
    ret name params { return lazy.name args; }
#define WEBIMAGE_LAZY_VFORWARD(name, params, args) \
    void name params { lazy.name args; }

#endif
