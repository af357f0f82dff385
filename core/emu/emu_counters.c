/* emu_counters.c - the counters' names, the sector and bank rules, and the sums per
 * source line (see emu_counters.h). */
#include "emu/emu_counters.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const mh_ct_names[MH_CT_COUNT] = {
    [MH_CT_INST] = "ptx__inst_executed.sum",
    [MH_CT_THREAD_INST] = "ptx__thread_inst_executed.sum",
    [MH_CT_PRED_ON] = "ptx__thread_inst_executed_pred_on.sum",
    [MH_CT_GLD_REQ] = "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
    [MH_CT_GLD_SEC] = "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    [MH_CT_GLD_BYTES] = "ptx__bytes_requested_mem_global_op_ld.sum",
    [MH_CT_GST_REQ] = "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
    [MH_CT_GST_SEC] = "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
    [MH_CT_GST_BYTES] = "ptx__bytes_requested_mem_global_op_st.sum",
    [MH_CT_GATOM_REQ] = "l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum",
    [MH_CT_GATOM_SEC] = "l1tex__t_sectors_pipe_lsu_mem_global_op_atom.sum",
    [MH_CT_GRED_REQ] = "l1tex__t_requests_pipe_lsu_mem_global_op_red.sum",
    [MH_CT_GRED_SEC] = "l1tex__t_sectors_pipe_lsu_mem_global_op_red.sum",
    [MH_CT_LDGSTS_REQ] = "l1tex__t_requests_pipe_lsu_mem_global_op_ldgsts.sum",
    [MH_CT_LDGSTS_SEC] = "l1tex__t_sectors_pipe_lsu_mem_global_op_ldgsts.sum",
    [MH_CT_LLD_REQ] = "l1tex__t_requests_pipe_lsu_mem_local_op_ld.sum",
    [MH_CT_LLD_SEC] = "l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum",
    [MH_CT_LST_REQ] = "l1tex__t_requests_pipe_lsu_mem_local_op_st.sum",
    [MH_CT_LST_SEC] = "l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum",
    [MH_CT_SLD_REQ] = "ptx__inst_executed_op_shared_ld.sum",
    [MH_CT_SLD_WF] = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
    [MH_CT_SLD_BC] = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
    [MH_CT_SST_REQ] = "ptx__inst_executed_op_shared_st.sum",
    [MH_CT_SST_WF] = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
    [MH_CT_SST_BC] = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
    [MH_CT_SATOM_REQ] = "ptx__inst_executed_op_shared_atom.sum",
    [MH_CT_SATOM_WF] = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_atom.sum",
    [MH_CT_LEFT_OUT] = "mgpu__inst_executed_instrumentation.sum",
    [MH_CT_STALL_SELECTED] = MH_CT_STALL_PREFIX "selected",
    [MH_CT_STALL_NOT_SELECTED] = MH_CT_STALL_PREFIX "not_selected",
    [MH_CT_STALL_LONG_SB] = MH_CT_STALL_PREFIX "long_scoreboard",
    [MH_CT_STALL_SHORT_SB] = MH_CT_STALL_PREFIX "short_scoreboard",
    [MH_CT_STALL_LG_THROTTLE] = MH_CT_STALL_PREFIX "lg_throttle",
    [MH_CT_STALL_MIO_THROTTLE] = MH_CT_STALL_PREFIX "mio_throttle",
    [MH_CT_STALL_MATH] = MH_CT_STALL_PREFIX "math_pipe_throttle",
    [MH_CT_STALL_WAIT] = MH_CT_STALL_PREFIX "wait",
    [MH_CT_STALL_BARRIER] = MH_CT_STALL_PREFIX "barrier",
    [MH_CT_STALL_MEMBAR] = MH_CT_STALL_PREFIX "membar",
    [MH_CT_STALL_SLEEPING] = MH_CT_STALL_PREFIX "sleeping",
    [MH_CT_STALL_BRANCH] = MH_CT_STALL_PREFIX "branch_resolving",
    [MH_CT_STALL_MISC] = MH_CT_STALL_PREFIX "misc",
};

int mh_ct_kind(const char *text, const mh_ptx_insn *in)
{
    if (!text || (in->text_off == 0 && in->text_end == 0)) return MH_CT_USER;
    const char *b = text + in->text_off, *e = text + in->text_end;
    if ((in->mods & MH_MOD_MARKER) && !strncmp(b, "// @mgpu:", 9)) return MH_CT_ADDED; /* its comments */
    /* the comment after the instruction on its line: added, and whether it stands for the next one */
    const char *c = e;
    while (*c == ' ' || *c == '\t' || *c == ';') c++;
    if (!strncmp(c, "// mgpu: stands for", 19)) return MH_CT_STAND_IN;
    if (!strncmp(c, "// mgpu:", 8)) return MH_CT_ADDED;
    for (const char *p = b; p + 6 <= e; p++)
        if (!memcmp(p, "__mgpu", 6)) return MH_CT_ADDED;
    return MH_CT_USER;
}

static const mh_count_ratio ratios[] = {
    {"ptx__thread_inst_executed_per_inst_executed.ratio", MH_CT_THREAD_INST, MH_CT_INST},
    {"l1tex__average_t_sectors_per_request_pipe_lsu_mem_global_op_ld.ratio", MH_CT_GLD_SEC, MH_CT_GLD_REQ},
    {"l1tex__average_t_sectors_per_request_pipe_lsu_mem_global_op_st.ratio", MH_CT_GST_SEC, MH_CT_GST_REQ},
};

uint32_t mh_ct_distinct(uint64_t *ids, uint32_t n)
{
    for (uint32_t i = 1; i < n; i++) { /* insertion sort: lanes mostly come in order */
        uint64_t v = ids[i];
        uint32_t j = i;
        while (j && ids[j - 1] > v) {
            ids[j] = ids[j - 1];
            j--;
        }
        ids[j] = v;
    }
    uint32_t d = n ? 1 : 0;
    for (uint32_t i = 1; i < n; i++) d += ids[i] != ids[i - 1];
    return d;
}

uint32_t mh_ct_wavefronts(const uint64_t *addr, const uint8_t *lane, uint32_t n, uint32_t size, uint32_t *phases)
{
    uint32_t per = size <= 4 ? 32 : size == 8 ? 16 : 8; /* lanes per 128-byte phase */
    uint32_t words = size <= 4 ? 1 : size / 4, total = 0;
    *phases = 0;
    int all = n == 32 && lane[31] == 31; /* a whole warp (lanes come in increasing order): phase p is lanes p*per.. */
    for (uint32_t p = 0; p < 32 / per; p++) {
        uint64_t w[32 * 4];
        uint32_t k = 0;
        for (uint32_t i = all ? p * per : 0; i < (all ? (p + 1) * per : n); i++) {
            if (!all && lane[i] / per != p) continue;
            for (uint32_t j = 0; j < words; j++) w[k++] = addr[i] / 4 + j;
        }
        if (!k) continue;
        (*phases)++;
        /* no two words in one bank (a conflict-free phase, the common case): one wavefront, without
         * the distinct words' set (a word twice would be two in its bank) */
        uint32_t seen = 0, clash = 0;
        for (uint32_t i = 0; i < k; i++) {
            uint32_t bit = 1u << (w[i] & 31);
            clash |= seen & bit;
            seen |= bit;
        }
        if (!clash) {
            total += 1;
            continue;
        }
        /* the most distinct words any bank holds (the same word twice is a broadcast): distinct
         * words found through a small hash set, not a sort (k <= 128 words, a set of 256) */
        uint32_t bank[32] = {0}, most = 0;
        uint64_t set[256];
        uint8_t used[256] = {0};
        for (uint32_t i = 0; i < k; i++) {
            uint32_t h = (uint32_t)((w[i] * 0x9E3779B97F4A7C15ull) >> 56);
            while (used[h] && set[h] != w[i]) h = (h + 1) & 255;
            if (used[h]) continue;
            used[h] = 1;
            set[h] = w[i];
            uint32_t b = (uint32_t)(w[i] & 31);
            if (++bank[b] > most) most = bank[b];
        }
        total += most;
    }
    return total;
}

/* ---- source lines ------------------------------------------------------------ */

typedef struct {
    size_t off;
    uint32_t file, line;
} loc_rec;

typedef struct {
    uint32_t num;
    char *name;
} file_rec;

static int is_blank(char ch) { return ch == ' ' || ch == '\t'; }

static const char *skip_blank(const char *p)
{
    while (is_blank(*p)) p++;
    return p;
}

/* a quoted string at p (escapes kept as the character after the backslash), malloc'd */
static char *quoted(const char **pp)
{
    const char *p = *pp;
    if (*p != '"') return NULL;
    p++;
    size_t n = 0;
    const char *q = p;
    while (*q && *q != '"' && *q != '\n') {
        if (*q == '\\' && q[1]) q++;
        q++;
        n++;
    }
    char *s = malloc(n + 1);
    if (!s) return NULL;
    n = 0;
    while (*p && *p != '"' && *p != '\n') {
        if (*p == '\\' && p[1]) p++;
        s[n++] = *p++;
    }
    s[n] = 0;
    if (*p == '"') p++;
    *pp = p;
    return s;
}

static void release(mh_launch_counts *c)
{
    if (!c) return;
    if (c->rows) free(c->rows[0].v);
    free(c->rows);
    free(c->total);
    for (uint32_t i = 0; i < c->nfiles; i++) free(c->files[i]);
    free(c->files);
    free(c->module);
    free(c);
}

typedef struct {
    int32_t file;
    uint32_t line;
    uint32_t pc;
} key;

static int key_cmp(const void *a, const void *b)
{
    const key *x = a, *y = b;
    if (x->file != y->file) return x->file < y->file ? -1 : 1;
    if (x->line != y->line) return x->line < y->line ? -1 : 1;
    return x->pc < y->pc ? -1 : x->pc > y->pc;
}

int mh_ct_build(const mh_ptx_module *m, const mh_ptx_insn *code, uint32_t ncode, const uint64_t *per_insn,
                mh_launch_counts **out, mh_error *e)
{
    *out = NULL;
    loc_rec *locs = NULL;
    file_rec *files = NULL;
    size_t nlocs = 0, caplocs = 0, nfiles = 0, capfiles = 0;
    key *keys = NULL;
    uint8_t *kinds = NULL;
    uint32_t *stands = NULL;
    mh_launch_counts *c = calloc(1, sizeof *c);
    if (!c) goto oom;
    c->release = release;
    c->nmetrics = MH_CT_COUNT;
    c->names = mh_ct_names;
    c->ratios = ratios;
    c->nratios = sizeof ratios / sizeof ratios[0];
    c->module = strdup(m->path ? m->path : "<ptx>");
    c->total = calloc(MH_CT_COUNT, sizeof *c->total);
    if (!c->module || !c->total) goto oom;
    /* .loc and .file directives, each at the start of its line */
    for (const char *p = m->text; p && *p;) {
        const char *q = skip_blank(p);
        if (!strncmp(q, ".loc", 4) && is_blank(q[4])) {
            char *end;
            unsigned long fno = strtoul(q + 5, &end, 10), ln = strtoul(end, &end, 10);
            if (nlocs == caplocs) {
                caplocs = caplocs ? caplocs * 2 : 256;
                loc_rec *n = realloc(locs, caplocs * sizeof *n);
                if (!n) goto oom;
                locs = n;
            }
            locs[nlocs++] = (loc_rec){(size_t)(q - m->text), (uint32_t)fno, (uint32_t)ln};
        } else if (!strncmp(q, ".file", 5) && is_blank(q[5])) {
            char *end;
            unsigned long fno = strtoul(q + 6, &end, 10);
            const char *s = skip_blank(end);
            char *name = quoted(&s);
            if (name) {
                s = skip_blank(s);
                if (*s == '"') { /* a directory and a file name */
                    char *base = quoted(&s);
                    char *joined = base ? malloc(strlen(name) + strlen(base) + 2) : NULL;
                    if (joined) sprintf(joined, "%s/%s", name, base);
                    free(base);
                    if (joined) { free(name); name = joined; }
                }
                if (nfiles == capfiles) {
                    capfiles = capfiles ? capfiles * 2 : 8;
                    file_rec *n = realloc(files, capfiles * sizeof *n);
                    if (!n) { free(name); goto oom; }
                    files = n;
                }
                files[nfiles++] = (file_rec){(uint32_t)fno, name};
            }
        }
        const char *nl = strchr(p, '\n');
        p = nl ? nl + 1 : NULL;
    }
    c->files = calloc(nfiles ? nfiles : 1, sizeof *c->files);
    if (!c->files) goto oom;
    for (size_t i = 0; i < nfiles; i++) {
        c->files[i] = files[i].name;
        files[i].name = NULL;
    }
    c->nfiles = (uint32_t)nfiles;
    /* each executed instruction's line: the last .loc before it, else its PTX line */
    keys = malloc((ncode ? ncode : 1) * sizeof *keys);
    if (!keys) goto oom;
    uint32_t nk = 0;
    /* each instruction's kind; a stand-in's user instruction (the next user instruction after
     * it) takes its counts' place and is left out itself (for[pc]: the instruction it stands for) */
    kinds = malloc(ncode ? ncode : 1);
    stands = malloc((ncode ? ncode : 1) * sizeof *stands);
    if (!kinds || !stands) goto oom;
    for (uint32_t pc = 0; pc < ncode; pc++) kinds[pc] = (uint8_t)mh_ct_kind(m->text, &code[pc]), stands[pc] = pc;
    for (uint32_t pc = 0; pc < ncode; pc++) {
        if (kinds[pc] != MH_CT_STAND_IN) continue;
        uint32_t j = pc + 1;
        while (j < ncode && (kinds[j] == MH_CT_ADDED || (code[j].mods & MH_MOD_MARKER))) j++; /* (comments too) */
        if (j < ncode && kinds[j] == MH_CT_USER) stands[pc] = j, kinds[j] = MH_CT_ADDED; /* counted in its stand-in */
        else kinds[pc] = MH_CT_ADDED;
    }
    for (uint32_t pc = 0; pc < ncode; pc++) {
        const uint64_t *v = per_insn + (size_t)pc * MH_CT_COUNT;
        if (kinds[pc] == MH_CT_ADDED) {
            c->total[MH_CT_LEFT_OUT] += v[MH_CT_INST];
            continue;
        }
        for (int k = 0; k < MH_CT_COUNT; k++) c->total[k] += v[k];
        if (!v[MH_CT_INST]) continue;
        uint32_t at = stands[pc]; /* a stand-in counts on its instruction's line */
        key kk = {-1, code[at].line, pc};
        size_t off = code[at].text_off, lo = 0, hi = nlocs;
        while (lo < hi) { /* the last .loc before off */
            size_t mid = (lo + hi) / 2;
            if (locs[mid].off < off) lo = mid + 1;
            else hi = mid;
        }
        if (lo && off) {
            const loc_rec *L = &locs[lo - 1];
            int32_t fi = -1;
            for (uint32_t i = 0; i < c->nfiles; i++)
                if (files[i].num == L->file) fi = (int32_t)i;
            if (fi < 0) { /* a file number without its .file: named by number */
                char **nf = realloc(c->files, (c->nfiles + 1) * sizeof *nf);
                if (!nf) goto oom;
                c->files = nf;
                char name[32];
                snprintf(name, sizeof name, "<file %u>", L->file);
                if (!(c->files[c->nfiles] = strdup(name))) goto oom;
                file_rec *nr = realloc(files, (nfiles + 1) * sizeof *nr);
                if (!nr) goto oom;
                files = nr;
                files[nfiles++] = (file_rec){L->file, NULL};
                fi = (int32_t)c->nfiles++;
            }
            kk.file = fi;
            kk.line = L->line;
        }
        keys[nk++] = kk;
    }
    free(kinds);
    free(stands);
    kinds = NULL, stands = NULL;
    qsort(keys, nk, sizeof *keys, key_cmp);
    uint32_t nrows = 0;
    for (uint32_t i = 0; i < nk; i++) nrows += !i || keys[i].file != keys[i - 1].file || keys[i].line != keys[i - 1].line;
    c->rows = calloc(nrows ? nrows : 1, sizeof *c->rows);
    uint64_t *vals = calloc((size_t)(nrows ? nrows : 1) * MH_CT_COUNT, sizeof *vals);
    if (!c->rows || !vals) { free(vals); goto oom; }
    c->rows[0].v = vals; /* owns the block (release frees rows[0].v) */
    int64_t r = -1;
    for (uint32_t i = 0; i < nk; i++) {
        if (!i || keys[i].file != keys[i - 1].file || keys[i].line != keys[i - 1].line) {
            r++;
            c->rows[r].file = keys[i].file;
            c->rows[r].line = keys[i].line;
            c->rows[r].v = vals + (size_t)r * MH_CT_COUNT;
        }
        const uint64_t *v = per_insn + (size_t)keys[i].pc * MH_CT_COUNT;
        for (int k = 0; k < MH_CT_COUNT; k++) c->rows[r].v[k] += v[k];
    }
    c->nrows = nrows;
    free(keys);
    free(locs);
    for (size_t i = 0; i < nfiles; i++) free(files[i].name);
    free(files);
    *out = c;
    return 0;
oom:
    free(kinds);
    free(stands);
    free(keys);
    free(locs);
    for (size_t i = 0; i < nfiles; i++) free(files[i].name);
    free(files);
    release(c);
    return mh_fail(e, MH_E_NO_MEMORY, "out of memory for the launch's counters");
}
