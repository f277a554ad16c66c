// B04 quantize EXERCISE: fill in the TODOs of quantize_mx; the check fails until they are right.
// B04 quantize: float32 -> fp8 with a scale, the memory-bound kernel in front of every fp8 GEMM.
//   amax             max |x| over the tensor (the first read of "current" per-tensor scaling)
//   tensor_e4m3      q = e4m3(x * s), s = 448 / amax, saturating       (OCP, Hopper)
//   tensor_e4m3fnuz  q = e4m3fnuz(x * s), s = 240 / amax, saturating   (FNUZ, CDNA 3)
//   delayed_e4m3     q = e4m3(x * s_old) and amax(x) in the same pass (delayed scaling)
//   mxfp8_e4m3       OCP MX: per block of 32, an E8M0 scale 2^(floor(log2 amax) - 8)
//   build: nvcc -O3 -std=c++17 -arch=sm_90a -I labs/common/cuda labs/B04/cuda/quantize_exercise.cu -o quantize  // vendor-specific
//   run:   ./quantize           checks every variant bit for bit against the host reference
//          ./quantize --bench   bandwidth (bytes read + written) vs the copy ceiling
#define B04_CODEC_ONLY
#include "fp8_codec.cu"  // vendor-specific

constexpr int kThreads = 256;  // a multiple of 64: whole wavefronts on AMD, whole warps on NVIDIA

// ------------------------------------------------------------------ kernels
// Block-wide max in shared memory (no warp shuffles, so it is the same code for 32 and 64 lanes),
// then one atomic per block. Non-negative floats order like their bit patterns as unsigned ints.
__device__ void block_max_to_global(float v, unsigned* amax_bits) {
  __shared__ float red[kThreads];
  red[threadIdx.x] = v;
  __syncthreads();
  for (int s = kThreads / 2; s > 0; s >>= 1) {
    if ((int)threadIdx.x < s) red[threadIdx.x] = fmaxf(red[threadIdx.x], red[threadIdx.x + s]);
    __syncthreads();
  }
  if (threadIdx.x == 0) atomicMax(amax_bits, f32_bits(red[0]));
}

__global__ void amax_kernel(const float* x, size_t n, unsigned* amax_bits) {
  float m = 0.0f;
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x)
    m = fmaxf(m, fabsf(x[i]));
  block_max_to_global(m, amax_bits);
}

// Four elements per thread: one 16-byte load, one 4-byte store. With_amax also reduces max|x|
// (delayed scaling: this tensor's amax is recorded for the next step's scale).
template <int F, bool WithAmax>
__global__ void quantize_tensor(const float* x, uint8_t* q, size_t n, float scale,
                                unsigned* amax_bits) {
  float m = 0.0f;
  const size_t n4 = n / 4;
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n4;
       i += (size_t)gridDim.x * blockDim.x) {
    const float4 v = reinterpret_cast<const float4*>(x)[i];
    if (WithAmax) m = fmaxf(m, fmaxf(fmaxf(fabsf(v.x), fabsf(v.y)), fmaxf(fabsf(v.z), fabsf(v.w))));
    const uint32_t packed = (uint32_t)fp8_encode<F>(v.x * scale, true) |
                            (uint32_t)fp8_encode<F>(v.y * scale, true) << 8 |
                            (uint32_t)fp8_encode<F>(v.z * scale, true) << 16 |
                            (uint32_t)fp8_encode<F>(v.w * scale, true) << 24;
    reinterpret_cast<uint32_t*>(q)[i] = packed;
  }
  // the last n % 4 elements, one thread each
  const size_t t = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (t < n - 4 * n4) {
    const float v = x[4 * n4 + t];
    if (WithAmax) m = fmaxf(m, fabsf(v));
    q[4 * n4 + t] = fp8_encode<F>(v * scale, true);
  }
  if (WithAmax) block_max_to_global(m, amax_bits);
}

// The per-tensor cast with the GPU's own conversion: the loads and stores of quantize_tensor,
// two hardware conversions of two elements each in place of four calls to fp8_encode.
__global__ void quantize_tensor_hw(const float* x, uint8_t* q, size_t n, float scale) {
  const size_t n4 = n / 4;
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n4;
       i += (size_t)gridDim.x * blockDim.x) {
    const float4 v = reinterpret_cast<const float4*>(x)[i];
    reinterpret_cast<uint32_t*>(q)[i] =
        hw_encode2(v.x * scale, v.y * scale) | hw_encode2(v.z * scale, v.w * scale) << 16;
  }
  const size_t t = (size_t)blockIdx.x * blockDim.x + threadIdx.x;  // the last n % 4 elements
  if (t < n - 4 * n4) q[4 * n4 + t] = (uint8_t)hw_encode2(x[4 * n4 + t] * scale, 0.0f);
}

// OCP MX with E4M3 elements: 8 threads share a block of 32 elements (4 each). The block's amax
// comes from a butterfly over those 8 lanes; the scale is the power of two 2^(floor(log2 amax) - 8),
// 8 being the exponent of the largest E4M3 value (448 = 1.75 * 2^8). Elements are saturated.
__global__ void quantize_mx(const float* x, uint8_t* q, uint8_t* scales, size_t n) {
  const size_t t = (size_t)blockIdx.x * blockDim.x + threadIdx.x;  // every thread runs the shuffles
  float v[4];
  float m = 0.0f;
  for (int k = 0; k < 4; ++k) {
    const size_t i = 4 * t + k;
    v[k] = i < n ? x[i] : 0.0f;  // a partial last block is padded with zeros
    m = fmaxf(m, fabsf(v[k]));
  }
  // TODO 1: m is this thread's max over its 4 elements. Afterwards each of the 8 threads sharing this
  //         block of 32 must hold the block's max: exchange registers between lanes, no shared memory.
  // TODO 2: e = floor(log2 m) - 8 from m's exponent field, no float math (field 0: any e <= -127 is right).
  const int e = 0;
  const int shared = e < -127 ? -127 : e > 127 ? 127 : e;  // the E8M0 range
  const float inv = bits_f32((uint32_t)(127 - shared) << 23);  // 2^-shared, exact
  for (int k = 0; k < 4; ++k)
    if (4 * t + k < n) q[4 * t + k] = fp8_encode<E4M3>(v[k] * inv, true);
  if (t % 8 == 0 && 4 * t < n) scales[t / 8] = (uint8_t)(shared + 127);  // E8M0: 2^(byte - 127)
}

// ------------------------------------------------------------------ host reference
float ref_amax(const std::vector<float>& x) {
  float m = 0.0f;
  for (float v : x) m = std::max(m, std::fabs(v));
  return m;
}

void ref_quantize(int f, const std::vector<float>& x, float scale, std::vector<uint8_t>& q) {
  for (size_t i = 0; i < x.size(); ++i) q[i] = ref::encode(f, x[i] * scale, true);
}

void ref_mx(const std::vector<float>& x, std::vector<uint8_t>& q, std::vector<uint8_t>& s) {
  for (size_t b = 0; b * 32 < x.size(); ++b) {
    const size_t lo = b * 32, hi = std::min(x.size(), lo + 32);
    float m = 0.0f;
    for (size_t i = lo; i < hi; ++i) m = std::max(m, std::fabs(x[i]));
    int e2 = 0;
    std::frexp(m, &e2);  // m = f * 2^e2, f in [0.5, 1): floor(log2 m) = e2 - 1
    const int shared = m == 0.0f ? -127 : std::max(-127, std::min(127, e2 - 1 - 8));
    s[b] = (uint8_t)(shared + 127);
    for (size_t i = lo; i < hi; ++i) q[i] = ref::encode(E4M3, std::ldexp(x[i], -shared), true);
  }
}

// ------------------------------------------------------------------ launches
unsigned grid_for(size_t work) {
  return (unsigned)std::max<size_t>(1, std::min<size_t>((work + kThreads - 1) / kThreads, 8192));
}

// The last variant is the hardware conversion to the format this GPU has (kHwFmt).
const std::vector<std::string> kVariants = {"amax", "tensor_e4m3", "tensor_e4m3fnuz", "delayed_e4m3",
                                            "mxfp8_e4m3", std::string("tensor_") + kFmtName[kHwFmt] + "_hw"};

void launch(const std::string& v, const float* x, uint8_t* q, uint8_t* s, size_t n, float scale,
            unsigned* amax) {
  const unsigned g = grid_for(n / 4 + 4);
  if (v == "amax") amax_kernel<<<grid_for(n), kThreads>>>(x, n, amax);
  if (v == "tensor_e4m3") quantize_tensor<E4M3, false><<<g, kThreads>>>(x, q, n, scale, amax);
  if (v == "tensor_e4m3fnuz") quantize_tensor<E4M3FNUZ, false><<<g, kThreads>>>(x, q, n, scale, amax);
  if (v == "delayed_e4m3") quantize_tensor<E4M3, true><<<g, kThreads>>>(x, q, n, scale, amax);
  if (v == kVariants.back()) quantize_tensor_hw<<<g, kThreads>>>(x, q, n, scale);
  if (v == "mxfp8_e4m3") {
    const size_t threads = (n + 31) / 32 * 8;  // 8 per block of 32
    quantize_mx<<<(unsigned)((threads + kThreads - 1) / kThreads), kThreads>>>(x, q, s, n);
  }
}


bool check_equal(const char* variant, size_t n, const std::vector<uint8_t>& got,
                 const std::vector<uint8_t>& want, uint64_t seed) {
  size_t bad = 0, first = 0;
  for (size_t i = 0; i < want.size(); ++i)
    if (got[i] != want[i] && bad++ == 0) first = i;
  tutor::json_begin("check", "quantize", variant);
  std::printf(", \"size\": \"%zu\", \"ok\": %s, \"mismatches\": %zu", n, bad ? "false" : "true", bad);
  if (bad) std::printf(", \"first_bad\": %zu, \"got\": %d, \"want\": %d", first, got[first], want[first]);
  std::printf(", \"seed\": %llu", (unsigned long long)seed);
  tutor::json_end();
  if (bad) ++tutor::failures();
  return bad == 0;
}

void verify(const std::string& v, size_t n, uint64_t seed) {
  std::vector<float> x(n);
  tutor::fill_random(x, seed, -3.0f, 3.0f);
  // a few outliers and tiny values, as in real activations
  std::mt19937_64 gen(seed + n);
  for (size_t i = 0; i < n / 97; ++i) x[gen() % n] *= (gen() & 1) ? 40.0f : 1e-4f;
  const float amax = ref_amax(x);
  const int f = v == "tensor_e4m3fnuz" ? E4M3FNUZ : v == kVariants.back() ? kHwFmt : E4M3;
  const float scale = (f == E4M3 ? 448.0f : 240.0f) / amax;
  const size_t nscales = (n + 31) / 32;
  std::vector<uint8_t> want(n), got(n), want_s(nscales), got_s(nscales);
  float* dx;
  uint8_t *dq, *ds;
  unsigned* damax;
  tutor::guarded_malloc(&dx, n, "x");
  tutor::guarded_malloc(&dq, n, "q");
  tutor::guarded_malloc(&ds, nscales, "scales");
  TUTOR_CHECK(cudaMalloc(&damax, sizeof(unsigned)));
  TUTOR_CHECK(cudaMemcpy(dx, x.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  TUTOR_CHECK(cudaMemset(damax, 0, sizeof(unsigned)));
  tutor::poison(dq, n);
  tutor::poison(ds, nscales);
  launch(v, dx, dq, ds, n, scale, damax);
  TUTOR_CHECK_LAUNCH();
  TUTOR_CHECK(cudaMemcpy(got.data(), dq, n, cudaMemcpyDeviceToHost));
  TUTOR_CHECK(cudaMemcpy(got_s.data(), ds, nscales, cudaMemcpyDeviceToHost));
  unsigned amax_bits = 0;
  TUTOR_CHECK(cudaMemcpy(&amax_bits, damax, sizeof(unsigned), cudaMemcpyDeviceToHost));
  if (v == "amax" || v == "delayed_e4m3") {
    const std::vector<uint8_t> g = {(uint8_t)(amax_bits >> 24), (uint8_t)(amax_bits >> 16),
                                    (uint8_t)(amax_bits >> 8), (uint8_t)amax_bits};
    const uint32_t w = f32_bits(amax);
    const std::vector<uint8_t> wb = {(uint8_t)(w >> 24), (uint8_t)(w >> 16), (uint8_t)(w >> 8), (uint8_t)w};
    check_equal((v + "_amax").c_str(), n, g, wb, seed);
  }
  if (v == "mxfp8_e4m3") {
    ref_mx(x, want, want_s);
    check_equal("mxfp8_e4m3_scales", n, got_s, want_s, seed);
  } else if (v != "amax") {
    ref_quantize(f, x, scale, want);
  }
  if (v != "amax") check_equal(v.c_str(), n, got, want, seed);
  tutor::guarded_free(dx);
  tutor::guarded_free(dq);
  tutor::guarded_free(ds);
  TUTOR_CHECK(cudaFree(damax));
}

// Bytes moved: amax reads 4n; the tensor variants read 4n and write n; MX also writes n/32 scales.
void bench(const std::string& v, size_t n, const tutor::Ceiling& ceiling) {
  float* dx;
  uint8_t *dq, *ds;
  unsigned* damax;
  TUTOR_CHECK(cudaMalloc(&dx, n * sizeof(float)));
  TUTOR_CHECK(cudaMalloc(&dq, n));
  TUTOR_CHECK(cudaMalloc(&ds, n / 32 + 1));
  TUTOR_CHECK(cudaMalloc(&damax, sizeof(unsigned)));
  { std::vector<float> h(n); tutor::fill_random(h, 7, -3.0f, 3.0f);  // never time on zeros
    TUTOR_CHECK(cudaMemcpy(dx, h.data(), n * sizeof(float), cudaMemcpyHostToDevice)); }
  TUTOR_CHECK(cudaMemset(damax, 0, sizeof(unsigned)));
  const float ms = tutor::median_ms([&] { launch(v, dx, dq, ds, n, 1.0f, damax); });
  const double bytes = v == "amax" ? 4.0 * n : v == "mxfp8_e4m3" ? 5.0 * n + n / 32.0 : 5.0 * n;
  tutor::measure("quantize", v.c_str(), "bandwidth", tutor::gbps(bytes, ms), "GB/s", ceiling, bytes, ms);
  TUTOR_CHECK(cudaFree(dx));
  TUTOR_CHECK(cudaFree(dq));
  TUTOR_CHECK(cudaFree(ds));
  TUTOR_CHECK(cudaFree(damax));
}

int main(int argc, char** argv) {
  tutor::Args args = tutor::parse_args(argc, argv);
  if (args.bench) {
    const tutor::Ceiling ceiling = tutor::copy_ceiling();
    for (const std::string& v : kVariants) bench(v, size_t(1) << 28, ceiling);
    return tutor::finish("quantize");
  }
  std::vector<size_t> sizes = {1, 31, 33, 4099, (size_t(1) << 22) + 7};
  if (args.quick) sizes.pop_back();
  for (const std::string& v : kVariants)
    for (size_t n : sizes) verify(v, n, args.seed);
  return tutor::finish("quantize");
}
