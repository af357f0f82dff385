/* mh_ptx_lex.h - PTX tokenizer: identifiers (dotted mnemonics, %registers,
 * $labels, .directives), numbers, punctuation; comments skipped; line
 * numbers kept for every token. */
#ifndef MH_PTX_LEX_H
#define MH_PTX_LEX_H

#include <stddef.h>
#include <stdint.h>

typedef enum { MH_TK_EOF = 0, MH_TK_IDENT, MH_TK_INT, MH_TK_FLOAT, MH_TK_PUNCT, MH_TK_STRING, MH_TK_BAD } mh_ptx_tok_kind;

typedef struct {
    mh_ptx_tok_kind kind;
    const char *s;
    size_t len;
    uint32_t line;
} mh_ptx_tok;

typedef struct {
    const char *s;   /* the "//" of a "// @mgpu ..." comment */
    uint32_t line;
} mh_ptx_marker_pos;

typedef struct {
    const char *p, *end;
    uint32_t line;
    mh_ptx_tok cur;     /* the current token */
    mh_ptx_marker_pos *markers; /* region-marker comments seen so far, in order */
    size_t nmarkers, cap_markers;
} mh_ptx_lexer;

void mh_ptx_lex_init(mh_ptx_lexer *lx, const char *text, size_t len);
void mh_ptx_lex_free(mh_ptx_lexer *lx);
/* Advances to the next token (lx->cur). */
void mh_ptx_lex_next(mh_ptx_lexer *lx);
/* Skips to just after the next ';' at this nesting level, or before '}'. */
void mh_ptx_lex_skip_statement(mh_ptx_lexer *lx);

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

#endif
