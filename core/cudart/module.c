/* module.c - a registered fat binary as emu runs it: its PTX read and parsed
 * at first use, its __device__/__constant__/__managed__ variables in one
 * allocation that lives as long as the program (at host addresses, so that
 * the host's pointer to a __managed__ variable is the kernels' too), its
 * kernels found by their mangled names and checked by emu, and what ptxas
 * says of their registers (the residency and cudaFuncGetAttributes). */
#include "cudart/cudart.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cr_module_ptx(cr_module *m)
{
    if (m->ptx) return 0;
    if (m->parsed < 0) return -1;
    const char *why = cr_fatbin_read(m->wrapper, &m->ptx, &m->ptx_len, m->arch);
    if (why) {
        mh_fail(&m->err, MH_E_NOT_FOUND, "fat binary %d: %s", m->index, why);
        m->parsed = -1;
        return -1;
    }
    return 0;
}

static int var_index(const mh_ptx_module *p, const char *name)
{
    for (uint32_t i = 0; i < p->nvars; i++)
        if (p->vars[i].func < 0 && !strcmp(p->vars[i].name, name)) return (int)i;
    return -1;
}

int cr_module_parse(cr_module *m)
{
    if (m->parsed) return m->parsed > 0 ? 0 : -1;
    if (cr_module_ptx(m)) return -1;
    char path[64];
    snprintf(path, sizeof path, "%s%d.%s.ptx", m->wrapper ? "fatbin" : "module", m->index, m->arch); /* module: the Driver API's */
    if (mh_ptx_parse(&m->ptxm, m->ptx, m->ptx_len, path, &m->err)) {
        m->parsed = -1;
        return -1;
    }
    cr_state *s = cr_get();
    m->data_size = mh_emu_module_data_size(&m->ptxm);
    if (m->data_size) {
        if (mh_emu_alloc_mapped(s->emu, m->data_size, &m->data_addr, &m->err)) {
            m->parsed = -1;
            return -1;
        }
        unsigned char *h = (unsigned char *)(uintptr_t)m->data_addr;
        for (uint32_t i = 0; i < m->ptxm.nvars; i++) {
            const mh_ptx_var *v = &m->ptxm.vars[i];
            if (v->init && (v->space == MH_SP_GLOBAL || v->space == MH_SP_CONST)) memcpy(h + v->offset, v->init, v->size);
        }
    }
    m->parsed = 1;
    for (size_t i = 0; i < s->nvars; i++) { /* __managed__: the host's pointer is the memory's address */
        cr_var *v = s->vars[i];
        if (v->mod != m || !v->managed) continue;
        int vi = var_index(&m->ptxm, v->name);
        if (vi >= 0 && v->managed_ptr) *v->managed_ptr = (void *)(uintptr_t)(m->data_addr + m->ptxm.vars[vi].offset);
    }
    return 0;
}

int cr_kernel_resolve(cr_kernel *k, const char *call)
{
    if (k->checked) return 0;
    if (cr_module_parse(k->mod)) {
        cr_set(cudaErrorNoKernelImageForDevice, "%s: kernel %s: %s", call, k->short_name, k->mod->err.message);
        return -1;
    }
    k->f = mh_ptx_find(&k->mod->ptxm, k->name);
    if (!k->f || !k->f->is_entry) {
        cr_set(cudaErrorInvalidDeviceFunction, "%s: kernel %s is not an entry of its module's PTX (%s)", call, k->short_name,
               k->mod->arch);
        return -1;
    }
    mh_error e = {0};
    if (mh_emu_check_kernel(&k->mod->ptxm, k->f, &e)) {
        cr_set(cudaErrorNotSupported, "%s: kernel %s: emu cannot run it: %s", call, k->short_name, e.message);
        return -1;
    }
    k->checked = 1;
    return 0;
}

const mh_ptxas_kernel *cr_kernel_ptxas(cr_kernel *k)
{
    cr_module *m = k->mod;
    if (!m->asked_ptxas) {
        mh_ptxas_info_get(m->ptx, m->ptx_len, m->ptxm.target, &m->ptxas);
        m->asked_ptxas = 1;
    }
    return m->ptxas.ok ? mh_ptxas_find(&m->ptxas, k->name) : NULL;
}
