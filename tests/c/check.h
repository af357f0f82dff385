/* check.h - a minimal assertion set for the C unit tests (a dozen lines do
 * not justify a test-framework dependency).  A failed CHECK prints the place
 * and the expression and marks the test failed; main returns check_report(). */
#ifndef MH_CHECK_H
#define MH_CHECK_H

#include <stdio.h>
#include <string.h>

static int check_failures, check_count;

#define CHECK(cond)                                                                  \
    do {                                                                             \
        check_count++;                                                               \
        if (!(cond)) {                                                               \
            check_failures++;                                                        \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
        }                                                                            \
    } while (0)

#define CHECK_STR(a, b)                                                                              \
    do {                                                                                             \
        const char *a_ = (a), *b_ = (b);                                                             \
        check_count++;                                                                               \
        if (!a_ || !b_ || strcmp(a_, b_) != 0) {                                                     \
            check_failures++;                                                                        \
            fprintf(stderr, "%s:%d: CHECK_STR failed: %s\n  got:      \"%s\"\n  expected: \"%s\"\n", \
                    __FILE__, __LINE__, #a, a_ ? a_ : "(null)", b_ ? b_ : "(null)");                 \
        }                                                                                            \
    } while (0)

#define CHECK_CONTAINS(hay, needle)                                                                       \
    do {                                                                                                  \
        const char *h_ = (hay), *n_ = (needle);                                                           \
        check_count++;                                                                                    \
        if (!h_ || !strstr(h_, n_)) {                                                                     \
            check_failures++;                                                                             \
            fprintf(stderr, "%s:%d: \"%s\" does not contain \"%s\"\n", __FILE__, __LINE__, h_ ? h_ : "", n_); \
        }                                                                                                 \
    } while (0)

static inline int check_report(const char *name)
{
    fprintf(stderr, "%s: %d checks, %d failed\n", name, check_count, check_failures);
    return check_failures ? 1 : (check_count ? 0 : 1);
}

#endif
