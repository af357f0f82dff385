/* demangle.h - kernel names for people: an Itanium C++ mangled name (nvcc's "_Z...") demangled,
 * and shortened for messages ("matmulKernel5<128, 256, ...>"), so a message keeps its cause
 * after a 1.7 KB template name (issue 30); the full name is kernel:info's. */
#ifndef MH_DEMANGLE_H
#define MH_DEMANGLE_H

#include <stddef.h>

/* The longest short name (bytes, without the NUL). */
#define MH_SHORT_NAME_MAX 64

/* The demangled name of `name` with its parameter types ("void k<128>(float*, int)"), malloc'd;
 * NULL when `name` is not a mangled C++ name (or out of memory). */
char *mh_demangle(const char *name);

/* The name for messages, malloc'd: the demangled name without parameters and return type, its
 * template arguments past MH_SHORT_NAME_MAX bytes left out as "..." (the first one shortened in
 * turn when it alone is too long); a plain name as it is, cut with "..." past the limit.  NULL:
 * out of memory. */
char *mh_short_name(const char *name);

#endif
