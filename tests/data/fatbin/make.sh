#!/bin/sh
# Rebuilds the real fat-binary fixtures with nvcc (CUDA 13.0 made the checked-in ones); the -gencode lists are
# the expectations tests/readers/test_fatbin.py checks, independent of cuobjdump.
set -e
cd "$(dirname "$0")"
cat > /tmp/axpy.cu <<'CU'
__global__ void axpy(float a, float *x, float *y) { int i = blockIdx.x * blockDim.x + threadIdx.x; y[i] = a * x[i] + y[i]; }
extern "C" void launch(float *x, float *y) { axpy<<<1, 32>>>(2.0f, x, y); }
CU
nvcc -shared -cudart shared -Xcompiler -fPIC -o libtorch_cuda.so /tmp/axpy.cu \
  -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90 -gencode arch=compute_90a,code=sm_90a \
  -gencode arch=compute_100,code=sm_100 -gencode arch=compute_120,code=sm_120 -gencode arch=compute_120,code=compute_120
nvcc -shared -cudart shared -Xcompiler -fPIC -o libptx_only.so /tmp/axpy.cu \
  -gencode arch=compute_100a,code=sm_100a -gencode arch=compute_75,code=compute_75
strip libtorch_cuda.so libptx_only.so
