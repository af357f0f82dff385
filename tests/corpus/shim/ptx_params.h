/* The parameter sizes of one .entry of a PTX file (for the recording stand-in). */
#ifndef CORPUS_PTX_PARAMS_H
#define CORPUS_PTX_PARAMS_H
#include <stddef.h>

#define PTX_MAX_PARAMS 64
typedef struct { int n; size_t size[PTX_MAX_PARAMS]; } ptx_entry;

/* 0 and the sizes of `.entry name(...)`'s parameters in order, -1 when the file or entry is missing. */
int ptx_entry_params(const char *path, const char *name, ptx_entry *e);
#endif
