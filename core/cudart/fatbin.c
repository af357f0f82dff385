/* fatbin.c - the PTX of a program's kernels, read from its own fat binary
 * (what __cudaRegisterFatBinary's wrapper points at): a container of entries,
 * each a cubin (ELF) or PTX for one architecture, PTX often zstd-compressed by
 * nvcc 13 (libzstd.so.1 is loaded when one is, not linked).  The PTX chosen is
 * the highest compute capability <= 9.0 (emu runs sm_90 PTX), the
 * arch-specific 90a before plain 90.  The layout (little-endian):
 *   wrapper:  u32 magic 0x466243b1, u32 version, const void *data, ...
 *   header:   u32 magic 0xBA55ED50, u16 version, u16 header size, u64 size of the entries
 *   entry:    u16 kind (1 PTX, 2 ELF), u16, u32 header size, u64 payload size,
 *             u32 compressed size, u32, u16 minor, u16 major, u32 arch (90),
 *             u32 name offset, u32 name size, u64 flags (0x8000: zstd,
 *             0x2000: nvcc's older LZ-style compression, 0x100000: an arch-specific
 *             "a" target), u64, u64 decompressed size. */
#include "cudart/cudart.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WRAPPER_MAGIC 0x466243b1u
#define FATBIN_MAGIC 0xBA55ED50u
#define FLAG_ZSTD 0x8000ull
#define FLAG_LZ 0x2000ull
#define FLAG_ARCH_SPECIFIC 0x100000ull

static uint16_t u16(const unsigned char *p) { return (uint16_t)(p[0] | p[1] << 8); }
static uint32_t u32(const unsigned char *p) { return (uint32_t)u16(p) | (uint32_t)u16(p + 2) << 16; }
static uint64_t u64(const unsigned char *p) { return (uint64_t)u32(p) | (uint64_t)u32(p + 4) << 32; }

typedef size_t (*zstd_decompress_fn)(void *, size_t, const void *, size_t);
typedef unsigned (*zstd_iserror_fn)(size_t);
typedef const char *(*zstd_name_fn)(size_t);

static const char *unzstd(const unsigned char *src, size_t n, size_t out_n, char **out)
{
    static void *lib;
    if (!lib) lib = dlopen("libzstd.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return "the PTX is zstd-compressed and libzstd.so.1 is not installed (Debian: libzstd1)";
    zstd_decompress_fn dec = (zstd_decompress_fn)(uintptr_t)dlsym(lib, "ZSTD_decompress");
    zstd_iserror_fn iserr = (zstd_iserror_fn)(uintptr_t)dlsym(lib, "ZSTD_isError");
    zstd_name_fn name = (zstd_name_fn)(uintptr_t)dlsym(lib, "ZSTD_getErrorName");
    if (!dec || !iserr) return "libzstd.so.1 lacks ZSTD_decompress";
    char *buf = malloc(out_n + 1);
    if (!buf) return "out of memory";
    size_t r = dec(buf, out_n, src, n);
    if (iserr(r)) {
        static char msg[256];
        snprintf(msg, sizeof msg, "the PTX's zstd data is corrupt: %s", name ? name(r) : "?");
        free(buf);
        return msg;
    }
    buf[r] = 0;
    *out = buf;
    return NULL;
}

const char *cr_fatbin_read(const void *wrapper, char **ptx, size_t *len, char arch[32])
{
    static char msg[256];
    const unsigned char *w = wrapper;
    if (!w || u32(w) != WRAPPER_MAGIC) return "the fat binary's wrapper has not the magic 0x466243b1";
    const unsigned char *fb;
    memcpy(&fb, w + 8, sizeof fb);
    if (!fb || u32(fb) != FATBIN_MAGIC) return "the fat binary has not the magic 0xBA55ED50";
    uint16_t hs = u16(fb + 6);
    uint64_t size = u64(fb + 8);
    const unsigned char *best = NULL;
    uint64_t best_rank = 0;
    int elf_only = 0;
    for (uint64_t off = hs; off + 64 <= hs + size;) {
        const unsigned char *e = fb + off;
        uint16_t kind = u16(e);
        uint32_t ehs = u32(e + 4);
        uint64_t psz = u64(e + 8);
        uint32_t sm = u32(e + 28);
        uint64_t flags = u64(e + 40);
        if (ehs < 64 || psz > size) break;
        if (kind == 1 && sm <= 90) {
            uint64_t rank = (uint64_t)sm * 2 + ((flags & FLAG_ARCH_SPECIFIC) != 0);
            if (!best || rank > best_rank) { best = e; best_rank = rank; }
        } else if (kind == 2) elf_only = 1;
        off += ehs + psz;
    }
    if (!best) {
        snprintf(msg, sizeof msg, "the fat binary has no PTX for compute capability 9.0 or lower%s (build with "
                 "`mgpu-harness nvcc`, or add -gencode arch=compute_90a,code=compute_90a)",
                 elf_only ? ", only cubins" : "");
        return msg;
    }
    uint32_t ehs = u32(best + 4);
    uint64_t psz = u64(best + 8);
    uint32_t csz = u32(best + 16);
    uint32_t sm = u32(best + 28);
    uint64_t flags = u64(best + 40);
    uint64_t dsz = u64(best + 56);
    const unsigned char *payload = best + ehs;
    snprintf(arch, 32, "compute_%u%s", sm, flags & FLAG_ARCH_SPECIFIC ? "a" : "");
    if (flags & FLAG_ZSTD) {
        const char *why = unzstd(payload, csz ? csz : psz, dsz ? dsz : psz * 16, ptx);
        if (why) return why;
    } else if (flags & FLAG_LZ) {
        return "the PTX is compressed with nvcc's older LZ-style scheme, which the stand-in does not read (build "
               "with `mgpu-harness nvcc`, which asks for zstd or none)";
    } else {
        size_t n = strnlen((const char *)payload, psz);
        *ptx = malloc(n + 1);
        if (!*ptx) return "out of memory";
        memcpy(*ptx, payload, n);
        (*ptx)[n] = 0;
    }
    *len = strlen(*ptx);
    return NULL;
}
