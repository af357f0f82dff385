/* launch.c - kernel launches: <<<>>> (CUDA 13 pushes the configuration,
 * pops it in the host stub and calls __cudaLaunchKernel with the handle
 * __cudaGetKernel gave), cudaLaunchKernel, cudaLaunchKernelExC with its
 * attributes (cluster dimension, cooperative; the scheduling hints are
 * accepted and change nothing on emu) and cudaLaunchCooperativeKernel.  A
 * launch runs to its end on emu before the call returns (every stream is
 * synchronous), its printf output goes to stdout, a fault becomes the sticky
 * error CUDA reports (cudaErrorIllegalAddress, cudaErrorAssert, ...) with
 * emu's account of it on stderr; virtual time advances by the launch's. */
#include "cudart/cudart.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

CR_EXPORT unsigned __cudaPushCallConfiguration(cr_dim3 grid, cr_dim3 block, size_t smem, cudaStream_t stream);
unsigned __cudaPushCallConfiguration(cr_dim3 grid, cr_dim3 block, size_t smem, cudaStream_t stream)
{
    cr_lock();
    cr_state *s = cr_get();
    if (s) {
        s->cfg_grid = grid;
        s->cfg_block = block;
        s->cfg_smem = smem;
        s->cfg_stream = stream;
        s->cfg_depth++;
    }
    cr_capture_paint();
    cr_unlock();
    return 0;
}

CR_EXPORT cudaError_t __cudaPopCallConfiguration(cr_dim3 *grid, cr_dim3 *block, size_t *smem, cudaStream_t *stream);
cudaError_t __cudaPopCallConfiguration(cr_dim3 *grid, cr_dim3 *block, size_t *smem, cudaStream_t *stream)
{
    cr_lock();
    cr_state *s = cr_get();
    if (!s || s->cfg_depth <= 0) {
        cr_unlock();
        return cr_set(cudaErrorInvalidConfiguration, "__cudaPopCallConfiguration without a configuration pushed");
    }
    *grid = s->cfg_grid;
    *block = s->cfg_block;
    *smem = s->cfg_smem;
    *stream = s->cfg_stream;
    s->cfg_depth--;
    cr_unlock();
    return cudaSuccess;
}

static cudaError_t check_shape(cr_kernel *k, const cr_launch *l)
{
    const cr_dim3 g = l->grid, b = l->block;
    if (!g.x || !g.y || !g.z || !b.x || !b.y || !b.z || g.x > 0x7fffffffu || g.y > 65535 || g.z > 65535 ||
        b.x > 1024 || b.y > 1024 || b.z > 64 || (uint64_t)b.x * b.y * b.z > 1024)
        return cr_set(cudaErrorInvalidConfiguration, "%s: kernel %s: grid (%u, %u, %u) block (%u, %u, %u) is not a "
                      "launch configuration (grid x < 2^31, y and z <= 65535; block x, y <= 1024, z <= 64, at most "
                      "1024 threads)", l->call, k->short_name, g.x, g.y, g.z, b.x, b.y, b.z);
    if (l->smem > (size_t)k->max_dyn_smem)
        return cr_set(cudaErrorInvalidValue, "%s: kernel %s: %zu bytes of dynamic shared memory, more than the %d it "
                      "may have (cudaFuncSetAttribute(cudaFuncAttributeMaxDynamicSharedMemorySize) raises it to "
                      "227 KiB)", l->call, k->short_name, l->smem, k->max_dyn_smem);
    if (!cr_stream_ok(l->stream))
        return cr_set(cudaErrorInvalidResourceHandle, "%s: kernel %s: %p is not a stream", l->call, k->short_name,
                      (void *)l->stream);
    return cudaSuccess;
}

static void print_stats(cr_state *s, cr_kernel *k, const cr_launch *l, const mh_emu_stats *es)
{
    fprintf(stderr, "mgpu exec: launch %llu %s grid (%u, %u, %u) block (%u, %u, %u) smem %zu: %llu cycles (virtual), "
            "%llu warp instructions, %llu thread instructions, %u blocks per SM\n",
            (unsigned long long)s->launches, k->short_name, l->grid.x, l->grid.y, l->grid.z, l->block.x, l->block.y,
            l->block.z, l->smem, (unsigned long long)es->cycles, (unsigned long long)es->warp_insns,
            (unsigned long long)es->thread_insns, es->blocks_per_sm);
    const mh_launch_counts *c = es->counts;
    for (uint32_t i = 0; c && i < c->nmetrics; i++)
        if (c->total[i]) fprintf(stderr, "mgpu exec:   %-48s %llu\n", c->names[i], (unsigned long long)c->total[i]);
    fflush(stderr);
}

/* exec's launch log (MGPU_CUDART_LAUNCHES, which mgpu.exec reads): a line per launch, tab-separated:
 * kernel, grid x y z, block x y z, smem, cycles, warp and thread instructions, status (0: ran). */
static void log_launch(cr_state *s, cr_kernel *k, const cr_launch *l, const mh_emu_stats *es, cudaError_t status)
{
    FILE *f = fopen(s->launches_path, "a");
    if (!f) {
        cr_say("cannot append to the launch log %s", s->launches_path);
        return;
    }
    fprintf(f, "%s\t%u %u %u\t%u %u %u\t%zu\t%llu\t%llu\t%llu\t%d\n", k->name, l->grid.x, l->grid.y, l->grid.z,
            l->block.x, l->block.y, l->block.z, l->smem, (unsigned long long)es->cycles,
            (unsigned long long)es->warp_insns, (unsigned long long)es->thread_insns, status);
    fclose(f);
}

cudaError_t cr_launch_kernel(const void *host_fun, cr_kernel *k, const cr_launch *l)
{
    cr_state *s = cr_get();
    if (!k) k = cr_kernel_of(host_fun);
    if (!k) return cr_set(cudaErrorInvalidDeviceFunction, "%s: %p is not a registered kernel", l->call, host_fun);
    if (cr_kernel_resolve(k, l->call)) return s->last;
    cudaError_t err = check_shape(k, l);
    if (err) return err;
    const mh_ptx_func *f = k->f;
    if (f->nparams > MH_LAUNCH_MAX_PARAMS)
        return cr_set(cudaErrorNotSupported, "%s: kernel %s has %u parameters, more than the %d emu takes", l->call,
                      k->short_name, f->nparams, MH_LAUNCH_MAX_PARAMS);
    if (f->nparams && !l->args)
        return cr_set(cudaErrorInvalidValue, "%s: kernel %s takes %u parameters and args is NULL", l->call, k->short_name,
                      f->nparams);
    mh_emu_arg args[MH_LAUNCH_MAX_PARAMS];
    for (uint32_t i = 0; i < f->nparams; i++) {
        args[i].data = l->args[i];
        args[i].size = f->params[i].size;
    }
    mh_emu_launch el = {.grid = {l->grid.x, l->grid.y, l->grid.z}, .block = {l->block.x, l->block.y, l->block.z},
                        .dynamic_smem = (uint32_t)l->smem, .args = args, .nargs = f->nparams};
    mh_emu_extra x = {.stats = s->stats, .cooperative = l->cooperative, .data_addr = k->mod->data_addr};
    memcpy(x.cluster, l->cluster, sizeof x.cluster);
    const mh_ptxas_kernel *pk = cr_kernel_ptxas(k);
    if (pk) {
        x.regs_per_thread = pk->regs;
        x.setmaxnreg_ignored = pk->setmaxnreg_ignored;
    }
    s->launches++;
    cr_capture_launch *cap = cr_capture_before(k, l, args, f->nparams);
    mh_emu_stats es;
    memset(&es, 0, sizeof es);
    mh_error e = {0};
    int rc = 0;
    if (!cr_trace_launch(k, &el, &x, &es, &e, &rc)) rc = mh_emu_run_ex(s->emu, &k->mod->ptxm, k->name, &el, &x, &es, &e);
    if (es.output_len) {
        fwrite(es.output, 1, es.output_len, stdout);
        fflush(stdout);
    }
    free(es.output);
    for (const char *w = es.warnings, *nl; w && *w; w = nl + 1) { /* emu's warnings (an exited cluster peer...) */
        nl = strchr(w, '\n');
        if (!nl) nl = w + strlen(w) - 1;
        fprintf(stderr, "mgpu cudart: warning: %.*s\n", (int)(nl - w + (*nl != '\n')), w);
    }
    free(es.warnings);
    if (!rc) {
        s->vtime_ns += (double)es.cycles / mh_emu_model_of(s->emu)->clock_ghz;
        if (s->stats) print_stats(s, k, l, &es);
    }
    if (es.counts) es.counts->release(es.counts);
    cr_capture_after(cap, rc == 0);
    if (s->launches_path) log_launch(s, k, l, &es, rc ? cr_from_mh(&e) : cudaSuccess);
    if (!rc) return cudaSuccess;
    if (e.code == MH_E_KERNEL_FAULT || e.code == MH_E_TIMEOUT || e.code == MH_E_INTERRUPTED) {
        s->sticky = cr_from_mh(&e);
        return cr_set(s->sticky, "%s: kernel %s faulted (the error is sticky, as on a GPU): %s", l->call, k->short_name,
                      e.message);
    }
    if (l->cooperative && strstr(e.message, "cooperative"))
        return cr_set(cudaErrorCooperativeLaunchTooLarge, "%s: %s", l->call, e.message);
    if (strstr(e.message, "cluster")) return cr_set(cudaErrorInvalidClusterSize, "%s: %s", l->call, e.message);
    return cr_set(cr_from_mh(&e), "%s: kernel %s: %s", l->call, k->short_name, e.message);
}

CR_EXPORT cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, cr_dim3 grid, cr_dim3 block, void **args, size_t smem,
                                         cudaStream_t stream);
cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, cr_dim3 grid, cr_dim3 block, void **args, size_t smem,
                               cudaStream_t stream)
{
    cr_launch l = {.grid = grid, .block = block, .cluster = {0, 0, 0}, .smem = smem, .stream = stream, .args = args,
                   .call = "<<<>>>"};
    CR_API(kernel ? cr_launch_kernel(((cr_kernel *)kernel)->host_fun, kernel, &l)
                  : cr_set(cudaErrorInvalidDeviceFunction, "<<<>>>: no kernel handle (an unregistered kernel)"));
}

CR_EXPORT cudaError_t __cudaLaunchKernel_ptsz(cudaKernel_t kernel, cr_dim3 grid, cr_dim3 block, void **args,
                                              size_t smem, cudaStream_t stream);
cudaError_t __cudaLaunchKernel_ptsz(cudaKernel_t kernel, cr_dim3 grid, cr_dim3 block, void **args, size_t smem,
                                    cudaStream_t stream)
{
    return __cudaLaunchKernel(kernel, grid, block, args, smem, stream);
}

CR_EXPORT cudaError_t cudaLaunchKernel(const void *func, cr_dim3 grid, cr_dim3 block, void **args, size_t smem,
                                       cudaStream_t stream);
cudaError_t cudaLaunchKernel(const void *func, cr_dim3 grid, cr_dim3 block, void **args, size_t smem,
                             cudaStream_t stream)
{
    cr_launch l = {.grid = grid, .block = block, .smem = smem, .stream = stream, .args = args,
                   .call = "cudaLaunchKernel"};
    CR_API(cr_launch_kernel(func, NULL, &l));
}

CR_EXPORT cudaError_t cudaLaunchCooperativeKernel(const void *func, cr_dim3 grid, cr_dim3 block, void **args,
                                                  size_t smem, cudaStream_t stream);
cudaError_t cudaLaunchCooperativeKernel(const void *func, cr_dim3 grid, cr_dim3 block, void **args, size_t smem,
                                        cudaStream_t stream)
{
    cr_launch l = {.grid = grid, .block = block, .smem = smem, .stream = stream, .args = args, .cooperative = 1,
                   .call = "cudaLaunchCooperativeKernel"};
    CR_API(cr_launch_kernel(func, NULL, &l));
}

static cudaError_t launch_ex(const cr_launch_config *c, const void *func, void **args)
{
    if (!c) return cr_set(cudaErrorInvalidValue, "cudaLaunchKernelEx: config is NULL");
    cr_launch l = {.grid = c->gridDim, .block = c->blockDim, .smem = c->dynamicSmemBytes, .stream = c->stream,
                   .args = args, .call = "cudaLaunchKernelEx"};
    if (c->numAttrs && !c->attrs) return cr_set(cudaErrorInvalidValue, "cudaLaunchKernelEx: %u attributes and attrs "
                                                "is NULL", c->numAttrs);
    for (unsigned i = 0; i < c->numAttrs; i++) {
        const cr_launch_attribute *a = &c->attrs[i];
        switch (a->id) {
        case cudaLaunchAttributeIgnore: break;
        case cudaLaunchAttributeCooperative: l.cooperative = a->val.cooperative != 0; break;
        case cudaLaunchAttributeClusterDimension:
            l.cluster[0] = a->val.clusterDim.x;
            l.cluster[1] = a->val.clusterDim.y;
            l.cluster[2] = a->val.clusterDim.z;
            break;
        case cudaLaunchAttributeAccessPolicyWindow: case cudaLaunchAttributeSynchronizationPolicy:
        case cudaLaunchAttributeClusterSchedulingPolicyPreference: case cudaLaunchAttributePriority:
        case cudaLaunchAttributeMemSyncDomainMap: case cudaLaunchAttributeMemSyncDomain:
        case cudaLaunchAttributePreferredSharedMemoryCarveout: case cudaLaunchAttributeProgrammaticStreamSerialization:
            break; /* hints: emu runs launches one after the other either way */
        default:
            return cr_set(cudaErrorNotSupported, "cudaLaunchKernelEx: launch attribute %d is not supported by the "
                          "stand-in (cluster dimension, cooperative and the scheduling hints are)", a->id);
        }
    }
    return cr_launch_kernel(func, NULL, &l);
}

CR_EXPORT cudaError_t cudaLaunchKernelExC(const cr_launch_config *config, const void *func, void **args);
cudaError_t cudaLaunchKernelExC(const cr_launch_config *config, const void *func, void **args)
{
    CR_API(launch_ex(config, func, args));
}
CR_ALIAS(cudaLaunchCooperativeKernel_ptsz, cudaLaunchCooperativeKernel)
CR_ALIAS(cudaLaunchKernel_ptsz, cudaLaunchKernel)
CR_ALIAS(cudaLaunchKernelExC_ptsz, cudaLaunchKernelExC)
