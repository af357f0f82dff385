/* mh_ptx_lex.h - PTX tokenizer: identifiers (dotted mnemonics, %registers,
 * $labels, .directives), numbers, punctuation; comments skipped; line
 * numbers kept for every token.  The "// @mgpu" marker comments it skips are
 * read there, once, into marker records (ptx.h's mh_ptx_marker). */
#ifndef MH_PTX_LEX_H
#define MH_PTX_LEX_H

#include <stddef.h>
#include <string.h>
#include <stdint.h>
#include "frontend/ptx.h"

typedef enum { MH_TK_EOF = 0, MH_TK_IDENT, MH_TK_INT, MH_TK_FLOAT, MH_TK_PUNCT, MH_TK_STRING, MH_TK_BAD } mh_ptx_tok_kind;

typedef struct {
    mh_ptx_tok_kind kind;
    const char *s;
    size_t len;
    uint32_t line;
} mh_ptx_tok;

typedef struct {
    const char *text, *p, *end;
    uint32_t line;
    mh_ptx_tok cur;     /* the current token */
    const char *prev_end; /* just after the token before it (where a statement that ended there ends) */
    mh_ptx_marker *markers; /* marker comments seen so far, in text order (a parser that
                             * backs up truncates nmarkers: they are read again) */
    size_t nmarkers, cap_markers;
    int nomem;          /* a marker could not be recorded (out of memory): from there on
                         * every token is MH_TK_EOF, and the parse reports MH_E_NO_MEMORY */
    uint32_t nomem_line;
    uint32_t open_comment_line; /* a block comment that the text ends inside: its line (0: none) */
} mh_ptx_lexer;

void mh_ptx_lex_init(mh_ptx_lexer *lx, const char *text, size_t len);
/* Frees the marker records the lexer still holds (a parser takes them by moving the pointer). */
void mh_ptx_lex_free(mh_ptx_lexer *lx);
/* Advances to the next token (lx->cur). */
void mh_ptx_lex_next(mh_ptx_lexer *lx);
/* Skips to just after the next ';' at this nesting level, or before '}'.  -1:
 * braces nested deeper than MH_PTX_MAX_NESTING (the current token is the '{'
 * past the limit); -2: the text ends inside the statement (a '{' never closed,
 * no ';'); -3: a string not closed on its line. */
int mh_ptx_lex_skip_statement(mh_ptx_lexer *lx);

static inline int mh_ptx_tok_is(const mh_ptx_tok *t, const char *s)
{
    size_t n = 0;
    while (s[n]) n++;
    if (t->len != n) return 0;
    for (size_t i = 0; i < n; i++)
        if (t->s[i] != s[i]) return 0;
    return 1;
}
static inline int mh_ptx_tok_punct(const mh_ptx_tok *t, char c) { return t->kind == MH_TK_PUNCT && t->s[0] == c; }

/* A mnemonic's dot-separated parts ("wgmma.mma_async.sync" -> "wgmma", "mma_async", "sync"): at most
 * max of them into part[]/len[]; returns how many. */
static inline int mh_ptx_tok_parts(const mh_ptx_tok *t, const char **part, size_t *len, int max)
{
    int n = 0;
    for (const char *p = t->s, *end = t->s + t->len; p < end && n < max;) {
        const char *q = (const char *)memchr(p, '.', (size_t)(end - p));
        part[n] = p;
        len[n++] = (size_t)((q ? q : end) - p);
        p = q ? q + 1 : end;
    }
    return n;
}

#endif
