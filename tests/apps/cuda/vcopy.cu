// vcopy.cu - a vector copy: each launch reads N floats and writes N, so its
// DRAM traffic is 2 * N * 4 bytes (N is far larger than the L2 cache).
// Usage: vcopy [N [launches]]; defaults 67108864 (256 MiB per buffer), 2.
#include <cstdio>
#include <cstdlib>

#include <cuda_runtime.h>

__global__ void vcopy(const float *in, float *out, size_t n) {
  size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  size_t stride = (size_t)gridDim.x * blockDim.x;
  for (; i < n; i += stride) out[i] = in[i];
}

int main(int argc, char **argv) {
  size_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : (size_t)1 << 26;
  int launches = argc > 2 ? atoi(argv[2]) : 2;
  float *in = NULL, *out = NULL;
  if (cudaMalloc(&in, n * sizeof *in) != cudaSuccess ||
      cudaMalloc(&out, n * sizeof *out) != cudaSuccess) {
    fprintf(stderr, "vcopy: cannot allocate 2 x %zu floats\n", n);
    return 1;
  }
  cudaMemset(in, 0, n * sizeof *in);
  int blocks = (int)((n + 255) / 256);
  for (int k = 0; k < launches; k++) vcopy<<<blocks, 256>>>(in, out, n);
  cudaError_t e = cudaDeviceSynchronize();
  if (e != cudaSuccess) {
    fprintf(stderr, "vcopy: %s\n", cudaGetErrorString(e));
    return 1;
  }
  printf("vcopy: %d launches of %zu floats (%zu bytes each)\n", launches, n, 2 * n * sizeof(float));
  cudaFree(in);
  cudaFree(out);
  return 0;
}
