/* check.h - what every test program here shares: CHECK(call) stops the program
 * with the call, its error's name and the line when a runtime call fails, and
 * EXPECT(cond, ...) when a result is wrong.  Each program checks its own results
 * and exits 0 only when they are right. */
#ifndef MGPU_TEST_CHECK_H
#define MGPU_TEST_CHECK_H
#include <cstdio>
#include <cstdlib>
#define CHECK(x)                                                                                          \
    do {                                                                                                  \
        cudaError_t e_ = (x);                                                                             \
        if (e_ != cudaSuccess) {                                                                          \
            fprintf(stderr, "%s:%d: %s: %s (%s)\n", __FILE__, __LINE__, #x, cudaGetErrorName(e_),         \
                    cudaGetErrorString(e_));                                                              \
            exit(1);                                                                                      \
        }                                                                                                 \
    } while (0)
#define EXPECT(cond, ...)                                                                                 \
    do {                                                                                                  \
        if (!(cond)) {                                                                                    \
            fprintf(stderr, "%s:%d: expected %s: ", __FILE__, __LINE__, #cond);                           \
            fprintf(stderr, __VA_ARGS__);                                                                 \
            fputc('\n', stderr);                                                                          \
            exit(1);                                                                                      \
        }                                                                                                 \
    } while (0)
#endif
