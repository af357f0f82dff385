/* nvcc_markers.h - the PTX with its region markers, kept by `mgpu-harness nvcc`
 * for exec --trace (nvcc_markers.c). */
#ifndef MH_NVCC_MARKERS_H
#define MH_NVCC_MARKERS_H
#include <stddef.h>
/* For each .cu input among args[0..n) that names a marker: an object (in tmpdir) registering its
 * PTX.  *objs (malloc'd paths) is what to link in; 0, or -1 when out of memory. */
int mh_nvcc_marker_objects(const char *nvcc, char *const *args, size_t n, const char *tmpdir, char ***objs,
                           size_t *nobjs);
#endif
