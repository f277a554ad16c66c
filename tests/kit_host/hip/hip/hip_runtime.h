// A host-only stand-in for the HIP runtime, so the lab kit's host code (poison, guard zones, the
// check) compiles with a plain C++ compiler and runs on a machine without a GPU. "Device" memory is
// host memory; copies are memcpy. Only what tutor_lab.hip.h calls is here.
#pragma once
#include <cstddef>
#include <cstdlib>
#include <cstring>

typedef int hipError_t;
constexpr hipError_t hipSuccess = 0;
enum hipMemcpyKind { hipMemcpyHostToDevice, hipMemcpyDeviceToHost, hipMemcpyDeviceToDevice };
typedef struct ShimEvent* hipEvent_t;

inline const char* hipGetErrorName(hipError_t) { return "hipErrorMemoryAllocation"; }
inline const char* hipGetErrorString(hipError_t) { return "out of host memory"; }
template <class T>
hipError_t hipMalloc(T** p, size_t n) {
  *p = static_cast<T*>(std::malloc(n));
  return *p ? hipSuccess : 2;
}
inline hipError_t hipFree(void* p) { std::free(p); return hipSuccess; }
inline hipError_t hipMemset(void* p, int v, size_t n) { std::memset(p, v, n); return hipSuccess; }
inline hipError_t hipMemcpy(void* d, const void* s, size_t n, hipMemcpyKind) { std::memcpy(d, s, n); return hipSuccess; }
inline hipError_t hipMemcpyAsync(void* d, const void* s, size_t n, hipMemcpyKind k) { return hipMemcpy(d, s, n, k); }
inline hipError_t hipGetLastError() { return hipSuccess; }
inline hipError_t hipDeviceSynchronize() { return hipSuccess; }
inline hipError_t hipEventCreate(hipEvent_t* e) { *e = nullptr; return hipSuccess; }
inline hipError_t hipEventRecord(hipEvent_t) { return hipSuccess; }
inline hipError_t hipEventSynchronize(hipEvent_t) { return hipSuccess; }
inline hipError_t hipEventElapsedTime(float* ms, hipEvent_t, hipEvent_t) { *ms = 1.0f; return hipSuccess; }
inline hipError_t hipEventDestroy(hipEvent_t) { return hipSuccess; }
