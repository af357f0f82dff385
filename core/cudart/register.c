/* register.c - what nvcc's generated code calls before main: a fat binary per
 * translation unit, its kernels (host stub -> mangled device name) and its
 * variables (host shadow -> device name), and the kernel handle CUDA 13's
 * launch sequence asks for (__cudaGetKernel).  The PTX is read and parsed at
 * a module's first use, not here. */
#include "cudart/cudart.h"
#include "base/demangle.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cr_push(void ***arr, size_t *n, size_t *cap, void *p)
{
    if (*n == *cap) {
        size_t c = *cap ? *cap * 2 : 16;
        void **na = realloc(*arr, c * sizeof *na);
        if (!na) return -1;
        *arr = na;
        *cap = c;
    }
    (*arr)[(*n)++] = p;
    return 0;
}

CR_EXPORT void **__cudaRegisterFatBinary(void *fatCubin);
void **__cudaRegisterFatBinary(void *fatCubin)
{
    cr_lock();
    cr_state *s = cr_get();
    cr_module *m = calloc(1, sizeof *m);
    if (!s || !m || cr_push((void ***)&s->mods, &s->nmods, &s->cap_mods, m)) {
        if (s) cr_say("out of memory registering a fat binary");
        free(m);
        cr_unlock();
        return NULL;
    }
    m->wrapper = fatCubin;
    m->index = (int)s->nmods - 1;
    cr_unlock();
    return (void **)m;
}

CR_EXPORT void __cudaRegisterFatBinaryEnd(void **h);
void __cudaRegisterFatBinaryEnd(void **h) { (void)h; }

CR_EXPORT void __cudaUnregisterFatBinary(void **h);
void __cudaUnregisterFatBinary(void **h) { (void)h; /* kept until exit: launches.lua is written at exit */ }

CR_EXPORT void __cudaRegisterFunction(void **h, const char *hostFun, char *deviceFun, const char *deviceName,
                                      int thread_limit, void *tid, void *bid, void *bDim, void *gDim, int *wSize);
void __cudaRegisterFunction(void **h, const char *hostFun, char *deviceFun, const char *deviceName, int thread_limit,
                            void *tid, void *bid, void *bDim, void *gDim, int *wSize)
{
    (void)deviceFun, (void)thread_limit, (void)tid, (void)bid, (void)bDim, (void)gDim, (void)wSize;
    cr_lock();
    cr_state *s = cr_get();
    cr_kernel *k = calloc(1, sizeof *k);
    if (!s || !h || !k || !(k->name = strdup(deviceName)) || !(k->short_name = mh_short_name(deviceName)) ||
        cr_push((void ***)&s->kernels, &s->nkernels, &s->cap_kernels, k)) {
        if (s) cr_say("could not register kernel %s", deviceName ? deviceName : "(null)");
        if (k) free(k->name), free(k->short_name);
        free(k);
        cr_unlock();
        return;
    }
    k->host_fun = hostFun;
    k->mod = (cr_module *)h;
    k->max_dyn_smem = 48 * 1024;
    cr_unlock();
}

static void add_var(void **h, const void *host_var, void **managed_ptr, const char *name, size_t size, int constant)
{
    cr_lock();
    cr_state *s = cr_get();
    cr_var *v = calloc(1, sizeof *v);
    if (!s || !h || !v || !(v->name = strdup(name)) || cr_push((void ***)&s->vars, &s->nvars, &s->cap_vars, v)) {
        if (s) cr_say("could not register variable %s", name ? name : "(null)");
        if (v) free(v->name);
        free(v);
        cr_unlock();
        return;
    }
    v->host_var = host_var;
    v->mod = (cr_module *)h;
    v->size = size;
    v->constant = constant;
    v->managed = managed_ptr != NULL;
    v->managed_ptr = managed_ptr;
    cr_unlock();
}

CR_EXPORT void __cudaRegisterVar(void **h, char *hostVar, char *deviceAddress, const char *deviceName, int ext,
                                 size_t size, int constant, int global);
void __cudaRegisterVar(void **h, char *hostVar, char *deviceAddress, const char *deviceName, int ext, size_t size,
                       int constant, int global)
{
    (void)deviceAddress, (void)ext, (void)global;
    add_var(h, hostVar, NULL, deviceName, size, constant);
}

CR_EXPORT void __cudaRegisterManagedVar(void **h, void **hostVarPtrAddress, char *deviceAddress,
                                        const char *deviceName, int ext, size_t size, int constant, int global);
void __cudaRegisterManagedVar(void **h, void **hostVarPtrAddress, char *deviceAddress, const char *deviceName, int ext,
                              size_t size, int constant, int global)
{
    (void)deviceAddress, (void)ext, (void)global;
    add_var(h, hostVarPtrAddress, hostVarPtrAddress, deviceName, size, constant);
}

/* A module with __managed__ variables calls this before the host first touches one: their
 * memory must exist (the module's data, at host addresses). */
CR_EXPORT char __cudaInitModule(void **h);
char __cudaInitModule(void **h)
{
    cr_lock();
    int ok = cr_get() && h && cr_module_parse((cr_module *)h) == 0;
    if (!ok && h) cr_say("__cudaInitModule: the module of the program's __managed__ variables: %s",
                         ((cr_module *)h)->err.message);
    cr_unlock();
    return (char)ok;
}

CR_EXPORT void __cudaRegisterTexture(void);
void __cudaRegisterTexture(void) { cr_say("texture references are not supported (__cudaRegisterTexture)"); }
CR_EXPORT void __cudaRegisterSurface(void);
void __cudaRegisterSurface(void) { cr_say("surface references are not supported (__cudaRegisterSurface)"); }

cr_kernel *cr_kernel_of(const void *host_fun)
{
    cr_state *s = cr_get();
    for (size_t i = 0; s && i < s->nkernels; i++)
        if (s->kernels[i]->host_fun == host_fun) return s->kernels[i];
    return NULL;
}

cr_var *cr_var_of(const void *host_var)
{
    cr_state *s = cr_get();
    for (size_t i = 0; s && i < s->nvars; i++)
        if (s->vars[i]->host_var == host_var) return s->vars[i];
    return NULL;
}

/* CUDA 13's <<<>>> asks for a handle once per kernel: ours is the kernel's record. */
CR_EXPORT cudaError_t __cudaGetKernel(cudaKernel_t *out, const void *hostFun);
cudaError_t __cudaGetKernel(cudaKernel_t *out, const void *hostFun)
{
    cr_lock();
    cr_kernel *k = cr_kernel_of(hostFun);
    if (out) *out = k;
    cr_unlock();
    return k ? cudaSuccess : cr_set(cudaErrorInvalidDeviceFunction, "__cudaGetKernel: %p is not a registered kernel",
                                    hostFun);
}
