/* read_file.h - a whole file read into memory until its end (a pipe or
 * /dev/stdin too: no size is taken from fseek/ftell). */
#ifndef MH_READ_FILE_H
#define MH_READ_FILE_H

#include <stddef.h>
#include "base/error.h"

/* The file's bytes, NUL-terminated (malloc'd; *len without the NUL, len may be NULL).  max > 0:
 * a file longer than max bytes is refused.  NULL on failure, with e set (e may be NULL):
 * MH_E_IO (cannot open, read error, longer than max) or MH_E_NO_MEMORY. */
char *mh_read_file(const char *path, size_t max, size_t *len, mh_error *e);

#endif
