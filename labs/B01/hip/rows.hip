// B01 rows: softmax and layernorm over the rows of a float32 matrix, one block per row.
// "Warp" means NVIDIA's 32 lanes; AMD's wavefront has 64. The block reductions work for both.
//   build: hipcc -O3 -std=c++17 --offload-arch=gfx942 -I labs/common/hip labs/B01/hip/rows.hip -o rows  // vendor-specific
//   run:   ./rows            checks every variant on odd shapes against a float64 reference
//          ./rows --bench    GB/s of 8 bytes an element on 16384 x 8192 floats (512 x 262144 for the
//                            long rows), with the copy ceiling measured in the same run
//  softmax_one_pass  the row in registers (up to kThreads x kMaxPer elements): read once, write once
//  softmax_one_pass_vec  the same with 16-byte loads and stores (rows whose length is a multiple of 4)
//  softmax_online    any length: pass 1 keeps a running maximum and a rescaled running sum, pass 2
//                    reads the row again and writes it (12 bytes an element)
//  layernorm         the row in registers: mean, variance around the mean, normalise, scale, shift
#include "tutor_lab.hip.h"  // vendor-specific

constexpr int kThreads = 256;                          // threads per block, one block per row
constexpr int kWarps = kThreads / tutor::kWarpSize;    // 8 warps (NVIDIA) or 4 wavefronts (AMD)
constexpr int kMaxPer = 64;                            // the longest row held: 256 x 64 = 16,384
constexpr float kEps = 1e-5f;

struct Max {
  __device__ float operator()(float a, float b) const { return fmaxf(a, b); }
};
struct Sum {
  __device__ float operator()(float a, float b) const { return a + b; }
};

// A butterfly over the warp: after log2(kWarpSize) steps every lane holds the result.
template <class Op>
__device__ float warp_all(float v, Op op) {
  for (int offset = tutor::kWarpSize / 2; offset > 0; offset /= 2)
    v = op(v, __shfl_xor(v, offset));  // vendor-specific
  return v;
}

// The reduction of one value per thread over the block, returned to every thread. The first
// barrier keeps a second call from overwriting part[] while a slow warp still reads it.
template <class Op>
__device__ float block_all(float v, Op op, float identity) {
  __shared__ float part[kWarps];
  const int lane = threadIdx.x % tutor::kWarpSize, warp = threadIdx.x / tutor::kWarpSize;
  v = warp_all(v, op);
  __syncthreads();
  if (lane == 0) part[warp] = v;
  __syncthreads();
  return warp_all(lane < kWarps ? part[lane] : identity, op);
}

// ---------------------------------------------------------------- softmax, the row in registers
// Thread t holds elements t, t + kThreads, t + 2 kThreads, ...: each load instruction of the warp
// reads consecutive addresses. kPer is the number of elements per thread, fixed at compile time so
// that v[] lives in registers.
template <int kPer>
__global__ void __launch_bounds__(kThreads) softmax_one_pass(const float* in, float* out, int cols) {
  const float* x = in + (size_t)blockIdx.x * cols;
  float* y = out + (size_t)blockIdx.x * cols;
  float v[kPer];
  float m = -INFINITY;
#pragma unroll
  for (int j = 0; j < kPer; ++j) {
    const int c = threadIdx.x + j * kThreads;
    v[j] = c < cols ? x[c] : -INFINITY;
    m = fmaxf(m, v[j]);
  }
  m = block_all(m, Max{}, -INFINITY);
  float s = 0.0f;
#pragma unroll
  for (int j = 0; j < kPer; ++j) {
    v[j] = expf(v[j] - m);  // past the row: exp(-inf) = 0
    s += v[j];
  }
  const float inv = 1.0f / block_all(s, Sum{}, 0.0f);
#pragma unroll
  for (int j = 0; j < kPer; ++j) {
    const int c = threadIdx.x + j * kThreads;
    if (c < cols) y[c] = v[j] * inv;
  }
}

// The same kernel with 16-byte loads: thread t holds float4s t, t + kThreads, ... of the row (kPer4 of
// them), so a warp's load instruction reads 512 consecutive bytes. Rows whose length is a multiple of 4
// only, so that every row starts 16 bytes aligned.
template <int kPer4>
__global__ void __launch_bounds__(kThreads) softmax_one_pass_vec(const float* in, float* out, int cols) {
  const float4* x = reinterpret_cast<const float4*>(in + (size_t)blockIdx.x * cols);
  float4* y = reinterpret_cast<float4*>(out + (size_t)blockIdx.x * cols);
  const int cols4 = cols / 4;
  float4 v[kPer4];
  float m = -INFINITY;
#pragma unroll
  for (int j = 0; j < kPer4; ++j) {
    const int c = threadIdx.x + j * kThreads;
    v[j] = c < cols4 ? x[c] : make_float4(-INFINITY, -INFINITY, -INFINITY, -INFINITY);
    m = fmaxf(m, fmaxf(fmaxf(v[j].x, v[j].y), fmaxf(v[j].z, v[j].w)));
  }
  m = block_all(m, Max{}, -INFINITY);
  float s = 0.0f;
#pragma unroll
  for (int j = 0; j < kPer4; ++j) {
    v[j] = make_float4(expf(v[j].x - m), expf(v[j].y - m), expf(v[j].z - m), expf(v[j].w - m));
    s += (v[j].x + v[j].y) + (v[j].z + v[j].w);
  }
  const float inv = 1.0f / block_all(s, Sum{}, 0.0f);
#pragma unroll
  for (int j = 0; j < kPer4; ++j) {
    const int c = threadIdx.x + j * kThreads;
    if (c < cols4) y[c] = make_float4(v[j].x * inv, v[j].y * inv, v[j].z * inv, v[j].w * inv);
  }
}

// ---------------------------------------------------------------- softmax, any row length
// Pass 1: thread t keeps the maximum m of the elements it has seen and s = sum of exp(x - m) over
// them; when x > m, s is first multiplied by exp(m - x), so it always refers to the current maximum.
// Then the block combines (m, s) pairs: each s is moved to the row's maximum M by exp(m - M).
__global__ void __launch_bounds__(kThreads) softmax_online(const float* in, float* out, int cols) {
  const float* x = in + (size_t)blockIdx.x * cols;
  float* y = out + (size_t)blockIdx.x * cols;
  float m = -INFINITY, s = 0.0f;
  for (int c = threadIdx.x; c < cols; c += kThreads) {
    const float v = x[c];
    if (v > m) {
      s = s * expf(m - v) + 1.0f;  // the first element: s = 0 and exp(-inf) = 0
      m = v;
    } else {
      s += expf(v - m);
    }
  }
  const float row_max = block_all(m, Max{}, -INFINITY);
  const float total = block_all(m == -INFINITY ? 0.0f : s * expf(m - row_max), Sum{}, 0.0f);
  const float inv = 1.0f / total;
  for (int c = threadIdx.x; c < cols; c += kThreads) y[c] = expf(x[c] - row_max) * inv;
}

// ---------------------------------------------------------------- layernorm, the row in registers
// The variance is the mean of (x - mean)^2 over the held values, not E[x^2] - mean^2, which loses
// its digits when the mean is large beside the spread.
template <int kPer>
__global__ void __launch_bounds__(kThreads) layernorm(const float* in, const float* w, const float* b,
                                                      float* out, int cols) {
  const float* x = in + (size_t)blockIdx.x * cols;
  float* y = out + (size_t)blockIdx.x * cols;
  float v[kPer];
  float s = 0.0f;
#pragma unroll
  for (int j = 0; j < kPer; ++j) {
    const int c = threadIdx.x + j * kThreads;
    v[j] = c < cols ? x[c] : 0.0f;
    s += v[j];
  }
  const float mean = block_all(s, Sum{}, 0.0f) / cols;
  float q = 0.0f;
#pragma unroll
  for (int j = 0; j < kPer; ++j) {
    const int c = threadIdx.x + j * kThreads;
    v[j] = c < cols ? v[j] - mean : 0.0f;
    q += v[j] * v[j];
  }
  const float rstd = rsqrtf(block_all(q, Sum{}, 0.0f) / cols + kEps);
#pragma unroll
  for (int j = 0; j < kPer; ++j) {
    const int c = threadIdx.x + j * kThreads;
    if (c < cols) y[c] = v[j] * rstd * w[c] + b[c];
  }
}

// ---------------------------------------------------------------- driver
const char* const kVariants[] = {"softmax_one_pass", "softmax_one_pass_vec", "softmax_online", "layernorm"};

// The one-pass kernels with the smallest kPer that holds the row: 1, 2, 4, ..., 64 elements a thread.
template <int kPer>
void launch_held(const std::string& v, const float* x, const float* w, const float* b, float* y, int rows, int cols) {
  if (kPer < kMaxPer && kPer * kThreads < cols) return launch_held<(kPer < kMaxPer ? 2 * kPer : kPer)>(v, x, w, b, y, rows, cols);
  if (v == "softmax_one_pass") softmax_one_pass<kPer><<<rows, kThreads>>>(x, y, cols);
  else if (v == "softmax_one_pass_vec") softmax_one_pass_vec<(kPer >= 4 ? kPer / 4 : 1)><<<rows, kThreads>>>(x, y, cols);
  else layernorm<kPer><<<rows, kThreads>>>(x, w, b, y, cols);
}

bool fits(const std::string& v, int cols) {
  if (v == "softmax_one_pass_vec" && cols % 4 != 0) return false;
  return v == "softmax_online" || cols <= kThreads * kMaxPer;
}

void launch(const std::string& v, const float* x, const float* w, const float* b, float* y, int rows, int cols) {
  if (v == "softmax_online") softmax_online<<<rows, kThreads>>>(x, y, cols);
  else launch_held<1>(v, x, w, b, y, rows, cols);
}

// The references, in float64.
void reference(const std::string& v, const std::vector<float>& x, const std::vector<float>& w,
               const std::vector<float>& b, std::vector<float>& ref, int rows, int cols) {
  for (int r = 0; r < rows; ++r) {
    const float* xr = &x[(size_t)r * cols];
    float* yr = &ref[(size_t)r * cols];
    if (v == "layernorm") {
      double mean = 0, var = 0;
      for (int c = 0; c < cols; ++c) mean += xr[c];
      mean /= cols;
      for (int c = 0; c < cols; ++c) var += (xr[c] - mean) * (xr[c] - mean);
      const double rstd = 1.0 / std::sqrt(var / cols + kEps);
      for (int c = 0; c < cols; ++c) yr[c] = (float)((xr[c] - mean) * rstd * w[c] + b[c]);
    } else {
      double m = -INFINITY, s = 0;
      for (int c = 0; c < cols; ++c) m = std::max(m, (double)xr[c]);
      for (int c = 0; c < cols; ++c) s += std::exp(xr[c] - m);
      for (int c = 0; c < cols; ++c) yr[c] = (float)(std::exp(xr[c] - m) / s);
    }
  }
}

// Softmax outputs are near 1 / cols: float32 exp and a sum of cols terms keep a relative error of
// a few 1e-7 times log2(cols) at worst, inside rtol 1e-5. Layernorm outputs are of order 1: atol 1e-5.
// Not named atol: a const char* argument would call the C library's atol (string to long), which returns 0.
double abs_tol(const std::string& v) { return v == "layernorm" ? 1e-5 : 1e-9; }

// Every variant on a fresh input in [-4, 4) with one element of 100 (exp(100) is past float32's
// range: a softmax that does not subtract the maximum fails), outputs poisoned first.
void verify(int rows, int cols, uint64_t seed) {
  const size_t n = (size_t)rows * cols;
  std::vector<float> x(n), w(cols), b(cols), got(n), ref(n);
  tutor::fill_random(x, seed, -4.0f, 4.0f);
  tutor::fill_random(w, seed + 1);
  tutor::fill_random(b, seed + 2);
  x[0] = 100.0f;
  float *dx, *dw, *db, *dy;
  tutor::guarded_malloc(&dx, n, "x");
  tutor::guarded_malloc(&dw, cols, "w");
  tutor::guarded_malloc(&db, cols, "b");
  tutor::guarded_malloc(&dy, n, "y");
  TUTOR_CHECK(hipMemcpy(dx, x.data(), n * sizeof(float), hipMemcpyHostToDevice));
  TUTOR_CHECK(hipMemcpy(dw, w.data(), cols * sizeof(float), hipMemcpyHostToDevice));
  TUTOR_CHECK(hipMemcpy(db, b.data(), cols * sizeof(float), hipMemcpyHostToDevice));
  const std::string size = std::to_string(rows) + "x" + std::to_string(cols);
  for (const char* v : kVariants) {
    if (!fits(v, cols)) continue;
    reference(v, x, w, b, ref, rows, cols);
    tutor::poison(dy, n * sizeof(float));
    launch(v, dx, dw, db, dy, rows, cols);
    TUTOR_CHECK_LAUNCH();
    TUTOR_CHECK(hipMemcpy(got.data(), dy, n * sizeof(float), hipMemcpyDeviceToHost));
    tutor::check_close("rows", v, size, got.data(), ref.data(), n, seed, abs_tol(v), 1e-5, cols);
  }
  tutor::guarded_free(dx);
  tutor::guarded_free(dw);
  tutor::guarded_free(db);
  tutor::guarded_free(dy);
}

// Every variant is credited with 8 bytes an element (x read once, y written once), so GB/s is
// proportional to speed; "bytes" records what the kernel really moves (12 for the online softmax).
// The copy ceiling counts bytes read plus bytes written per second. Each timed result is checked.
// `suffix` names the long-row run ("_long"), where only the online softmax fits.
void bench(int rows, int cols, const char* suffix, uint64_t seed) {
  const size_t n = (size_t)rows * cols, bytes = n * sizeof(float);
  std::vector<float> x(n), w(cols), b(cols), got(n), ref(n);
  tutor::fill_random(x, seed, -4.0f, 4.0f);
  tutor::fill_random(w, seed + 1);
  tutor::fill_random(b, seed + 2);
  float *dx, *dw, *db, *dy;
  TUTOR_CHECK(hipMalloc(&dx, bytes));
  TUTOR_CHECK(hipMalloc(&dw, cols * sizeof(float)));
  TUTOR_CHECK(hipMalloc(&db, cols * sizeof(float)));
  TUTOR_CHECK(hipMalloc(&dy, bytes));
  TUTOR_CHECK(hipMemcpy(dx, x.data(), bytes, hipMemcpyHostToDevice));
  TUTOR_CHECK(hipMemcpy(dw, w.data(), cols * sizeof(float), hipMemcpyHostToDevice));
  TUTOR_CHECK(hipMemcpy(db, b.data(), cols * sizeof(float), hipMemcpyHostToDevice));
  const tutor::Ceiling ceiling = tutor::copy_ceiling(bytes);
  const std::string size = std::to_string(rows) + "x" + std::to_string(cols);
  for (const char* v : kVariants) {
    if (!fits(v, cols)) continue;
    const std::string name = std::string(v) + suffix;
    tutor::poison(dy, bytes);
    float ms = tutor::timed_ms([&] { launch(v, dx, dw, db, dy, rows, cols); });
    const double moved = std::string(v) == "softmax_online" ? 12.0 * n : 8.0 * n;
    tutor::measure("rows", name.c_str(), "bandwidth", tutor::gbps(8.0 * n, ms), "GB/s", ceiling, moved, ms);
    reference(v, x, w, b, ref, rows, cols);
    TUTOR_CHECK(hipMemcpy(got.data(), dy, bytes, hipMemcpyDeviceToHost));
    tutor::check_close("rows", (name + "_bench").c_str(), size, got.data(), ref.data(), n, seed, abs_tol(v), 1e-5, cols);
  }
  TUTOR_CHECK(hipFree(dx));
  TUTOR_CHECK(hipFree(dw));
  TUTOR_CHECK(hipFree(db));
  TUTOR_CHECK(hipFree(dy));
}

int main(int argc, char** argv) {
  tutor::Args args = tutor::parse_args(argc, argv);
  // Row lengths that are not multiples of the block (7, 1000, 4097, 513), one exactly 8192, the longest
  // held row (16384), and one longer than that (30011), where only the online softmax runs.
  std::vector<std::pair<int, int>> shapes = {{1, 1}, {3, 7}, {5, 1000}, {7, 4097}, {2, 8192}, {3, 16384},
                                             {2, 30011}, {130, 513}};
  if (args.quick) shapes = {{1, 1}, {3, 7}, {5, 1000}, {3, 4097}, {2, 30011}};
  for (auto [rows, cols] : shapes) verify(rows, cols, args.seed);
  if (args.bench) {
    bench((int)tutor::arg_int(args, "--rows", 16384), (int)tutor::arg_int(args, "--cols", 8192), "", args.seed);
    bench((int)tutor::arg_int(args, "--long-rows", 512), (int)tutor::arg_int(args, "--long-cols", 262144), "_long",
          args.seed);
  }
  return tutor::finish("rows");
}
