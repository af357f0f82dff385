/* cuBLAS stand-ins for programs that compare against cuBLAS (fast.cu's kernel 0): they succeed
 * and compute nothing; the corpus computes its own reference.  Arguments are ignored, so the
 * definitions take none (the x86-64 calling convention lets the caller pass them). */
int cublasCreate_v2(void) { return 0; }
int cublasDestroy_v2(void) { return 0; }
int cublasGemmEx(void) { return 0; }
int cublasSetStream_v2(void) { return 0; }
int cublasSetMathMode(void) { return 0; }
