// B02 accumulate, exercise: write round_bf16 (TODO 1) and the Kahan step (TODO 2); the solution is accumulate.cu.  // vendor-specific
// The sum of n bf16 values, accumulated five ways, each bit for bit against the host.
//   serial_fp32     one accumulator in fp32, the elements in order
//   serial_bf16     one accumulator rounded to bf16 after every add (a sum of ones stalls at 256)
//   kahan_bf16      one bf16 accumulator plus a bf16 compensation term (Kahan summation)
//   pairwise_bf16   kLanes bf16 accumulators over a stride, then a pairwise tree in bf16
//   pairwise_fp32   the same in fp32: the fast, parallel and accurate one
// "Rounded to bf16" is defined by this file, the same way on the GPU and the host: the fp32 result
// of each add is rounded to the nearest bf16, ties to even, so both sides compute the same bits.
//   build: nvcc -O3 -std=c++17 -arch=sm_90a -I labs/common/cuda labs/B02/cuda/accumulate_exercise.cu -o accumulate_exercise  // vendor-specific
//   run:   ./accumulate_exercise           checks every variant bit for bit against the host reference
//          ./accumulate_exercise --bench   the sums of one million ones, and the bandwidth of each variant
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "tutor_lab.cuh"  // vendor-specific

constexpr int kThreads = 256;     // a multiple of 64: whole wavefronts on AMD, whole warps on NVIDIA
constexpr int kLanes = 1 << 16;   // accumulators of the pairwise variants (a power of two)

// ------------------------------------------------------------------ bf16 arithmetic, host and device
__host__ __device__ inline uint32_t f32_bits(float x) { uint32_t b; memcpy(&b, &x, 4); return b; }
__host__ __device__ inline float bits_f32(uint32_t b) { float x; memcpy(&x, &b, 4); return x; }

// Round a finite fp32 to the nearest bf16 (the top 16 bits), ties to even; returned as an fp32.
__host__ __device__ inline float round_bf16(float x) {
  // TODO 1: return the bf16 nearest to x as an fp32 whose low 16 bits are zero; a tie (low half
  // exactly 0x8000) goes to the neighbour whose last kept bit is 0.
  return x;
}

// A bf16 is the top half of an fp32: widening it is exact.
__host__ __device__ inline float widen(uint16_t h) { return bits_f32((uint32_t)h << 16); }

// One add in the accumulator's format.
template <bool Bf16>
__host__ __device__ inline float add(float acc, float x) {
  return Bf16 ? round_bf16(acc + x) : acc + x;
}

// Kahan: c holds what the last add lost; every operation is rounded to bf16.
__host__ __device__ inline void kahan_step(float& s, float& c, float x) {
  // TODO 2: add x to s, and keep in c what this add lost, so that the next add can put it back.
  // Round every operation to bf16; the order of the operations matters.
  s = round_bf16(s + x);
}

// ------------------------------------------------------------------ kernels
enum Mode { FP32, BF16, KAHAN };

// One thread adds every element in order: the longest possible chain of dependent adds.
template <int M>
__global__ void serial_kernel(const uint16_t* x, size_t n, float* out) {
  if (blockIdx.x != 0 || threadIdx.x != 0) return;
  float s = 0.0f, c = 0.0f;
  for (size_t i = 0; i < n; ++i) {
    if (M == KAHAN) kahan_step(s, c, widen(x[i]));
    else s = add<M == BF16>(s, widen(x[i]));
  }
  out[0] = s;
}

// Lane t adds x[t], x[t + kLanes], x[t + 2 kLanes], ... in order; neighbouring lanes read
// neighbouring elements, so every warp's loads are coalesced. Lanes past n write 0.
template <bool Bf16>
__global__ void strided_kernel(const uint16_t* x, size_t n, float* partial) {
  const size_t t = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= kLanes) return;
  float s = 0.0f;
  for (size_t i = t; i < n; i += kLanes) s = add<Bf16>(s, widen(x[i]));
  partial[t] = s;
}

// One level of the pairwise tree: p[i] = p[i] + p[i + h] for i < h.
template <bool Bf16>
__global__ void halve_kernel(float* p, int h) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < h) p[i] = add<Bf16>(p[i], p[i + h]);
}

// ------------------------------------------------------------------ host reference
// The reference does its own bf16 arithmetic (the worked solution's), never the TODOs above: a wrong
// round_bf16 or kahan_step cannot agree with it.
float ref_round(float x) {
  const uint32_t b = f32_bits(x);
  return bits_f32((b + 0x7FFFu + ((b >> 16) & 1u)) & 0xFFFF0000u);
}

float ref_add(bool bf, float acc, float x) { return bf ? ref_round(acc + x) : acc + x; }

void ref_kahan(float& s, float& c, float x) {
  const float y = ref_round(x - c);
  const float t = ref_round(s + y);
  c = ref_round(ref_round(t - s) - y);
  s = t;
}

float ref_sum(const std::string& v, const std::vector<uint16_t>& x) {
  float s = 0.0f, c = 0.0f;
  if (v == "kahan_bf16") {
    for (uint16_t h : x) ref_kahan(s, c, widen(h));
    return s;
  }
  const bool bf = v == "serial_bf16" || v == "pairwise_bf16";
  if (v.rfind("serial", 0) == 0) {
    for (uint16_t h : x) s = ref_add(bf, s, widen(h));
    return s;
  }
  std::vector<float> p(kLanes, 0.0f);
  for (size_t i = 0; i < x.size(); ++i) p[i % kLanes] = ref_add(bf, p[i % kLanes], widen(x[i]));
  for (int h = kLanes / 2; h >= 1; h /= 2)
    for (int i = 0; i < h; ++i) p[i] = ref_add(bf, p[i], p[i + h]);
  return p[0];
}

// ------------------------------------------------------------------ launches
const std::vector<std::string> kVariants = {"serial_fp32", "serial_bf16", "kahan_bf16", "pairwise_bf16",
                                            "pairwise_fp32"};

// The sum of x[0..n) lands in out[0] (the serial variants) or partial[0] (the pairwise ones).
void launch(const std::string& v, const uint16_t* x, size_t n, float* out, float* partial) {
  if (v == "serial_fp32") serial_kernel<FP32><<<1, 1>>>(x, n, out);
  if (v == "serial_bf16") serial_kernel<BF16><<<1, 1>>>(x, n, out);
  if (v == "kahan_bf16") serial_kernel<KAHAN><<<1, 1>>>(x, n, out);
  const bool bf = v == "pairwise_bf16";
  if (v.rfind("pairwise", 0) == 0) {
    if (bf) strided_kernel<true><<<kLanes / kThreads, kThreads>>>(x, n, partial);
    else strided_kernel<false><<<kLanes / kThreads, kThreads>>>(x, n, partial);
    for (int h = kLanes / 2; h >= 1; h /= 2) {
      const int blocks = (h + kThreads - 1) / kThreads;
      if (bf) halve_kernel<true><<<blocks, kThreads>>>(partial, h);
      else halve_kernel<false><<<blocks, kThreads>>>(partial, h);
    }
  }
}

// Inputs: all ones (the headline), or random values in [0, 1) rounded to bf16.
std::vector<uint16_t> make_input(size_t n, bool ones, uint64_t seed) {
  std::vector<uint16_t> x(n);
  if (ones) {
    for (auto& h : x) h = 0x3F80;  // 1.0 in bf16
    return x;
  }
  std::vector<float> f(n);
  tutor::fill_random(f, seed, 0.0f, 1.0f);
  for (size_t i = 0; i < n; ++i) x[i] = (uint16_t)(f32_bits(ref_round(f[i])) >> 16);
  return x;
}

// Runs variant v on x and returns the sum it wrote; `sum` is what the check compares.
float run_on_device(const std::string& v, const std::vector<uint16_t>& x) {
  const size_t n = x.size();
  uint16_t* dx;
  float *dout, *dpartial;
  tutor::guarded_malloc(&dx, n, "x");
  tutor::guarded_malloc(&dout, 1, "sum");
  tutor::guarded_malloc(&dpartial, kLanes, "partial");
  TUTOR_CHECK(cudaMemcpy(dx, x.data(), n * sizeof(uint16_t), cudaMemcpyHostToDevice));
  tutor::poison(dout, sizeof(float));
  tutor::poison(dpartial, kLanes * sizeof(float));
  launch(v, dx, n, dout, dpartial);
  TUTOR_CHECK_LAUNCH();
  float got = 0.0f;
  TUTOR_CHECK(cudaMemcpy(&got, v.rfind("pairwise", 0) == 0 ? dpartial : dout, sizeof(float),
                         cudaMemcpyDeviceToHost));
  tutor::guarded_free(dx);
  tutor::guarded_free(dout);
  tutor::guarded_free(dpartial);
  return got;
}

void verify(const std::string& v, size_t n, bool ones, uint64_t seed) {
  const std::vector<uint16_t> x = make_input(n, ones, seed);
  const float want = ref_sum(v, x);
  const float got = run_on_device(v, x);
  const std::string size = std::to_string(n) + (ones ? " ones" : " random");
  tutor::check_close("accumulate", v.c_str(), size, &got, &want, 1, seed);  // atol 0: bit for bit
}

// Bytes read: 2 per element (bf16 in memory); the serial variants run on fewer elements.
void bench(const std::string& v, const tutor::Ceiling& ceiling) {
  const std::vector<uint16_t> ones = make_input(1000000, true, 0);
  const float sum = run_on_device(v, ones);
  tutor::measure("accumulate", ("ones_" + v).c_str(), "sum", sum, "", {"exact sum", 1e6, ""});
  const size_t n = v.rfind("pairwise", 0) == 0 ? size_t(1) << 28 : size_t(1) << 20;
  const std::vector<uint16_t> x = make_input(n, false, 7);  // never time on zeros
  uint16_t* dx;
  float *dout, *dpartial;
  TUTOR_CHECK(cudaMalloc(&dx, n * sizeof(uint16_t)));
  TUTOR_CHECK(cudaMalloc(&dout, sizeof(float)));
  TUTOR_CHECK(cudaMalloc(&dpartial, kLanes * sizeof(float)));
  TUTOR_CHECK(cudaMemcpy(dx, x.data(), n * sizeof(uint16_t), cudaMemcpyHostToDevice));
  const tutor::Timing how = v.rfind("pairwise", 0) == 0 ? tutor::Timing{} : tutor::Timing{1, 5, true, true};
  const float ms = tutor::timed_ms([&] { launch(v, dx, n, dout, dpartial); }, how);
  const double bytes = 2.0 * n;
  tutor::measure("accumulate", ("bw_" + v).c_str(), "bandwidth", tutor::gbps(bytes, ms), "GB/s", ceiling,
                 bytes, ms);
  TUTOR_CHECK(cudaFree(dx));
  TUTOR_CHECK(cudaFree(dout));
  TUTOR_CHECK(cudaFree(dpartial));
}

int main(int argc, char** argv) {
  tutor::Args args = tutor::parse_args(argc, argv);
  if (args.bench) {
    const tutor::Ceiling ceiling = tutor::copy_ceiling();
    for (const std::string& v : kVariants) bench(v, ceiling);
    return tutor::finish("accumulate");
  }
  // 1000 is not a multiple of the block, 70001 leaves most lanes one element more than others.
  std::vector<size_t> sizes = {1, 1000, 4099, 70001, 1000000};
  if (args.quick) sizes.pop_back();
  for (const std::string& v : kVariants)
    for (size_t n : sizes)
      for (bool ones : {true, false}) verify(v, n, ones, args.seed);
  return tutor::finish("accumulate");
}
