/* ptx_parser.h - what the parts of the PTX parser share (internal to core/frontend): the parser's
 * state, the name index, and the functions one part of the parser calls in another: ptx_parse.c
 * (the module's directives and functions, token helpers), ptx_decl.c (declarations),
 * ptx_insn.c (instructions, operands and blocks), ptx_tables.c (the module's tables). */
#ifndef MH_PTX_PARSER_H
#define MH_PTX_PARSER_H

#include "frontend/ptx.h"
#include "frontend/ptx_lex.h"

#include <stddef.h>
#include <stdint.h>

typedef struct {
    const char *name;   /* prefix for ranges, whole name otherwise */
    size_t len;
    uint32_t count;     /* 0: a single register */
    uint32_t width;     /* a vector register (.reg .v2/.v4): its element count, registers base.. */
    uint32_t base;
    int depth;
    int32_t prev;       /* the declaration this one hides (same name or prefix), -1: none */
    uint32_t line;
} reg_decl;

/* A hash index of names: (name, scope) -> an int (-1: none), so that looking up a
 * register, variable, parameter, label or function costs the same in a module of
 * a hundred thousand of them as in a small one.  Keys point into strings that
 * outlive the index (the module text, names the module owns). */
typedef struct {
    const char *s;      /* NULL: an empty slot */
    uint32_t len, hash;
    int32_t scope, val;
} name_ent;
typedef struct {
    name_ent *e;
    size_t cap, n;      /* cap: a power of two (or 0), at most half full */
} name_index;

typedef struct {
    const char *name;
    size_t len;
    uint32_t insn;
    uint32_t func;      /* calls: the calling function */
    int32_t block;      /* labels and branches: the block of the function they are in */
    uint32_t line;
} label_ref;

typedef struct {
    mh_ptx_lexer lx;
    mh_ptx_module *m;
    mh_error *e;
    reg_decl *decls;
    size_t ndecls, cap_decls;
    int depth;
    int func;              /* index of the function being parsed */
    mh_ptx_block *blocks;  /* the function's blocks so far (ptx.h) */
    size_t nblocks, cap_blocks;
    int32_t block;         /* the block being parsed (-1: none) */
    int32_t block_base;    /* blocks of the functions before: a function variable's scope in the
                            * index is block_base + its block, unique in the module */
    size_t decls_from;     /* the first register declaration of the block being parsed */
    mh_ptx_insn *code;
    size_t ncode, cap_code;
    label_ref *labels, *fixups;
    size_t nlabels, cap_labels, nfixups, cap_fixups;
    label_ref *calls;      /* call sites: name of the callee, the calling function and the call's index */
    size_t ncalls, cap_calls;
    const char *last_close;  /* the '}' that ended the last block */
    size_t next_marker;      /* markers of the lexer already placed */
    size_t cap_mma, cap_mma_regs; /* capacities of m->mma and m->mma_regs */
    size_t cap_tma;          /* capacity of m->tma */
    size_t cap_funcs, cap_vars; /* capacities of m->funcs and m->vars (they grow geometrically) */
    name_index regs;         /* register declarations in scope: (name, 0) single, (prefix, 1) range -> decl */
    name_index vars;         /* (name, block_base + block, or -1 at module scope) -> its variable */
    name_index params;       /* the function's (name, 0) parameters, (name, 1) return parameters -> index */
    name_index labels_ix;    /* the function's (label, block) -> its definition in P->labels; (label, -1)
                              * -> the first in any block (for the message of a label not in sight) */
    name_index funcs;        /* (name, 0) -> the first function of that name, (name, 1) -> the last defined */
} parser;

#define TOK (&P->lx.cur)
#define NEXT() mh_ptx_lex_next(&P->lx)

/* ptx_parse.c: messages ("path:line: ..."; -1), token helpers */
int perr(parser *P, uint32_t line, mh_code code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
int grow(void **v, size_t *cap, size_t need, size_t elem);
char *tokdup(const mh_ptx_tok *t);
int expect_punct(parser *P, char c);
int parse_u64(const mh_ptx_tok *t, uint64_t *out);
double parse_float(const mh_ptx_tok *t);
int skip_loc(parser *P);
/* mh_ptx_lex_skip_statement, its failures as ptx_syntax errors naming `what` and its line. */
int skip_statement(parser *P, const char *what);

/* ptx_tables.c: the name index, types, spaces, opcodes, special registers, registers in scope,
 * variables and parameters, the variables' layout */
int32_t index_get(const name_index *x, const char *s, size_t n, int32_t scope);
int32_t *index_put(name_index *x, const char *s, size_t n, int32_t scope);
void index_free(name_index *x);
mh_ptx_type type_of(const char *s, size_t n);
int space_of(const char *s, size_t n);
int op_of(const char *s, size_t n);
int sreg_of(const char *s, size_t n);
int new_reg(parser *P, const char *name, size_t len, mh_ptx_type t, uint32_t *out);
int lookup_reg(parser *P, const char *s, size_t n, uint32_t *out);
/* A vector register's name (.reg .v4 .f32 v): its element count and first element's register, 0
 * when s names no vector register.  Its elements are v.x .. v.w (or .r .g .b .a), as lookup_reg
 * finds them; the name alone is the vector, an operand of vector instructions. */
uint32_t lookup_vec_reg(parser *P, const char *s, size_t n, uint32_t *base);
/* A name declared again in the scope being parsed (the module's, or the block's: a label, a
 * register, a variable, a parameter of the function in its body's block) is refused as ptxas
 * refuses it, naming both lines; `what` says what the new one is.  range: a register range
 * "name<range>", which also takes the single registers of the block it covers. */
int check_new_name(parser *P, const char *s, size_t n, const char *what, uint32_t line, uint32_t range);
void decls_truncate(parser *P, size_t n);
/* The variable a name means where the parser is: the innermost block's that declares it, else the
 * module's; -1: none. */
int find_var(parser *P, const char *s, size_t n);
int find_param(parser *P, const char *s, size_t n);
int index_params(parser *P);
int layout_vars(mh_ptx_module *m);
/* Each function's static shared memory and dynamic offset, each kernel's offsets (ptx_smem.c).  -1: no memory. */
int layout_shared(mh_ptx_module *m);

/* ptx_decl.c: .reg declarations, variables, parameter lists */
int parse_reg_decl(parser *P);
/* a variable's linkage: static (no directive), .extern, or .visible/.weak/.common */
enum { PTX_LINK_STATIC, PTX_LINK_EXTERN, PTX_LINK_VISIBLE };
int parse_var(parser *P, int linkage);
int parse_param_list(parser *P, mh_ptx_param **out, uint32_t *n, uint32_t *bytes);

/* ptx_insn.c: a function body (its instructions and nested blocks), its labels, its pointer
 * parameters */
int parse_block_at(parser *P, const char **close_at);
int resolve_labels(parser *P, mh_ptx_func *f);
int infer_pointers(mh_ptx_module *m, mh_ptx_func *f);
int parse_operand(parser *P, mh_ptx_insn *in, mh_ptx_opnd *o);
int skip_opaque(parser *P, mh_ptx_insn *in, const mh_ptx_tok *mn);

/* ptx_mma.c: the tensor-core and warpgroup instructions.  1: the mnemonic is one of them
 * (wgmma, mma, wmma, ldmatrix, stmatrix, movmatrix, setmaxnreg) */
int mma_mnemonic(const mh_ptx_tok *t);
/* Decodes one (its operands up to and with the ';'): MH_OP_MMA with its record, or a form
 * not decoded kept as text (MH_OP_OPAQUE, which emu refuses by name).  -1: an error. */
int parse_mma(parser *P, mh_ptx_insn *in, const mh_ptx_tok *mn);

/* ptx_tma.c: the bulk copies.  1: the mnemonic is one (cp.async.bulk..., cp.reduce.async.bulk...) */
int tma_mnemonic(const mh_ptx_tok *t);
/* Decodes one (its operands up to and with the ';'): MH_OP_TMA with its record; commit_group and
 * wait_group as MH_OP_MEMBAR, the prefetch forms as MH_OP_PREFETCH; a form not decoded kept as
 * text (MH_OP_OPAQUE).  -1: an error. */
int parse_tma(parser *P, mh_ptx_insn *in, const mh_ptx_tok *mn);

#endif
