/* ptx_lex.h - PTX tokenizer: identifiers (dotted mnemonics, %registers,
 * $labels, .directives), numbers, punctuation; comments skipped; line
 * numbers kept for every token. */
#ifndef MH_PTX_LEX_H
#define MH_PTX_LEX_H

#include <stddef.h>
#include <stdint.h>

typedef enum { TK_EOF = 0, TK_IDENT, TK_INT, TK_FLOAT, TK_PUNCT, TK_STRING, TK_BAD } ptx_tok_kind;

typedef struct {
    ptx_tok_kind kind;
    const char *s;
    size_t len;
    uint32_t line;
} ptx_tok;

typedef struct {
    const char *s;   /* the "//" of a "// @mgpu ..." comment */
    uint32_t line;
} ptx_marker_pos;

typedef struct {
    const char *p, *end;
    uint32_t line;
    ptx_tok cur;     /* the current token */
    ptx_marker_pos *markers; /* region-marker comments seen so far, in order */
    size_t nmarkers, cap_markers;
} ptx_lexer;

void ptx_lex_init(ptx_lexer *lx, const char *text, size_t len);
void ptx_lex_free(ptx_lexer *lx);
/* Advances to the next token (lx->cur). */
void ptx_lex_next(ptx_lexer *lx);
/* Skips to just after the next ';' at this nesting level, or before '}'. */
void ptx_lex_skip_statement(ptx_lexer *lx);

static inline int ptx_tok_is(const ptx_tok *t, const char *s)
{
    size_t n = 0;
    while (s[n]) n++;
    if (t->len != n) return 0;
    for (size_t i = 0; i < n; i++)
        if (t->s[i] != s[i]) return 0;
    return 1;
}
static inline int ptx_tok_punct(const ptx_tok *t, char c) { return t->kind == TK_PUNCT && t->s[0] == c; }

#endif
