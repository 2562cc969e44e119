// multi.cu - several kernels, each launched repeatedly, inside NVTX ranges:
// "setup" (one fill), then "solve" with ROUNDS rounds of scale and add, and
// a process-wide range "check" around a final reduction. Kernel instances:
// fill 1, scale ROUNDS, add ROUNDS, reduce 1.
// Usage: multi [rounds]; default 3.
#include <cstdio>
#include <cstdlib>

#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

__global__ void fill(float *x, size_t n, float v) {
  size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = v;
}

__global__ void scale(float *x, size_t n, float s) {
  size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= s;
}

__global__ void add(const float *x, float *y, size_t n) {
  size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] += x[i];
}

__global__ void reduce(const float *y, float *sum, size_t n) {
  size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(sum, y[i]);
}

int main(int argc, char **argv) {
  int rounds = argc > 1 ? atoi(argv[1]) : 3;
  size_t n = (size_t)1 << 20;
  float *x, *y, *sum;
  if (cudaMalloc(&x, n * sizeof *x) != cudaSuccess ||
      cudaMalloc(&y, n * sizeof *y) != cudaSuccess || cudaMalloc(&sum, sizeof *sum) != cudaSuccess)
    return 1;
  int blocks = (int)((n + 255) / 256);
  nvtxRangePushA("setup");
  fill<<<blocks, 256>>>(x, n, 1.0f);
  cudaMemset(y, 0, n * sizeof *y);
  cudaMemset(sum, 0, sizeof *sum);
  nvtxRangePop();
  nvtxRangePushA("solve");
  for (int r = 0; r < rounds; r++) {
    scale<<<blocks, 256>>>(x, n, 0.5f);
    add<<<blocks, 256>>>(x, y, n);
  }
  nvtxRangePop();
  nvtxRangeId_t check = nvtxRangeStartA("check");
  reduce<<<blocks, 256>>>(y, sum, n);
  nvtxRangeEnd(check);
  float host = 0;
  cudaMemcpy(&host, sum, sizeof host, cudaMemcpyDeviceToHost);
  printf("multi: %d rounds, sum %g\n", rounds, (double)host);
  return cudaDeviceSynchronize() == cudaSuccess ? 0 : 1;
}
