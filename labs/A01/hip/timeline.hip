// A01 timeline: the whole life of a first GPU program, timed phase by phase.
// A beginner's vector add: create the context, allocate, copy in from ordinary (pageable)
// host memory, run the kernel, copy back, free. Each phase is timed with the host's wall
// clock; the kernel is also timed alone with device events. Compare the kernel with the total.
//   build: hipcc -O3 -std=c++17 --offload-arch=gfx942 -I labs/common/hip labs/A01/hip/timeline.hip -o timeline  // vendor-specific
//   run:   ./timeline [--n 1048576]   prints the phases, checks the result, then checks the kernel
//                                     again at sizes that are not a multiple of the block
//          ./timeline --bench         one measure line per phase
#include "tutor_lab.hip.h"  // vendor-specific

__global__ void vector_add(const float* a, const float* b, float* c, size_t n) {
  size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}

constexpr int kBlock = 256;

void launch(const float* a, const float* b, float* c, size_t n) {
  unsigned grid = (unsigned)((n + kBlock - 1) / kBlock);
  vector_add<<<grid, kBlock>>>(a, b, c, n);
}

// The kernel alone, once, on fresh random inputs of n elements with a poisoned output inside guard
// zones, compared with the CPU: the checks of Lab 1, run after the timeline, outside its clock.
void verify(size_t n, uint64_t seed) {
  std::vector<float> a(n), b(n), c(n), ref(n);
  tutor::fill_random(a, seed);
  tutor::fill_random(b, seed);
  for (size_t i = 0; i < n; ++i) ref[i] = a[i] + b[i];
  const size_t bytes = n * sizeof(float);
  float *da, *db, *dc;
  tutor::guarded_malloc(&da, n, "a");
  tutor::guarded_malloc(&db, n, "b");
  tutor::guarded_malloc(&dc, n, "c");
  TUTOR_CHECK(hipMemcpy(da, a.data(), bytes, hipMemcpyHostToDevice));
  TUTOR_CHECK(hipMemcpy(db, b.data(), bytes, hipMemcpyHostToDevice));
  tutor::poison(dc, bytes);
  launch(da, db, dc, n);
  TUTOR_CHECK_LAUNCH();
  TUTOR_CHECK(hipMemcpy(c.data(), dc, bytes, hipMemcpyDeviceToHost));
  tutor::guarded_free(da);
  tutor::guarded_free(db);
  tutor::guarded_free(dc);
  tutor::check_close("timeline", "kernel", std::to_string(n), c.data(), ref.data(), n, seed);
}

using Clock = std::chrono::steady_clock;

// Milliseconds of wall-clock time since t0.
double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

int main(int argc, char** argv) {
  tutor::Args args = tutor::parse_args(argc, argv);
  const size_t n = (size_t)tutor::arg_int(args, "--n", 1 << 20);
  const size_t bytes = n * sizeof(float);

  // Host inputs, prepared before the clock starts: a CPU-only program would need them too.
  std::vector<float> a(n), b(n), c(n);
  tutor::fill_random(a, args.seed);
  tutor::fill_random(b, args.seed);

  // Every phase ends with the device idle, so each time belongs to that phase alone.
  const Clock::time_point start = Clock::now();
  Clock::time_point t = Clock::now();
  TUTOR_CHECK(hipFree(0));  // the first runtime call creates the context on the device
  const double t_context = ms_since(t);

  t = Clock::now();
  float *da, *db, *dc;
  TUTOR_CHECK(hipMalloc(&da, bytes));
  TUTOR_CHECK(hipMalloc(&db, bytes));
  TUTOR_CHECK(hipMalloc(&dc, bytes));
  const double t_alloc = ms_since(t);

  // The check's poison (c starts as NaN), timed on its own and left out of the phases and the total.
  t = Clock::now();
  tutor::poison(dc, bytes);
  TUTOR_CHECK(hipDeviceSynchronize());
  const double t_poison = ms_since(t);

  t = Clock::now();  // pageable memory: the runtime stages it through a pinned buffer
  TUTOR_CHECK(hipMemcpy(da, a.data(), bytes, hipMemcpyHostToDevice));
  TUTOR_CHECK(hipMemcpy(db, b.data(), bytes, hipMemcpyHostToDevice));
  // from pageable memory the copy may return once the data is staged, before the last DMA lands
  TUTOR_CHECK(hipDeviceSynchronize());
  const double t_h2d = ms_since(t);

  t = Clock::now();
  launch(da, db, dc, n);
  TUTOR_CHECK(hipGetLastError());
  TUTOR_CHECK(hipDeviceSynchronize());  // a launch returns at once: wait for the kernel to end
  const double t_kernel = ms_since(t);

  t = Clock::now();
  TUTOR_CHECK(hipMemcpy(c.data(), dc, bytes, hipMemcpyDeviceToHost));
  const double t_d2h = ms_since(t);

  t = Clock::now();
  TUTOR_CHECK(hipFree(da));
  TUTOR_CHECK(hipFree(db));
  TUTOR_CHECK(hipFree(dc));
  const double t_free = ms_since(t);
  const double t_total = ms_since(start) - t_poison;

  // The check: bit-identical to the CPU's additions.
  std::vector<float> ref(n);
  for (size_t i = 0; i < n; ++i) ref[i] = a[i] + b[i];
  tutor::check_close("timeline", "result", std::to_string(n), c.data(), ref.data(), n, args.seed);
  // The same kernel at a tiny size and at sizes that leave the last block partial (1000 and
  // 2^20 + 7 are not multiples of 256), after the timeline: none of it is on the clock.
  for (size_t m : {size_t(1), size_t(1000), (size_t(1) << 20) + 7}) verify(m, args.seed);

  // The kernel alone, warm, between device events; the interval also holds the host's launch call.
  TUTOR_CHECK(hipMalloc(&da, bytes));
  TUTOR_CHECK(hipMalloc(&db, bytes));
  TUTOR_CHECK(hipMalloc(&dc, bytes));
  const double t_events = tutor::median_ms([&] { launch(da, db, dc, n); });
  TUTOR_CHECK(hipFree(da));
  TUTOR_CHECK(hipFree(db));
  TUTOR_CHECK(hipFree(dc));

  struct Phase {
    const char* name;
    double ms;
  };
  const Phase phases[] = {{"context", t_context}, {"alloc", t_alloc}, {"h2d", t_h2d},
                          {"kernel", t_kernel},   {"kernel_events", t_events},
                          {"d2h", t_d2h},         {"free", t_free}, {"total", t_total}};
  const tutor::Ceiling total = {"program total", t_total, "ms"};
  for (const Phase& p : phases) {
    std::fprintf(stderr, "%-14s %10.3f ms  %6.2f%% of the total\n", p.name, p.ms,
                 100.0 * p.ms / t_total);
    if (args.bench) tutor::measure("timeline", p.name, "time", p.ms, "ms", total);
  }
  std::fprintf(stderr, "(poisoning c took %.3f ms, outside the phases and the total)\n", t_poison);
  std::fprintf(stderr, "(kernel_events times the kernel again, warm: it is not a phase and not in the total)\n");
  return tutor::finish("timeline");
}
