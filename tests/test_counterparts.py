"""The CUDA -> HIP counterpart check: mapped names pass, a planted divergence is found at its line."""

from tutor_build.labs.counterparts import compare, name_map, translate

MAP = name_map()
CUDA = """#include <cuda_runtime.h>
#include "tutor_lab.cuh"
__global__ void k(float* x) { x[threadIdx.x] = __shfl_down_sync(0xffffffff, x[0], 1); }
int main() {
  cudaEvent_t start; CHECK(cudaEventCreate(&start));
  constexpr int kWarp = 32;  // vendor-specific
  CHECK(cudaMemcpyAsync(nullptr, nullptr, 0, cudaMemcpyDeviceToDevice));
}
"""
HIP = """#include <hip/hip_runtime.h>
#include "tutor_lab.hip.h"
__global__ void k(float* x) { x[threadIdx.x] = __shfl_down(0xffffffff, x[0], 1); }
int main() {
  hipEvent_t start; CHECK(hipEventCreate(&start));
  constexpr int kWarp = 64;  // vendor-specific
  CHECK(hipMemcpyAsync(nullptr, nullptr, 0, hipMemcpyDeviceToDevice));
}
"""


def test_mapped_names_are_not_flagged():
    assert compare(CUDA, HIP, "a.cu", "a.hip", MAP) is None


def test_names_map_through_the_table():
    assert translate("cudaMalloc(&p, n); cudaDeviceSynchronize();", MAP) == "hipMalloc(&p, n); hipDeviceSynchronize();"
    assert translate('#include "tutor_lab.cuh"', MAP) == '#include "tutor_lab.hip.h"'


def test_planted_divergence_is_found_with_its_line_pair():
    planted = HIP.replace("x[0], 1)", "x[0], 2)")
    found = compare(CUDA, planted, "a.cu", "a.hip", MAP)
    assert found is not None and found.line == 3
    assert "x[0], 1)" in found.cuda_line and "x[0], 2)" in found.hip_line


def test_vendor_specific_needs_the_marker_on_both_sides():
    unmarked = HIP.replace("kWarp = 64;  // vendor-specific", "kWarp = 64;")
    found = compare(CUDA, unmarked, "a.cu", "a.hip", MAP)
    assert found is not None and found.line == 6


def test_extra_line_is_reported():
    found = compare(CUDA, HIP + "// extra\n", "a.cu", "a.hip", MAP)
    assert found is not None and found.line == 9 and "only a.hip" in found.reason


def test_compiler_errors_name_the_lab_file_and_line():
    from tutor_build.labs.runner import _compiler_messages

    nvcc = 'labs/A02/cuda/transpose.cu(41): error: identifier "tile" is undefined\n'
    assert _compiler_messages(nvcc) == 'labs/A02/cuda/transpose.cu:41: error: identifier "tile" is undefined'
    clang = "labs/A02/hip/transpose.hip:41:5: error: use of undeclared identifier 'tile'"
    assert _compiler_messages(clang) == clang
