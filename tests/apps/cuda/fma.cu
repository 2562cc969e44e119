// fma.cu - compute bound: every thread runs CHAINS independent chains of
// ITERS dependent FP32 fused multiply-adds. One launch executes
// threads * CHAINS * ITERS FFMA instructions, 2 FLOPs each; the result is
// stored so that the compiler keeps every one.
// Usage: fma [blocks [launches]]; defaults 1024 blocks of 256 threads, 1.
#include <cstdio>
#include <cstdlib>

#include <cuda_runtime.h>

#define CHAINS 4
#define ITERS 4096

__global__ void fma_chain(float *out, float a, float b) {
  float x0 = threadIdx.x, x1 = x0 + 1.0f, x2 = x0 + 2.0f, x3 = x0 + 3.0f;
#pragma unroll 64
  for (int i = 0; i < ITERS; i++) {
    x0 = fmaf(x0, a, b);
    x1 = fmaf(x1, a, b);
    x2 = fmaf(x2, a, b);
    x3 = fmaf(x3, a, b);
  }
  out[(size_t)blockIdx.x * blockDim.x + threadIdx.x] = x0 + x1 + x2 + x3;
}

int main(int argc, char **argv) {
  int blocks = argc > 1 ? atoi(argv[1]) : 1024;
  int launches = argc > 2 ? atoi(argv[2]) : 1;
  float *out = NULL;
  if (cudaMalloc(&out, (size_t)blocks * 256 * sizeof *out) != cudaSuccess) return 1;
  for (int k = 0; k < launches; k++) fma_chain<<<blocks, 256>>>(out, 0.999f, 0.001f);
  cudaError_t e = cudaDeviceSynchronize();
  if (e != cudaSuccess) {
    fprintf(stderr, "fma: %s\n", cudaGetErrorString(e));
    return 1;
  }
  printf("fma: %d launches, %lld FFMA each\n", launches, (long long)blocks * 256 * CHAINS * ITERS);
  cudaFree(out);
  return 0;
}
