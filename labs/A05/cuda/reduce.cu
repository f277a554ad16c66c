// A05 reduce: the sum of n float32 values, five ways, from one atomic per element to a kernel
// that reads at the copy ceiling. "Warp" means NVIDIA's 32 lanes; AMD's wavefront has 64.
//   build: nvcc -O3 -std=c++17 -arch=sm_90a -I labs/common/cuda labs/A05/cuda/reduce.cu -o reduce  // vendor-specific
//   run:   ./reduce            checks every variant on odd sizes (exact on integers, bounded on floats)
//          ./reduce --bench    GB/s read by each variant on 2^28 floats (1 GiB), the copy ceiling, and
//                              how many different sums 20 runs of the same input give
#include "tutor_lab.cuh"  // vendor-specific

#if __has_include(<cub/cub.cuh>)  // vendor-specific
#include <cub/cub.cuh>  // vendor-specific
#define REDUCE_HAVE_LIBRARY 1
#else
#define REDUCE_HAVE_LIBRARY 0
#endif

constexpr int kBlock = 256;                         // threads per block
constexpr int kWarps = kBlock / tutor::kWarpSize;   // 8 warps (NVIDIA) or 4 wavefronts (AMD)
constexpr int kInFlight = 4;                        // 16-byte loads each thread issues before it adds
constexpr int kBlocksPerSM = 8;                     // 8 x 256 = 2,048 threads, a full SM or CU

// ---------------------------------------------------------------- the shuffle tree
// Lane l adds the value of lane l + offset; offsets halve from half the lane count down to 1,
// so the tree takes log2(lanes) steps: 5 for a warp of 32, 6 for a wavefront of 64.
// Lane 0 ends with the sum of every lane; the other lanes hold partial sums nobody reads.
__device__ float warp_sum(float v) {
  for (int offset = tutor::kWarpSize / 2; offset > 0; offset /= 2)
    v += __shfl_down_sync(0xffffffffu, v, offset);  // vendor-specific
  return v;
}

// The sum of one value per thread of the block, in thread 0: a shuffle tree per warp, the warp
// sums through shared memory, and the shuffle tree once more in warp 0. Every thread must call it.
__device__ float block_sum(float v) {
  __shared__ float warp_part[kWarps];
  const int lane = threadIdx.x % tutor::kWarpSize, warp = threadIdx.x / tutor::kWarpSize;
  v = warp_sum(v);
  if (lane == 0) warp_part[warp] = v;
  __syncthreads();
  v = 0.0f;
  if (warp == 0) {
    if (lane < kWarps) v = warp_part[lane];
    v = warp_sum(v);
  }
  return v;
}

// ---------------------------------------------------------------- the ladder
// (1) atomic_each: every thread adds its element to the one result with an atomic. All n atomics
// land on one address, and the memory system applies them one after another.
__global__ void atomic_each(const float* in, float* out, size_t n) {
  size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(out, in[i]);
}

// (2) smem_tree: one element per thread, a tree in shared memory (8 halving steps, a barrier
// after each), then one atomic per block.
__global__ void smem_tree(const float* in, float* out, size_t n) {
  __shared__ float s[kBlock];
  size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  s[threadIdx.x] = i < n ? in[i] : 0.0f;
  __syncthreads();
  for (int half = kBlock / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) s[threadIdx.x] += s[threadIdx.x + half];
    __syncthreads();
  }
  if (threadIdx.x == 0) atomicAdd(out, s[0]);
}

// (3) warp_shuffle: one element per thread, the shuffle tree in registers, one atomic per block.
__global__ void warp_shuffle(const float* in, float* out, size_t n) {
  size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  float v = block_sum(i < n ? in[i] : 0.0f);
  if (threadIdx.x == 0) atomicAdd(out, v);
}

// The partial sum of one thread of a grid of `threads` threads: a grid-stride walk over the
// float4s of `in`, kInFlight independent 16-byte loads per round, then the n % 4 tail elements.
// The order of the additions depends only on n and the grid, never on timing.
__device__ float thread_partial(const float* in, size_t n, size_t tid, size_t threads) {
  const float4* in4 = reinterpret_cast<const float4*>(in);  // cudaMalloc'd: 256-byte aligned
  const size_t n4 = n / 4;
  float acc[kInFlight] = {};
  size_t i = tid;
  for (; i + (kInFlight - 1) * threads < n4; i += kInFlight * threads) {
    float4 v[kInFlight];
#pragma unroll
    for (int k = 0; k < kInFlight; ++k) v[k] = in4[i + k * threads];  // all loads issued first
#pragma unroll
    for (int k = 0; k < kInFlight; ++k) acc[k] += (v[k].x + v[k].y) + (v[k].z + v[k].w);
  }
  for (; i < n4; i += threads) {
    float4 v = in4[i];
    acc[0] += (v.x + v.y) + (v.z + v.w);
  }
  for (size_t j = 4 * n4 + tid; j < n; j += threads) acc[0] += in[j];
  float s = 0.0f;
#pragma unroll
  for (int k = 0; k < kInFlight; ++k) s += acc[k];
  return s;
}

// (4) vec_grid: a grid just large enough to fill the GPU, 16-byte loads, several in flight per
// thread, the shuffle tree, one atomic per block.
__global__ void __launch_bounds__(kBlock) vec_grid(const float* in, float* out, size_t n) {
  const size_t threads = (size_t)gridDim.x * blockDim.x;
  float v = block_sum(thread_partial(in, n, (size_t)blockIdx.x * blockDim.x + threadIdx.x, threads));
  if (threadIdx.x == 0) atomicAdd(out, v);
}

// (5) two_pass, first pass: the same work as vec_grid, but block b writes its sum to partial[b].
__global__ void __launch_bounds__(kBlock) partial_sums(const float* in, float* partial, size_t n) {
  const size_t threads = (size_t)gridDim.x * blockDim.x;
  float v = block_sum(thread_partial(in, n, (size_t)blockIdx.x * blockDim.x + threadIdx.x, threads));
  if (threadIdx.x == 0) partial[blockIdx.x] = v;
}

// Second pass: one block adds the partials in a fixed order. No atomics anywhere, so the same
// input gives the same bits on every run.
__global__ void __launch_bounds__(kBlock) sum_partials(const float* partial, float* out, int count) {
  float v = 0.0f;
  for (int b = threadIdx.x; b < count; b += kBlock) v += partial[b];
  v = block_sum(v);
  if (threadIdx.x == 0) *out = v;
}

// ---------------------------------------------------------------- driver
const char* const kVariants[] = {"atomic_each", "smem_tree", "warp_shuffle", "vec_grid", "two_pass"};

bool uses_atomics(const std::string& v) { return v != "two_pass"; }

unsigned blocks(size_t n, size_t per_block) { return (unsigned)((n + per_block - 1) / per_block); }

int sm_count() {
  static int sms = 0;
  if (!sms) TUTOR_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  return sms;
}

// vec_grid and two_pass: enough blocks to fill every SM, fewer if n is small.
unsigned grid_blocks(size_t n) {
  unsigned want = blocks(n, (size_t)kBlock * 4 * kInFlight);
  return std::max(1u, std::min(want, (unsigned)(sm_count() * kBlocksPerSM)));
}

// An atomic variant adds to *out, so the caller zeroes it first; two_pass overwrites it.
void launch(const std::string& v, const float* in, float* out, float* partial, size_t n) {
  if (v == "atomic_each")
    atomic_each<<<blocks(n, kBlock), kBlock>>>(in, out, n);
  else if (v == "smem_tree")
    smem_tree<<<blocks(n, kBlock), kBlock>>>(in, out, n);
  else if (v == "warp_shuffle")
    warp_shuffle<<<blocks(n, kBlock), kBlock>>>(in, out, n);
  else if (v == "vec_grid")
    vec_grid<<<grid_blocks(n), kBlock>>>(in, out, n);
  else {
    partial_sums<<<grid_blocks(n), kBlock>>>(in, partial, n);
    sum_partials<<<1, kBlock>>>(partial, out, (int)grid_blocks(n));
  }
}

// Integers 0..7 stored as floats, each kept with probability min(1, 2^21 / n), the others 0: every
// partial sum is an integer below 2^24 (checked), so any order of addition is exact. Up to 2^21
// elements every value is kept.
double fill_exact(std::vector<float>& v, uint64_t seed) {
  tutor::fill_random(v, seed, 0.0f, 8.0f);
  const double keep = std::min(1.0, std::ldexp(1.0, 21) / (double)v.size());
  uint64_t h = seed * 0x9E3779B97F4A7C15ull + 1;
  double total = 0.0;
  for (float& x : v) {
    h ^= h << 13, h ^= h >> 7, h ^= h << 17;  // xorshift64: which elements are kept
    x = (double)(h >> 11) * 0x1.0p-53 < keep ? std::floor(x) : 0.0f;
    total += x;
  }
  if (total >= 0x1.0p24) {
    std::fprintf(stderr, "reduce: the exact input sums to %.0f, not below 2^24\n", total);
    std::exit(2);
  }
  return total;
}

// Every variant on fresh inputs of n elements, output poisoned first. Two checks per size:
//  - integers 0..7 stored as floats (fill_exact): every partial sum is an integer below 2^24, so any
//    order of addition is exact and the sum must equal the reference bit for bit;
//  - uniform floats in [-1, 1): whatever the order, |sum - exact| <= gamma(n - 1) sum|x_i|, with
//    gamma(k) = k u / (1 - k u) and u = 2^-24 the unit roundoff of float32, against a float64
//    reference (plus u |exact| for rounding that reference to float32). The bound means something
//    only while (n - 1) u is well below 1: above 2^23 elements, the exact check alone.
void verify(size_t n, uint64_t seed) {
  std::vector<float> in(n);
  float *din, *dout, *dpartial;
  tutor::guarded_malloc(&din, n, "in");
  tutor::guarded_malloc(&dout, 1, "sum");
  tutor::guarded_malloc(&dpartial, (size_t)sm_count() * kBlocksPerSM, "partial");
  const std::string size = std::to_string(n);
  const double u = std::ldexp(1.0, -24), ku = (double)(n - 1) * u;
  for (int integers = 1; integers >= (ku < 0.5 ? 0 : 1); --integers) {
    double exact = 0.0, magnitude = 0.0;
    if (integers) {
      exact = magnitude = fill_exact(in, seed);
    } else {
      tutor::fill_random(in, seed, -1.0f, 1.0f);
      for (float x : in) exact += x, magnitude += std::fabs(x);
    }
    const float ref = (float)exact;
    const double tol = integers ? 0.0 : ku / (1.0 - ku) * magnitude + u * std::fabs(exact);
    TUTOR_CHECK(cudaMemcpy(din, in.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    for (const char* v : kVariants) {
      tutor::poison(dout, sizeof(float));
      if (uses_atomics(v)) TUTOR_CHECK(cudaMemset(dout, 0, sizeof(float)));
      launch(v, din, dout, dpartial, n);
      TUTOR_CHECK_LAUNCH();
      float got;
      TUTOR_CHECK(cudaMemcpy(&got, dout, sizeof(float), cudaMemcpyDeviceToHost));
      const std::string name = std::string(v) + (integers ? "" : "_float");
      tutor::check_close("reduce", name.c_str(), size, &got, &ref, 1, seed, tol, 0);
    }
  }
  tutor::guarded_free(din);
  tutor::guarded_free(dout);
  tutor::guarded_free(dpartial);
}

// A count, not a rate: how many different float32 results `runs` runs of one variant on the same
// input gave. Printed as a measure line of kind "counter" (no ceiling).
void count_line(const char* variant, int distinct, int runs) {
  tutor::json_begin("measure", "reduce", variant);
  std::printf(", \"metric\": \"distinct results in %d runs\", \"value\": %d, \"unit\": \"distinct sum\"", runs,
              distinct);
  std::printf(", \"ceiling\": {\"name\": \"none (a count)\", \"value\": 0, \"unit\": \"distinct sum\"}");
  std::printf(", \"kind\": \"counter\"");
  tutor::json_end();
}

// GB/s read by every variant (4 bytes an element, read once) beside the copy ceiling (bytes read
// plus bytes written per second). The timed input is fill_exact's (the values do not change the
// speed), so each variant's result on the bench's own buffers and grid is then checked bit for bit:
// two_pass overwrites *out, so what its timed runs left is checked as it is; the atomic variants
// keep adding to *out, so they run once more from zero first. Then the order experiment: 20 runs
// of vec_grid and of two_pass on one random input, counting the distinct bit patterns of the result.
// The vendor library's device-wide sum, DeviceReduce::Sum, on the same buffer in the same run: the bar the
// ladder is held to beside the copy. Its scratch space is allocated once, outside the timed window.
void bench_library(const float* din, float* dout, size_t n, float want, const tutor::Ceiling& ceiling,
                   uint64_t seed) {
#if REDUCE_HAVE_LIBRARY
  size_t scratch_bytes = 0;
  TUTOR_CHECK(cub::DeviceReduce::Sum(nullptr, scratch_bytes, din, dout, (int64_t)n));
  void* scratch;
  TUTOR_CHECK(cudaMalloc(&scratch, scratch_bytes));
  TUTOR_CHECK(cudaMemset(dout, 0xFF, sizeof(float)));  // poisoned: a sum that writes nothing fails
  float ms = tutor::timed_ms([&] { TUTOR_CHECK(cub::DeviceReduce::Sum(scratch, scratch_bytes, din, dout, (int64_t)n)); });
  tutor::measure("reduce", "library_sum", "bandwidth", tutor::gbps(4.0 * n, ms), "GB/s", ceiling, 4.0 * n, ms);
  float got;
  TUTOR_CHECK(cudaMemcpy(&got, dout, sizeof(float), cudaMemcpyDeviceToHost));
  tutor::check_close("reduce", "library_sum_bench", std::to_string(n), &got, &want, 1, seed, 0, 0);
  TUTOR_CHECK(cudaFree(scratch));
#else
  tutor::json_begin("skip", "reduce", "library_sum");
  std::printf(", \"reason\": \"the vendor library's DeviceReduce header was not found at build time: no library sum in this run\"");
  tutor::json_end();
  (void)din, (void)dout, (void)n, (void)want, (void)ceiling, (void)seed;
#endif
}

void bench(size_t n, size_t n_atomic, uint64_t seed) {
  const size_t bytes = n * sizeof(float);
  std::vector<float> in(n);
  const size_t head = std::min(n, n_atomic);  // atomic_each's share of the input
  const float total = (float)fill_exact(in, seed);
  double head_total = 0.0;
  for (size_t i = 0; i < head; ++i) head_total += in[i];
  float *din, *dout, *dpartial;
  TUTOR_CHECK(cudaMalloc(&din, bytes));
  TUTOR_CHECK(cudaMalloc(&dout, sizeof(float)));
  TUTOR_CHECK(cudaMalloc(&dpartial, (size_t)sm_count() * kBlocksPerSM * sizeof(float)));
  TUTOR_CHECK(cudaMemcpy(din, in.data(), bytes, cudaMemcpyHostToDevice));
  const tutor::Ceiling ceiling = tutor::copy_ceiling(bytes);
  for (const char* v : kVariants) {
    // One atomic per element on one address is slow: it is timed on the first n_atomic elements.
    const size_t m = std::string(v) == "atomic_each" ? head : n;
    TUTOR_CHECK(cudaMemset(dout, 0xFF, sizeof(float)));  // poisoned: a variant that writes nothing fails
    float ms = tutor::timed_ms([&] { launch(v, din, dout, dpartial, m); });  // *out keeps adding up
    tutor::measure("reduce", v, "bandwidth", tutor::gbps(4.0 * m, ms), "GB/s", ceiling, 4.0 * m, ms);
    if (uses_atomics(v)) {
      TUTOR_CHECK(cudaMemset(dout, 0, sizeof(float)));
      launch(v, din, dout, dpartial, m);
      TUTOR_CHECK_LAUNCH();
    }
    float got;
    TUTOR_CHECK(cudaMemcpy(&got, dout, sizeof(float), cudaMemcpyDeviceToHost));
    const float want = m == n ? total : (float)head_total;
    tutor::check_close("reduce", (std::string(v) + "_bench").c_str(), std::to_string(m), &got, &want, 1, seed, 0, 0);
  }
  bench_library(din, dout, n, total, ceiling, seed);
  tutor::fill_random(in, 1);
  TUTOR_CHECK(cudaMemcpy(din, in.data(), bytes, cudaMemcpyHostToDevice));
  const int runs = 20;
  for (const char* v : {"vec_grid", "two_pass"}) {
    std::vector<uint32_t> seen;
    for (int r = 0; r < runs; ++r) {
      TUTOR_CHECK(cudaMemset(dout, 0, sizeof(float)));
      launch(v, din, dout, dpartial, n);
      TUTOR_CHECK_LAUNCH();
      uint32_t bits;
      TUTOR_CHECK(cudaMemcpy(&bits, dout, sizeof bits, cudaMemcpyDeviceToHost));
      if (std::find(seen.begin(), seen.end(), bits) == seen.end()) seen.push_back(bits);
    }
    count_line((std::string("distinct_") + v).c_str(), (int)seen.size(), runs);
  }
  TUTOR_CHECK(cudaFree(din));
  TUTOR_CHECK(cudaFree(dout));
  TUTOR_CHECK(cudaFree(dpartial));
}

int main(int argc, char** argv) {
  tutor::Args args = tutor::parse_args(argc, argv);
  // 2^24 + 3: above 2^24 and not a multiple of the block or of 4; vec_grid and two_pass use their
  // full grid (132 x 8 blocks on an H200 from 4,325,376 elements on) and each thread's main loop
  // runs several rounds.
  std::vector<size_t> sizes = {1, 7, 1000, 4097, 65536, 100003, (1u << 20) + 7, 1u << 21, (1u << 24) + 3};
  if (args.quick) sizes = {1, 7, 1000, 4097, 100003};
  for (size_t n : sizes) verify(n, args.seed);
  if (args.bench)
    bench((size_t)tutor::arg_int(args, "--n", 1ll << 28), (size_t)tutor::arg_int(args, "--n-atomic", 1ll << 24),
          args.seed);
  return tutor::finish("reduce");
}
