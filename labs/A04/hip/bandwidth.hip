// A04 bandwidth: the bytes per second each level of the memory hierarchy delivers to the whole GPU,
// and the arithmetic intensity at which a stream stops being limited by them.
//   read_l1:    every block re-reads a small set of its own, which stays in its SM's L1
//   read_<set>: the grid streams one set of 4 MiB to 2 GiB through L2 (from L2 while it fits, then HBM)
//   fma_k<K>:   the 1 GiB stream with K dependent FMAs on every float loaded: K/2 FLOP per byte
//   build: hipcc -O3 -std=c++17 --offload-arch=gfx942 -I labs/common/hip labs/A04/hip/bandwidth.hip -o bandwidth  // vendor-specific
//   run:   ./bandwidth            checks every kernel against the CPU on odd sizes
//          ./bandwidth --bench    GB/s per level, TFLOP/s per intensity, beside the copy ceiling
#include "tutor_lab.hip.h"  // vendor-specific

constexpr int kThreads = 1024;  // threads per block in the timed runs
constexpr int kBlocksPerSM = 2;  // 2 x 1024 threads: the most one SM (or CU) holds
constexpr int kUnroll = 4;       // float4 loads each thread issues before it waits for any
constexpr int kResidentBytes = 8 * 1024;  // each block's own set: 2 per CU fit CDNA 3's 32 KiB L1  // vendor-specific
constexpr int kFp32PerSM = 128;  // FP32 FMAs per CU per clock at the datasheet rate (packed FP32)  // vendor-specific
constexpr float kA = 0.999f, kB = 0.001f;  // x -> a x + b: stays in [0, 1), never folds to a constant

// HIP has no load that skips L1 like CUDA's ld.global.cg; a non-temporal load tells the caches  // vendor-specific
// not to keep the line, the nearest equivalent (untested on an MI300X here).  // vendor-specific
__device__ float4 load_l2(const float4* p) { return {__builtin_nontemporal_load(&p->x), __builtin_nontemporal_load(&p->y), __builtin_nontemporal_load(&p->z), __builtin_nontemporal_load(&p->w)}; }  // vendor-specific

// K dependent FMAs on each of the four floats, then their sum: 8K FLOP per 16 bytes loaded.
template <int K>
__device__ float work(float4 v, float a, float b) {
#pragma unroll
  for (int r = 0; r < K; ++r) {
    v.x = fmaf(v.x, a, b);
    v.y = fmaf(v.y, a, b);
    v.z = fmaf(v.z, a, b);
    v.w = fmaf(v.w, a, b);
  }
  return (v.x + v.y) + (v.z + v.w);
}

// ---------------------------------------------------------------- kernels
// sweep: the grid reads in[0..n) `passes` times; thread t takes elements t, t + T, t + 2T, ... (T threads
// in all), kUnroll of them in flight, applies work<K> to each and stores the sum of what it read in out[t].
template <int K>
__global__ void sweep(const float4* in, size_t n, int passes, float a, float b, float* out) {
  const size_t t = (size_t)blockIdx.x * blockDim.x + threadIdx.x, T = (size_t)gridDim.x * blockDim.x;
  float acc = 0.f;
  for (int p = 0; p < passes; ++p) {
    size_t i = t;
    for (; i + (kUnroll - 1) * T < n; i += kUnroll * T) {
      float4 v[kUnroll];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) v[u] = load_l2(in + i + u * T);
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) acc += work<K>(v[u], a, b);
    }
    for (; i < n; i += T) acc += work<K>(load_l2(in + i), a, b);
  }
  out[t] = acc;
}

// resident: block b reads its own n_block float4s, in[b * n_block ...], `passes` times with ordinary
// loads, which L1 caches: after the first pass every load is an L1 hit.
__global__ void resident(const float4* in, int n_block, int passes, float* out) {
  const float4* mine = in + (size_t)blockIdx.x * n_block;
  float acc = 0.f;
  for (int p = 0; p < passes; ++p)
    for (int i = threadIdx.x; i < n_block; i += blockDim.x) acc += work<0>(mine[i], 0.f, 0.f);
  out[(size_t)blockIdx.x * blockDim.x + threadIdx.x] = acc;
}

// ---------------------------------------------------------------- launch
const int kIntensities[] = {1, 2, 4, 8, 16, 32, 64, 128, 256};

void launch_sweep(int k, int blocks, int threads, const float4* in, size_t n, int passes, float* out) {
  switch (k) {
    case 0: sweep<0><<<blocks, threads>>>(in, n, passes, kA, kB, out); break;
    case 1: sweep<1><<<blocks, threads>>>(in, n, passes, kA, kB, out); break;
    case 2: sweep<2><<<blocks, threads>>>(in, n, passes, kA, kB, out); break;
    case 4: sweep<4><<<blocks, threads>>>(in, n, passes, kA, kB, out); break;
    case 8: sweep<8><<<blocks, threads>>>(in, n, passes, kA, kB, out); break;
    case 16: sweep<16><<<blocks, threads>>>(in, n, passes, kA, kB, out); break;
    case 32: sweep<32><<<blocks, threads>>>(in, n, passes, kA, kB, out); break;
    case 64: sweep<64><<<blocks, threads>>>(in, n, passes, kA, kB, out); break;
    case 128: sweep<128><<<blocks, threads>>>(in, n, passes, kA, kB, out); break;
    case 256: sweep<256><<<blocks, threads>>>(in, n, passes, kA, kB, out); break;
    default: std::fprintf(stderr, "no sweep kernel for K = %d\n", k), std::exit(2);
  }
}

// ---------------------------------------------------------------- checks
// The CPU's work<K>: the same fused multiply-adds, so each element's value is bit for bit the GPU's.
double work_cpu(const float* v, int k) {
  float x[4] = {v[0], v[1], v[2], v[3]};
  for (int r = 0; r < k; ++r)
    for (float& e : x) e = std::fma(e, kA, kB);
  return ((double)x[0] + x[1]) + ((double)x[2] + x[3]);
}

// Each thread's sum over a fresh random input of n float4s. The CPU's FMAs are the GPU's bit for bit, so only
// the float additions differ from the CPU's double ones: m positive floats (the inputs are in [0, 1): no
// cancellation) summed in float are off by at most (m - 1) 2^-24 of the sum, and a thread sums at most
// m = 4 x 3 passes x ceil(n / T) = 192 at the sizes below, 1.14e-5: the comparison allows a relative 2e-5.
void verify(size_t n, int blocks, int threads, uint64_t seed) {
  const size_t T = (size_t)blocks * threads;
  std::vector<float> in(4 * n), out(T), ref(T);
  tutor::fill_random(in, seed, 0.0f, 1.0f);
  float4* din;
  float* dout;
  tutor::guarded_malloc(&din, n, "in");
  tutor::guarded_malloc(&dout, T, "out");
  TUTOR_CHECK(hipMemcpy(din, in.data(), n * sizeof(float4), hipMemcpyHostToDevice));
  const std::string size = std::to_string(n) + " float4, " + std::to_string(blocks) + "x" + std::to_string(threads);
  for (int k : {0, 1, 2, 4, 8, 16, 32, 64, 128, 256}) {  // 0 and every k the bench times
    if (k > 4 && n > 4097) continue;  // the long chains at the small sizes only: the CPU pays 4nk FMAs
    for (int passes : {1, 3}) {
      if (k && passes > 1) continue;  // the FMA variants make one pass, as in the bench
      std::vector<double> want(T, 0.0);
      for (size_t i = 0; i < n; ++i) want[i % T] += passes * work_cpu(&in[4 * i], k);
      for (size_t t = 0; t < T; ++t) ref[t] = (float)want[t];
      tutor::poison(dout, T * sizeof(float));
      launch_sweep(k, blocks, threads, din, n, passes, dout);
      TUTOR_CHECK_LAUNCH();
      TUTOR_CHECK(hipMemcpy(out.data(), dout, T * sizeof(float), hipMemcpyDeviceToHost));
      const std::string v = "sweep_k" + std::to_string(k) + "_passes" + std::to_string(passes);
      tutor::check_close("bandwidth", v.c_str(), size, out.data(), ref.data(), T, seed, 1e-6, 2e-5);
    }
  }
  // resident: the input as blocks sets of n / blocks float4s each, read twice.
  const int n_block = (int)(n / blocks);
  if (n_block > 0) {
    std::vector<double> want(T, 0.0);
    for (int b = 0; b < blocks; ++b)
      for (int i = 0; i < n_block; ++i) want[(size_t)b * threads + i % threads] += 2 * work_cpu(&in[4 * ((size_t)b * n_block + i)], 0);
    for (size_t t = 0; t < T; ++t) ref[t] = (float)want[t];
    tutor::poison(dout, T * sizeof(float));
    resident<<<blocks, threads>>>(din, n_block, 2, dout);
    TUTOR_CHECK_LAUNCH();
    TUTOR_CHECK(hipMemcpy(out.data(), dout, T * sizeof(float), hipMemcpyDeviceToHost));
    tutor::check_close("bandwidth", "resident", size, out.data(), ref.data(), T, seed, 1e-6, 1e-5);
  }
  tutor::guarded_free(din);
  tutor::guarded_free(dout);
}

// ---------------------------------------------------------------- bench
// Threads per block for streaming a set of n float4s with `blocks` blocks: a multiple of 32, at most
// kThreads, few enough that every thread has kUnroll loads of each pass. A set smaller than the full
// grid's reach (kUnroll x blocks x kThreads float4s, 16.5 MiB on 132 SMs) would otherwise leave threads
// idle and give the rest fewer than kUnroll loads in flight.
int threads_for(size_t n, int blocks) {
  const size_t fit = n / ((size_t)kUnroll * blocks) / 32 * 32;
  return (int)std::max<size_t>(32, std::min<size_t>(kThreads, fit));
}

std::string set_name(size_t bytes) {
  return bytes >= (size_t(1) << 30) ? std::to_string(bytes >> 30) + "GiB" : std::to_string(bytes >> 20) + "MiB";
}

// A measurement that counted its FLOPs too, so the roofline can place it (the kit's measure() has no flops).
void measure_flops(const char* variant, double tflops, const tutor::Ceiling& c, double bytes, double flops, double ms) {
  tutor::json_begin("measure", "bandwidth", variant);
  std::printf(", \"metric\": \"compute\", \"value\": %.6g, \"unit\": \"TFLOP/s\"", tflops);
  std::printf(", \"ceiling\": {\"name\": \"%s\", \"value\": %.6g, \"unit\": \"%s\"}", c.name, c.value, c.unit);
  std::printf(", \"bytes\": %.0f, \"flops\": %.0f, \"ms\": %.6g", bytes, flops, ms);
  tutor::json_end();
}

void bench() {
  int sms = 0, khz = 0;
  TUTOR_CHECK(hipDeviceGetAttribute(&sms, hipDeviceAttributeMultiprocessorCount, 0));
  TUTOR_CHECK(hipDeviceGetAttribute(&khz, hipDeviceAttributeClockRate, 0));  // the highest SM clock
  const int blocks = kBlocksPerSM * sms;
  const size_t big = size_t(2) << 30;  // the largest set, 2 GiB
  float4* in;
  float* out;
  TUTOR_CHECK(hipMalloc(&in, big));
  TUTOR_CHECK(hipMalloc(&out, (size_t)blocks * kThreads * sizeof(float)));
  TUTOR_CHECK(hipMemset(in, 0, big));  // the values do not change the speed
  const tutor::Ceiling copy = tutor::copy_ceiling(size_t(1) << 30);
  // A set that fits in a cache level is measured from that level: no L2 flush between runs.
  const tutor::Timing kWarm = {3, 20, /*flush=*/false};

  // L1: each block's set is re-read 256 times; the first pass, 1/256 of the bytes, comes from L2 when the
  // set is warm there (as in these runs) and from HBM after a flush (as in a profile).
  const int n_block = kResidentBytes / (int)sizeof(float4), passes_l1 = 256;
  float ms = tutor::timed_ms([&] { resident<<<blocks, kThreads>>>(in, n_block, passes_l1, out); }, kWarm);
  double bytes = (double)blocks * kResidentBytes * passes_l1;
  tutor::measure("bandwidth", "read_l1", "bandwidth", tutor::gbps(bytes, ms), "GB/s", copy, bytes, ms);

  // One set streamed by the whole grid, 1 GiB read per launch (the set's bytes times its passes).
  for (size_t set = size_t(4) << 20; set <= big; set *= 2) {
    if (set == (size_t(256) << 20) || set == (size_t(1) << 30)) continue;  // 4 MiB ... 128 MiB, 512 MiB, 2 GiB
    const int passes = (int)std::max<size_t>(1, (size_t(1) << 30) / set);
    const int threads = threads_for(set / sizeof(float4), blocks);
    ms = tutor::timed_ms([&] { launch_sweep(0, blocks, threads, in, set / sizeof(float4), passes, out); }, kWarm);
    bytes = (double)set * passes;
    tutor::measure("bandwidth", ("read_" + set_name(set)).c_str(), "bandwidth", tutor::gbps(bytes, ms), "GB/s", copy,
                   bytes, ms);
  }

  // The 1 GiB stream with K FMAs per float: FLOP per byte = 8K / 16. Each record's ceiling is the roof at its
  // intensity, min(FP32 peak, intensity x the copy bandwidth measured above).
  const double peak = (double)sms * kFp32PerSM * 2.0 * khz * 1e3;  // FLOP/s
  const size_t n = (size_t(1) << 30) / sizeof(float4);
  for (int k : kIntensities) {
    ms = tutor::timed_ms([&] { launch_sweep(k, blocks, kThreads, in, n, 1, out); });
    const double nbytes = (double)n * sizeof(float4), flops = 8.0 * k * n;
    const double roof = std::min(peak, flops / nbytes * copy.value * 1e9);
    const tutor::Ceiling c = {"roof min(FP32 peak at the highest SM clock, intensity x device-to-device bandwidth of the same run)", roof / 1e12,
                              "TFLOP/s"};
    measure_flops(("fma_k" + std::to_string(k)).c_str(), flops / (ms * 1e-3) / 1e12, c, nbytes, flops, ms);
  }
  TUTOR_CHECK(hipFree(in));
  TUTOR_CHECK(hipFree(out));
}

struct Size {
  size_t n;  // float4s
  int blocks, threads;
};

int main(int argc, char** argv) {
  tutor::Args args = tutor::parse_args(argc, argv);
  // Grids that are not multiples of the size, tails of every length.
  std::vector<Size> sizes = {{1, 1, 32}, {37, 2, 64}, {1000, 3, 128}, {4097, 5, 96},
                                                     {20011, 7, 256}, {65536, 4, 1024}};
  if (args.quick) sizes = {{1, 1, 32}, {37, 2, 64}, {1000, 3, 128}};
  for (const Size& s : sizes) verify(s.n, s.blocks, s.threads, args.seed);
  if (args.bench) bench();
  return tutor::finish("bandwidth");
}
