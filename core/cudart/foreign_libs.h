/* foreign_libs.h - NVIDIA's CUDA libraries in the process (cuBLAS, cuFFT, cuDNN, ...): they
 * run their own GPU code through NVIDIA's runtime and driver, which the stand-in does not serve. */
#ifndef MGPU_CUDART_FOREIGN_LIBS_H
#define MGPU_CUDART_FOREIGN_LIBS_H

/* Says once per process (on stderr, naming each) which of NVIDIA's libraries are loaded: their
 * calls fail on emu ("CUBLAS initialization error" is all cuBLAS says).  Returns how many. */
int cr_say_foreign_libraries(void);

#endif
