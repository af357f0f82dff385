/* ptx_source.h - the CUDA (or other) source line of a PTX statement, from the .loc
 * directive in force there and the .file it names: what errors about a statement show
 * beside the PTX line, so a user reads the line they edit (issue 34). */
#ifndef MH_PTX_SOURCE_H
#define MH_PTX_SOURCE_H

#include <stddef.h>
#include <stdint.h>
#include "frontend/ptx.h"

/* "FILE:LINE" of the last .loc before byte `off` of the module's text inside its function
 * (", inlined at FILE:LINE" added when the .loc says so; a .file given as a directory and
 * a name is joined with '/'; a file number without its .file is "<file N>") in buf: 1;
 * 0 (buf "") when the statement has no .loc (a module without line information, an
 * offset of 0: a statement the front end made). */
int mh_ptx_source_at(const mh_ptx_module *m, size_t off, char *buf, size_t len);

/* Where a statement is, for a message: "SRC (PTX path:line)" when it has a source line,
 * else "path:line". */
void mh_ptx_where(const mh_ptx_module *m, size_t off, uint32_t line, char *buf, size_t len);

#endif
