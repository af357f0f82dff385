/* mh_ptx_lex.c - PTX tokenizer. */
#include "frontend/ptx_lex.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

static int strchr_punct(int c) { return c && strchr(",;:{}[]()<>+-@!|=*/", c) != NULL; }

void mh_ptx_lex_init(mh_ptx_lexer *lx, const char *text, size_t len)
{
    lx->markers = NULL;
    lx->nmarkers = lx->cap_markers = 0;
    lx->p = text;
    lx->end = text + len;
    lx->line = 1;
    mh_ptx_lex_next(lx);
}

static int ident_start(int c) { return isalpha(c) || c == '_' || c == '$' || c == '%' || c == '.'; }
static int ident_char(int c) { return isalnum(c) || c == '_' || c == '$' || c == '.'; }

void mh_ptx_lex_next(mh_ptx_lexer *lx)
{
    const char *p = lx->p, *end = lx->end;
    for (;;) {
        while (p < end && isspace((unsigned char)*p)) {
            if (*p == '\n') lx->line++;
            p++;
        }
        if (p + 1 < end && p[0] == '/' && p[1] == '/') {
            const char *q = p + 2;
            while (q < end && (*q == ' ' || *q == '\t')) q++;
            if (end - q >= 5 && !memcmp(q, "@mgpu", 5)) {
                if (lx->nmarkers == lx->cap_markers) {
                    size_t cap = lx->cap_markers ? lx->cap_markers * 2 : 16;
                    mh_ptx_marker_pos *nm = realloc(lx->markers, cap * sizeof *nm);
                    if (nm) {
                        lx->markers = nm;
                        lx->cap_markers = cap;
                    }
                }
                if (lx->nmarkers < lx->cap_markers) {
                    lx->markers[lx->nmarkers].s = p;
                    lx->markers[lx->nmarkers].line = lx->line;
                    lx->nmarkers++;
                }
            }
            while (p < end && *p != '\n') p++;
            continue;
        }
        if (p + 1 < end && p[0] == '/' && p[1] == '*') {
            p += 2;
            while (p + 1 < end && !(p[0] == '*' && p[1] == '/')) {
                if (*p == '\n') lx->line++;
                p++;
            }
            p = p + 1 < end ? p + 2 : end;
            continue;
        }
        break;
    }
    mh_ptx_tok *t = &lx->cur;
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
        const char *q = p + 1;
        for (;;) {
            if (q < end && ident_char((unsigned char)*q)) q++;
            else if (q + 2 < end && q[0] == ':' && q[1] == ':' && isalpha((unsigned char)q[2])) q += 2;
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

void mh_ptx_lex_skip_statement(mh_ptx_lexer *lx)
{
    int depth = 0;
    while (lx->cur.kind != MH_TK_EOF) {
        if (mh_ptx_tok_punct(&lx->cur, '{')) depth++;
        else if (mh_ptx_tok_punct(&lx->cur, '}')) {
            if (depth == 0) return;
            depth--;
            if (depth == 0) {
                mh_ptx_lex_next(lx);
                return;
            }
        } else if (mh_ptx_tok_punct(&lx->cur, ';') && depth == 0) {
            mh_ptx_lex_next(lx);
            return;
        }
        mh_ptx_lex_next(lx);
    }
}
