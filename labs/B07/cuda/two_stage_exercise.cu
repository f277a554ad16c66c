// B07 lab (exercise): two_stage -- the mechanism under a pipeline: streams, events and peer copies.
//
// Stage 0 (device 0) computes y = f0(x) on micro-batch m, the copy stream moves y to
// device 1 (a peer copy), and stage 1 (device 1) computes z = f1(y). Each arrow is an
// event: the copy waits for stage 0's event, stage 1 waits for the copy's event. With
// two buffers per stage, stage 0 works on micro-batch m+1 while the copy of m and
// stage 1's work on m-1 are in flight: three engines busy at once. Nothing here blocks
// the host except the final synchronize.
//
// One GPU: both stages run on device 0 in two streams, the copy becomes a device-to-
// device copy, and the program says so. Checked against a CPU reference; sizes include
// ones that are not multiples of the block size; outputs are poisoned (NaN) first.
// Run: ./two_stage [--quick] [--bench] [--seed N]
#include "tutor_lab.cuh"  // vendor-specific

constexpr int kBlock = 256;
constexpr int kBuffers = 2;  // per stage: micro-batch m and m+1 alternate

__device__ __host__ inline float f0(float x, int iters) {
  for (int i = 0; i < iters; ++i) x = tanhf(0.9f * x + 0.1f);
  return x;
}
__device__ __host__ inline float f1(float y, int iters) {
  for (int i = 0; i < iters; ++i) y = 0.5f * y * y - 0.25f;
  return y;
}

__global__ void stage0(const float* x, float* y, int n, int iters) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = f0(x[i], iters);
}
__global__ void stage1(const float* y, float* z, int n, int iters) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) z[i] = f1(y[i], iters);
}

struct Pipe {
  int dev0 = 0, dev1 = 0;  // the same device when only one GPU is present
  cudaStream_t s0, copy, s1;
  cudaEvent_t made[kBuffers], moved[kBuffers], used[kBuffers];
  float *x, *y0[kBuffers], *y1[kBuffers], *z;  // x, y0 on dev0; y1, z on dev1
};

// x and z hold all M micro-batches of n floats; y0/y1 are the two-slot staging buffers.
void run_pipeline(Pipe& p, int M, int n, int iters) {
  size_t bytes = size_t(n) * sizeof(float);
  int grid = (n + kBlock - 1) / kBlock;
  for (int m = 0; m < M; ++m) {
    int k = m % kBuffers;
    TUTOR_CHECK(cudaSetDevice(p.dev0));
    // TODO 1: slot k still holds micro-batch m - kBuffers until its copy has read it: stage 0 must not
    //         overwrite it before then (only when m >= kBuffers). Which of the three events says so?
    stage0<<<grid, kBlock, 0, p.s0>>>(p.x + size_t(m) * n, p.y0[k], n, iters);
    TUTOR_CHECK(cudaGetLastError());
    // TODO 2: mark, on stage 0's stream, the point where y0[k] holds micro-batch m (TODO 3 waits on it).
    // TODO 3: the copy may read y0[k] only once it is ready, and (when m >= kBuffers) overwrite y1[k]
    //         only once stage 1 has finished reading micro-batch m - kBuffers out of it.
    TUTOR_CHECK(cudaMemcpyPeerAsync(p.y1[k], p.dev1, p.y0[k], p.dev0, bytes, p.copy));
    // TODO 4: mark, on the copy stream, the point where y1[k] has fully arrived (two waits depend on it).
    TUTOR_CHECK(cudaSetDevice(p.dev1));
    // TODO 5: stage 1 must not read y1[k] before the copy into it has landed.
    stage1<<<grid, kBlock, 0, p.s1>>>(p.y1[k], p.z + size_t(m) * n, n, iters);
    TUTOR_CHECK(cudaGetLastError());
    // TODO 6: mark, on stage 1's stream, the point where it has finished reading y1[k] (TODO 3 needs it).
  }
  TUTOR_CHECK(cudaSetDevice(p.dev1));
  TUTOR_CHECK(cudaStreamSynchronize(p.s1));
}

// The same work with no overlap: every step waits for the previous one to finish.
void run_serial(Pipe& p, int M, int n, int iters) {
  size_t bytes = size_t(n) * sizeof(float);
  int grid = (n + kBlock - 1) / kBlock;
  for (int m = 0; m < M; ++m) {
    TUTOR_CHECK(cudaSetDevice(p.dev0));
    stage0<<<grid, kBlock, 0, p.s0>>>(p.x + size_t(m) * n, p.y0[0], n, iters);
    TUTOR_CHECK(cudaStreamSynchronize(p.s0));
    TUTOR_CHECK(cudaMemcpyPeerAsync(p.y1[0], p.dev1, p.y0[0], p.dev0, bytes, p.copy));
    TUTOR_CHECK(cudaStreamSynchronize(p.copy));
    TUTOR_CHECK(cudaSetDevice(p.dev1));
    stage1<<<grid, kBlock, 0, p.s1>>>(p.y1[0], p.z + size_t(m) * n, n, iters);
    TUTOR_CHECK(cudaStreamSynchronize(p.s1));
  }
}

Pipe make_pipe(int M, int n_max) {
  Pipe p;
  int count = 0;
  TUTOR_CHECK(cudaGetDeviceCount(&count));
  p.dev1 = count >= 2 ? 1 : 0;
  if (count >= 2) {
    int can = 0;
    TUTOR_CHECK(cudaDeviceCanAccessPeer(&can, p.dev1, p.dev0));
    if (can) {  // lets the copy engine move data GPU to GPU without the host
      TUTOR_CHECK(cudaSetDevice(p.dev1));
      cudaError_t e = cudaDeviceEnablePeerAccess(p.dev0, 0);
      if (e != cudaErrorPeerAccessAlreadyEnabled) TUTOR_CHECK(e);
      TUTOR_CHECK(cudaSetDevice(p.dev0));
      e = cudaDeviceEnablePeerAccess(p.dev1, 0);
      if (e != cudaErrorPeerAccessAlreadyEnabled) TUTOR_CHECK(e);
    }
    std::printf("{\"event\": \"note\", \"lab\": \"two_stage\", \"message\": \"two devices, peer access %s\"}\n",
                can ? "on" : "off (copies staged through the host)");
  } else {
    std::printf("{\"event\": \"note\", \"lab\": \"two_stage\", \"message\": \"one device: both stages "
                "share it in two streams, the peer copy is a device-to-device copy\"}\n");
  }
  size_t bytes = size_t(n_max) * sizeof(float);
  TUTOR_CHECK(cudaSetDevice(p.dev0));
  TUTOR_CHECK(cudaStreamCreateWithFlags(&p.s0, cudaStreamNonBlocking));
  TUTOR_CHECK(cudaStreamCreateWithFlags(&p.copy, cudaStreamNonBlocking));
  TUTOR_CHECK(cudaMalloc(&p.x, bytes * M));
  for (int k = 0; k < kBuffers; ++k) {
    TUTOR_CHECK(cudaMalloc(&p.y0[k], bytes));
    TUTOR_CHECK(cudaEventCreateWithFlags(&p.made[k], cudaEventDisableTiming));
    TUTOR_CHECK(cudaEventCreateWithFlags(&p.moved[k], cudaEventDisableTiming));
  }
  TUTOR_CHECK(cudaSetDevice(p.dev1));
  TUTOR_CHECK(cudaStreamCreateWithFlags(&p.s1, cudaStreamNonBlocking));
  TUTOR_CHECK(cudaMalloc(&p.z, bytes * M));
  for (int k = 0; k < kBuffers; ++k) {
    TUTOR_CHECK(cudaMalloc(&p.y1[k], bytes));
    TUTOR_CHECK(cudaEventCreateWithFlags(&p.used[k], cudaEventDisableTiming));
  }
  return p;
}

void free_pipe(Pipe& p) {
  TUTOR_CHECK(cudaSetDevice(p.dev0));
  TUTOR_CHECK(cudaFree(p.x));
  for (int k = 0; k < kBuffers; ++k) {
    TUTOR_CHECK(cudaFree(p.y0[k]));
    TUTOR_CHECK(cudaEventDestroy(p.made[k]));
    TUTOR_CHECK(cudaEventDestroy(p.moved[k]));
  }
  TUTOR_CHECK(cudaStreamDestroy(p.s0));
  TUTOR_CHECK(cudaStreamDestroy(p.copy));
  TUTOR_CHECK(cudaSetDevice(p.dev1));
  TUTOR_CHECK(cudaFree(p.z));
  for (int k = 0; k < kBuffers; ++k) {
    TUTOR_CHECK(cudaFree(p.y1[k]));
    TUTOR_CHECK(cudaEventDestroy(p.used[k]));
  }
  TUTOR_CHECK(cudaStreamDestroy(p.s1));
}

// Fills x with random values, poisons z, runs `fn`, compares z with the CPU reference.
template <class Run>
void verify(Pipe& p, const char* variant, int M, int n, int iters, uint64_t seed, Run fn) {
  std::vector<float> x(size_t(M) * n), z(size_t(M) * n), ref(size_t(M) * n);
  tutor::fill_random(x, seed);
  for (size_t i = 0; i < x.size(); ++i) ref[i] = f1(f0(x[i], iters), iters);
  TUTOR_CHECK(cudaSetDevice(p.dev0));
  TUTOR_CHECK(cudaMemcpy(p.x, x.data(), x.size() * sizeof(float), cudaMemcpyHostToDevice));
  TUTOR_CHECK(cudaSetDevice(p.dev1));
  tutor::poison(p.z, z.size() * sizeof(float));
  TUTOR_CHECK(cudaDeviceSynchronize());
  fn();
  TUTOR_CHECK(cudaSetDevice(p.dev1));
  TUTOR_CHECK(cudaMemcpy(z.data(), p.z, z.size() * sizeof(float), cudaMemcpyDeviceToHost));
  std::string size = "M=" + std::to_string(M) + " n=" + std::to_string(n);
  // device tanhf and the host's may differ in the last bits; the iterations are contractions
  tutor::check_close("two_stage", variant, size, z.data(), ref.data(), z.size(), seed, 1e-5, 1e-5);
}

int main(int argc, char** argv) {
  tutor::Args args = tutor::parse_args(argc, argv);
  int M = args.quick ? 6 : 8;
  int iters = 8;
  std::vector<int> sizes = args.quick ? std::vector<int>{1000, 4099} : std::vector<int>{1000, 65537, 1 << 20};
  Pipe p = make_pipe(M, sizes.back());
  for (int n : sizes) {
    verify(p, "pipelined", M, n, iters, args.seed, [&] { run_pipeline(p, M, n, iters); });
    verify(p, "serial", M, n, iters, args.seed, [&] { run_serial(p, M, n, iters); });
  }
  if (args.bench) {
    int n = sizes.back(), heavy = 64;  // enough arithmetic that each stage takes as long as the copy
    auto wall_ms = [&](auto&& fn) {
      fn();  // warm-up
      std::vector<double> t(9);
      for (double& v : t) {
        auto a = std::chrono::steady_clock::now();
        fn();
        v = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - a).count();
      }
      std::sort(t.begin(), t.end());
      return t[t.size() / 2];
    };
    double serial = wall_ms([&] { run_serial(p, M, n, heavy); });
    double piped = wall_ms([&] { run_pipeline(p, M, n, heavy); });
    // the copy alone, all M micro-batches at once: the third engine of the pipeline
    size_t bytes = size_t(n) * M * sizeof(float);
    double copy = wall_ms([&] {
      TUTOR_CHECK(cudaMemcpyPeerAsync(p.z, p.dev1, p.x, p.dev0, bytes, p.copy));
      TUTOR_CHECK(cudaStreamSynchronize(p.copy));
    });
    tutor::measure("two_stage", "pipelined", "time", piped, "ms", {"serial (no overlap)", serial, "ms"});
    tutor::measure("two_stage", "peer_copy", "bandwidth", tutor::gbps(double(bytes), copy), "GB/s",
                   tutor::copy_ceiling(), double(bytes), copy);
  }
  free_pipe(p);
  return tutor::finish("two_stage");
}
