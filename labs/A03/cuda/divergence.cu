// A03 divergence: every thread runs one of two paths of equal cost (a chain of kSteps dependent
// fused multiply-adds), chosen by a branch on its thread index. Four ways to choose:
//   no_branch   every thread takes path A                          (the baseline: one path per warp)
//   warp_split  path by the parity of threadIdx.x / 32             (uniform in a warp of 32 lanes)
//   wave_split  path by the parity of threadIdx.x / 64             (uniform in a wavefront of 64 too)
//   lane_split  path by the parity of threadIdx.x                  (every warp holds both paths)
// A warp whose lanes disagree runs both paths one after the other, each with half its lanes
// masked off, so it takes twice as long for the same useful work.
//   build: nvcc -O3 -std=c++17 -arch=sm_90a -I labs/common/cuda labs/A03/cuda/divergence.cu -o divergence  // vendor-specific
//   run:   ./divergence            checks every variant on odd sizes against the CPU
//          ./divergence --bench    useful GFLOP/s of each variant on 16M threads (--n to change)
#include "tutor_lab.cuh"  // vendor-specific

constexpr int kThreads = 256;
constexpr int kSteps = 1024;  // dependent FMAs on each path

// The two paths: the same number of FMAs, different constants, so neither can stand in for the other.
__host__ __device__ inline float path_a(float x) {
  for (int s = 0; s < kSteps; ++s) x = fmaf(x, 0.9990f, 0.0010f);
  return x;
}
__host__ __device__ inline float path_b(float x) {
  for (int s = 0; s < kSteps; ++s) x = fmaf(x, -0.9980f, 0.0020f);
  return x;
}

enum Split { kNone = 0, kWarp = 1, kWave = 2, kLane = 3 };

// Which path thread t of a block takes under each split: true is path B.
__host__ __device__ inline bool takes_b(Split split, unsigned t) {
  if (split == kWarp) return (t / 32) % 2 == 1;
  if (split == kWave) return (t / 64) % 2 == 1;
  if (split == kLane) return t % 2 == 1;
  return false;
}

template <Split S>
__device__ void branch_body(const float* in, float* out, int n) {
  const int i = blockIdx.x * kThreads + threadIdx.x;
  if (i >= n) return;
  const float x = in[i];
  if (takes_b(S, threadIdx.x)) out[i] = path_b(x);
  else out[i] = path_a(x);
}

// One kernel per split, each with its own name, so that the profiler can pick one out.
__global__ void __launch_bounds__(kThreads) branch_none(const float* in, float* out, int n) { branch_body<kNone>(in, out, n); }
__global__ void __launch_bounds__(kThreads) branch_warp(const float* in, float* out, int n) { branch_body<kWarp>(in, out, n); }
__global__ void __launch_bounds__(kThreads) branch_wave(const float* in, float* out, int n) { branch_body<kWave>(in, out, n); }
__global__ void __launch_bounds__(kThreads) branch_lane(const float* in, float* out, int n) { branch_body<kLane>(in, out, n); }

// ---------------------------------------------------------------- driver
struct Variant {
  const char* name;
  Split split;
};
const Variant kVariants[] = {{"no_branch", kNone}, {"warp_split", kWarp}, {"wave_split", kWave}, {"lane_split", kLane}};

void launch(Split s, const float* in, float* out, int n) {
  const unsigned grid = (unsigned)((n + kThreads - 1) / kThreads);
  if (s == kNone) branch_none<<<grid, kThreads>>>(in, out, n);
  else if (s == kWarp) branch_warp<<<grid, kThreads>>>(in, out, n);
  else if (s == kWave) branch_wave<<<grid, kThreads>>>(in, out, n);
  else branch_lane<<<grid, kThreads>>>(in, out, n);
}

// The CPU reference's own definition of the four splits, kept apart from takes_b so that a wrong
// takes_b fails the check instead of agreeing with itself: the bit of t whose value picks path B
// (0 for no_branch; 32 and 64 are the parity of t / 32 and t / 64; 1 is the parity of t).
const unsigned kRefBit[] = {0u, 32u, 64u, 1u};  // indexed by Split

// Every variant on one fresh random array, output poisoned first, against the same paths on the CPU.
void verify(int n, uint64_t seed) {
  std::vector<float> in(n), out(n), ref(n);
  tutor::fill_random(in, seed);
  float *din, *dout;
  tutor::guarded_malloc(&din, n, "in");
  tutor::guarded_malloc(&dout, n, "out");
  TUTOR_CHECK(cudaMemcpy(din, in.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  for (const Variant& v : kVariants) {
    for (int i = 0; i < n; ++i) ref[i] = ((unsigned)(i % kThreads) & kRefBit[v.split]) ? path_b(in[i]) : path_a(in[i]);
    tutor::poison(dout, n * sizeof(float));
    launch(v.split, din, dout, n);
    TUTOR_CHECK_LAUNCH();
    TUTOR_CHECK(cudaMemcpy(out.data(), dout, n * sizeof(float), cudaMemcpyDeviceToHost));
    tutor::check_close("divergence", v.name, std::to_string(n), out.data(), ref.data(), n, seed, 1e-6, 1e-5);
  }
  tutor::guarded_free(din);
  tutor::guarded_free(dout);
}

// Useful GFLOP/s: each thread does kSteps FMAs (2 FLOP each) on its own path. The ceiling is the
// branch-free kernel timed in the same run: the rate of the FMA chain with no lane ever idle.
void bench(int n) {
  float *din, *dout;
  TUTOR_CHECK(cudaMalloc(&din, n * sizeof(float)));
  TUTOR_CHECK(cudaMalloc(&dout, n * sizeof(float)));
  TUTOR_CHECK(cudaMemset(din, 0, n * sizeof(float)));
  const double flops = 2.0 * kSteps * n;
  float base_ms = tutor::timed_ms([&] { launch(kNone, din, dout, n); });
  const tutor::Ceiling ceiling{"branch-free FMA chain", flops / (base_ms * 1e6), "GFLOP/s"};
  for (const Variant& v : kVariants) {
    float ms = tutor::timed_ms([&] { launch(v.split, din, dout, n); });
    tutor::measure("divergence", v.name, "useful_rate", flops / (ms * 1e6), "GFLOP/s", ceiling, 0, ms);
  }
  TUTOR_CHECK(cudaFree(din));
  TUTOR_CHECK(cudaFree(dout));
}

int main(int argc, char** argv) {
  tutor::Args args = tutor::parse_args(argc, argv);
  std::vector<int> sizes = {1, 33, 1000, 65537, 300001};
  if (args.quick) sizes = {1, 33, 1000, 4097};
  for (int n : sizes) verify(n, args.seed);
  if (args.bench) bench((int)tutor::arg_int(args, "--n", 1 << 24));
  return tutor::finish("divergence");
}
