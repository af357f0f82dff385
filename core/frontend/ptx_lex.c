/* mh_ptx_lex.c - PTX tokenizer, and the reader of "// @mgpu" marker comments. */
#include "frontend/ptx_lex.h"

#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static int strchr_punct(int c) { return c && strchr(",;:{}[]()<>+-@!|=*/", c) != NULL; }

void mh_ptx_lex_init(mh_ptx_lexer *lx, const char *text, size_t len)
{
    lx->markers = NULL;
    lx->nmarkers = lx->cap_markers = 0;
    lx->nomem = 0;
    lx->nomem_line = 0;
    lx->text = lx->p = text;
    lx->end = text + len;
    lx->line = 1;
    lx->cur.s = NULL;
    lx->cur.len = 0;
    mh_ptx_lex_next(lx);
}

/* "begin", "end" or "role" at q, as a word (white space or the line's end after it). */
static int verb_is(const char *q, const char *eol, const char *verb, size_t n)
{
    return (size_t)(eol - q) >= n && !memcmp(q, verb, n) && (q + n == eol || isspace((unsigned char)q[n]));
}

/* Records the marker comment whose "//" is at p: at is its "@mgpu", eol the
 * end of its line.  The grammar: "@mgpu", blanks, "begin", "end" or "role", white
 * space, the name (to the end of the line, white space trimmed).  -1: out of
 * memory. */
static int record_marker(mh_ptx_lexer *lx, const char *p, const char *at, const char *eol)
{
    if (lx->nmarkers == lx->cap_markers) {
        size_t cap = lx->cap_markers ? lx->cap_markers * 2 : 16;
        mh_ptx_marker *nm = cap <= SIZE_MAX / sizeof *nm ? realloc(lx->markers, cap * sizeof *nm) : NULL;
        if (!nm) return -1;
        lx->markers = nm;
        lx->cap_markers = cap;
    }
    mh_ptx_marker *mk = &lx->markers[lx->nmarkers++];
    mk->off = (size_t)(p - lx->text);
    mk->eol = (size_t)(eol - lx->text);
    mk->line = lx->line;
    mk->name_off = mk->name_len = 0;
    const char *q = at + 5;
    while (q < eol && (*q == ' ' || *q == '\t')) q++;
    if (verb_is(q, eol, "begin", 5)) mk->kind = MH_MARKER_BEGIN, q += 5;
    else if (verb_is(q, eol, "end", 3)) mk->kind = MH_MARKER_END, q += 3;
    else if (verb_is(q, eol, "role", 4)) mk->kind = MH_MARKER_ROLE, q += 4;
    else {
        mk->kind = MH_MARKER_BAD_VERB;
        return 0;
    }
    while (q < eol && isspace((unsigned char)*q)) q++;
    const char *ne = eol;
    while (ne > q && isspace((unsigned char)ne[-1])) ne--;
    if (ne == q) mk->kind = MH_MARKER_NO_NAME;
    else {
        mk->name_off = (size_t)(q - lx->text);
        mk->name_len = (size_t)(ne - q);
    }
    return 0;
}

static int ident_start(int c) { return isalpha(c) || c == '_' || c == '$' || c == '%' || c == '.'; }
static int ident_char(int c) { return isalnum(c) || c == '_' || c == '$' || c == '.'; }

void mh_ptx_lex_next(mh_ptx_lexer *lx)
{
    const char *p = lx->p, *end = lx->end;
    if (lx->nomem) p = end; /* a marker was lost: no more tokens */
    for (;;) {
        while (p < end && isspace((unsigned char)*p)) {
            if (*p == '\n') lx->line++;
            p++;
        }
        if (p + 1 < end && p[0] == '/' && p[1] == '/') {
            const char *q = p + 2, *eol = p + 2;
            while (eol < end && *eol != '\n') eol++;
            while (q < eol && (*q == ' ' || *q == '\t')) q++;
            if (eol - q >= 5 && !memcmp(q, "@mgpu", 5) && record_marker(lx, p, q, eol)) {
                lx->nomem = 1;
                lx->nomem_line = lx->line;
                p = end;
                break;
            }
            p = eol;
            continue;
        }
        if (p + 1 < end && p[0] == '/' && p[1] == '*') {
            if (!lx->open_comment_line) lx->open_comment_line = lx->line; /* cleared when it closes */
            p += 2;
            while (p + 1 < end && !(p[0] == '*' && p[1] == '/')) {
                if (*p == '\n') lx->line++;
                p++;
            }
            if (p + 1 < end) lx->open_comment_line = 0;
            p = p + 1 < end ? p + 2 : end;
            continue;
        }
        break;
    }
    mh_ptx_tok *t = &lx->cur;
    lx->prev_end = t->s ? t->s + t->len : lx->text;
    t->s = p;
    t->line = lx->line;
    if (p >= end) {
        t->kind = MH_TK_EOF;
        t->len = 0;
        lx->p = p;
        return;
    }
    unsigned char c = (unsigned char)*p;
    if (ident_start(c)) {
        /* a directive ends at its next '.': ".reg.b32" is ".reg" ".b32", as ptxas reads it
         * (cuda_fp16.hpp writes "{.reg.b32 f;"); mnemonics keep theirs ("ld.param.u64") */
        const char *q = p + 1;
        for (;;) {
            if (q < end && c == '.' && *q == '.') break;
            if (q < end && ident_char((unsigned char)*q)) q++;
            /* "L1::evict_last", "L2::128B": a "::" with a letter or a digit after it joins */
            else if (q + 2 < end && q[0] == ':' && q[1] == ':' && isalnum((unsigned char)q[2])) q += 2;
            else break;
        }
        t->kind = MH_TK_IDENT;
        t->len = (size_t)(q - p);
        lx->p = q;
        return;
    }
    if (isdigit(c)) {
        const char *q = p;
        int is_float = 0;
        if (q + 1 < end && q[0] == '0' && (q[1] == 'f' || q[1] == 'F' || q[1] == 'd' || q[1] == 'D') &&
            q + 2 < end && isxdigit((unsigned char)q[2])) {
            q += 2;
            while (q < end && isxdigit((unsigned char)*q)) q++;
            is_float = 1;
        } else if (q + 1 < end && q[0] == '0' && (q[1] == 'x' || q[1] == 'X')) {
            q += 2;
            while (q < end && isxdigit((unsigned char)*q)) q++;
        } else {
            while (q < end && isdigit((unsigned char)*q)) q++;
            if (q < end && *q == '.') {
                is_float = 1;
                q++;
                while (q < end && isdigit((unsigned char)*q)) q++;
            }
            if (q < end && (*q == 'e' || *q == 'E')) {
                is_float = 1;
                q++;
                if (q < end && (*q == '+' || *q == '-')) q++;
                while (q < end && isdigit((unsigned char)*q)) q++;
            }
        }
        if (q < end && (*q == 'U' || *q == 'u') && !is_float) q++;
        t->kind = is_float ? MH_TK_FLOAT : MH_TK_INT;
        t->len = (size_t)(q - p);
        lx->p = q;
        return;
    }
    if (c == '"') {
        const char *q = p + 1;
        while (q < end && *q != '"' && *q != '\n') q++;
        t->kind = q < end && *q == '"' ? MH_TK_STRING : MH_TK_BAD;
        if (q < end && *q == '"') q++;
        t->len = (size_t)(q - p);
        lx->p = q;
        return;
    }
    if (strchr_punct(c)) {
        t->kind = MH_TK_PUNCT;
        t->len = 1;
        lx->p = p + 1;
        return;
    }
    t->kind = MH_TK_BAD;
    t->len = 1;
    lx->p = p + 1;
}

void mh_ptx_lex_free(mh_ptx_lexer *lx)
{
    free(lx->markers);
    lx->markers = NULL;
    lx->nmarkers = lx->cap_markers = 0;
}

int mh_ptx_lex_skip_statement(mh_ptx_lexer *lx)
{
    int depth = 0;
    while (lx->cur.kind != MH_TK_EOF) {
        if (lx->cur.kind == MH_TK_BAD && lx->cur.s[0] == '"') return -3; /* a string not closed on its line */
        if (mh_ptx_tok_punct(&lx->cur, '{')) {
            if (++depth > MH_PTX_MAX_NESTING) return -1;
        } else if (mh_ptx_tok_punct(&lx->cur, '}')) {
            if (depth == 0) return 0;
            depth--;
            if (depth == 0) {
                mh_ptx_lex_next(lx);
                return 0;
            }
        } else if (mh_ptx_tok_punct(&lx->cur, ';') && depth == 0) {
            mh_ptx_lex_next(lx);
            return 0;
        }
        mh_ptx_lex_next(lx);
    }
    return -2; /* the text ended inside the statement */
}
