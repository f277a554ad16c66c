// A host-only stand-in for the CUDA runtime, so the lab kit's host code (poison, guard zones, the
// check) compiles with a plain C++ compiler and runs on a machine without a GPU. "Device" memory is
// host memory; copies are memcpy. Only what tutor_lab.cuh calls is here.
#pragma once
#include <cstddef>
#include <cstdlib>
#include <cstring>

typedef int cudaError_t;
constexpr cudaError_t cudaSuccess = 0;
enum cudaMemcpyKind { cudaMemcpyHostToDevice, cudaMemcpyDeviceToHost, cudaMemcpyDeviceToDevice };
typedef struct ShimEvent* cudaEvent_t;
enum cudaDeviceAttr { cudaDevAttrL2CacheSize, cudaDeviceAttributeL2CacheSize };  // the CUDA and the HIP spelling

// The timer's spin kernel compiles as a host function (the test copies the kit with its launches made calls);
// the probe times nothing, so it never runs.
#define __global__
inline long long clock64() { return 0; }

inline const char* cudaGetErrorName(cudaError_t) { return "cudaErrorMemoryAllocation"; }
inline const char* cudaGetErrorString(cudaError_t) { return "out of host memory"; }
template <class T>
cudaError_t cudaMalloc(T** p, size_t n) {
  *p = static_cast<T*>(std::malloc(n));
  return *p ? cudaSuccess : 2;
}
inline cudaError_t cudaFree(void* p) { std::free(p); return cudaSuccess; }
inline cudaError_t cudaMemset(void* p, int v, size_t n) { std::memset(p, v, n); return cudaSuccess; }
inline cudaError_t cudaMemcpy(void* d, const void* s, size_t n, cudaMemcpyKind) { std::memcpy(d, s, n); return cudaSuccess; }
inline cudaError_t cudaMemcpyAsync(void* d, const void* s, size_t n, cudaMemcpyKind k) { return cudaMemcpy(d, s, n, k); }
inline cudaError_t cudaGetLastError() { return cudaSuccess; }
inline cudaError_t cudaDeviceSynchronize() { return cudaSuccess; }
inline cudaError_t cudaEventCreate(cudaEvent_t* e) { *e = nullptr; return cudaSuccess; }
inline cudaError_t cudaEventRecord(cudaEvent_t) { return cudaSuccess; }
inline cudaError_t cudaEventSynchronize(cudaEvent_t) { return cudaSuccess; }
inline cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t, cudaEvent_t) { *ms = 1.0f; return cudaSuccess; }
inline cudaError_t cudaEventDestroy(cudaEvent_t) { return cudaSuccess; }
inline cudaError_t cudaMemsetAsync(void* p, int v, size_t n) { return cudaMemset(p, v, n); }
inline cudaError_t cudaGetDevice(int* device) { *device = 0; return cudaSuccess; }
inline cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr, int) { *value = 1 << 20; return cudaSuccess; }
