/* demangle.c - kernel names demangled and shortened (see demangle.h).
 *
 * The demangler is libiberty's cplus_demangle_v3 (Debian: libiberty-dev, a static C library,
 * the one binutils and gdb use), with its recursion limit off: the C++ runtime's __cxa_demangle
 * returns nothing for the names of nvcc's heavily templated kernels (it gives up past ~1,000
 * characters, at its recursion limit), which are exactly the names to be shortened, and it
 * would bring the C++ runtime into a C project.  Without the limit the recursion goes as deep as
 * the name's nesting, so names longer than MAX_MANGLED are left mangled (cut) rather than risk
 * the stack. */
#include "base/demangle.h"

#include <libiberty/demangle.h>
#include <stdlib.h>
#include <string.h>

#define MAX_MANGLED (64 * 1024)

static char *demangle_with(const char *name, int opts)
{
    if (!name || strncmp(name, "_Z", 2) || strlen(name) > MAX_MANGLED) return NULL;
    return cplus_demangle_v3(name, opts | DMGL_NO_RECURSE_LIMIT);
}

char *mh_demangle(const char *name) { return demangle_with(name, DMGL_PARAMS | DMGL_ANSI); }

/* The end of the template argument starting at s (its ',' or the '>' closing the list). */
static const char *arg_end(const char *s)
{
    int depth = 0;
    for (; *s; s++) {
        if (*s == '<' || *s == '(' || *s == '[') depth++;
        else if ((*s == '>' || *s == ')' || *s == ']') && depth-- == 0) return s;
        else if (*s == ',' && depth == 0) return s;
    }
    return s;
}

/* Appends to out (cap bytes, at *n) n bytes of s, as many as fit. */
static void put(char *out, size_t cap, size_t *at, const char *s, size_t n)
{
    if (*at + n >= cap) n = *at + 1 < cap ? cap - 1 - *at : 0;
    memcpy(out + *at, s, n);
    *at += n;
    out[*at] = 0;
}

/* s[0 .. n) in at most `budget` bytes into out (cap > budget): as it is when it fits; else its
 * name, then the template arguments that fit, the first one shortened in turn when none does,
 * then "...>"; a name without a template list cut, with "...". */
static void shorten(const char *s, size_t n, size_t budget, char *out, size_t cap, size_t *at)
{
    if (n <= budget) {
        put(out, cap, at, s, n);
        return;
    }
    const char *lt = memchr(s, '<', n);
    if (!lt || (size_t)(lt - s) + 6 > budget) { /* "name...": the name itself is too long */
        put(out, cap, at, s, budget > 3 ? budget - 3 : 0);
        put(out, cap, at, "...", 3);
        return;
    }
    size_t left = budget - (size_t)(lt - s) - 1;
    put(out, cap, at, s, (size_t)(lt - s) + 1);
    const char *a = lt + 1, *end = s + n;
    int first = 1;
    while (a < end && *a != '>') {
        while (*a == ' ') a++;
        const char *e = arg_end(a);
        size_t len = (size_t)(e - a), more = first ? 0 : 2;
        int last = *e != ',';
        if (len + more + (last ? 1 : 6) <= left) { /* ", arg" and room for ", ...>" unless it is the last */
            if (!first) put(out, cap, at, ", ", 2);
            put(out, cap, at, a, len);
            left -= len + more;
        } else {
            if (first && left > 12) { /* the first argument alone is too long: shortened in turn */
                shorten(a, len, left - (last ? 1 : 5), out, cap, at);
                put(out, cap, at, last ? ">" : ", ...>", last ? 1 : 6);
            } else put(out, cap, at, first ? "...>" : ", ...>", first ? 4 : 6);
            return;
        }
        first = 0;
        if (last) break;
        a = e + 1;
    }
    put(out, cap, at, ">", 1);
}

char *mh_short_name(const char *name)
{
    char *d = demangle_with(name, 0);
    const char *s = d ? d : name ? name : "";
    char *out = malloc(MH_SHORT_NAME_MAX + 1);
    if (out) {
        size_t at = 0;
        out[0] = 0;
        shorten(s, strlen(s), MH_SHORT_NAME_MAX, out, MH_SHORT_NAME_MAX + 1, &at);
    }
    free(d);
    return out;
}
