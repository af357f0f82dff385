/* fake_cublas.c - a library named as NVIDIA's cuBLAS (libcublas.so.13) for test_cudart_foreign:
 * the stand-in must name it; it holds nothing of cuBLAS. */
int mgpu_test_fake_cublas(void);
int mgpu_test_fake_cublas(void) { return 13; }
