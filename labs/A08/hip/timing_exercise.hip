// A08 timing, exercise: the kernel, the right way's timer, the graph and the two streams. The worked
// solution is timing.cu.
// One memory-bound kernel, y = a * x, timed three wrong ways and the right way, then the
// cost of a launch (eager against a graph of launches) and two independent kernels on one stream and on two.
// Every time is printed in microseconds; each trap's error is its time over the right way's.
//   build: hipcc -O3 -std=c++17 --offload-arch=gfx942 -I labs/common/hip labs/A08/hip/timing_exercise.hip -o timing  // vendor-specific
//   run:   ./timing            checks the kernels, the graph of N launches and the two streams
//          ./timing --bench    times every variant (--small, --large: elements per buffer)
#include "tutor_lab.hip.h"  // vendor-specific

#include <thread>

constexpr int kBlock = 256;

// ---------------------------------------------------------------- kernels
// y = a * x: 4 bytes read and 4 written per element, no reuse. With the L2 cold, pure DRAM traffic.
__device__ void scale_body(const float* x, float* y, float a, size_t n) {
  // TODO 1: each thread owns one element, y = a * x; the grid is rounded up (see blocks), so no thread
  //         may read or write at or past n, and the index must not overflow for a billion elements.
}
__global__ void scale(const float* x, float* y, float a, size_t n) { scale_body(x, y, a, n); }

// The same kernel under another name: the bench launches it once, as the first call of a kernel
// that nothing in this process has launched before.
__global__ void scale_first(const float* x, float* y, float a, size_t n) { scale_body(x, y, a, n); }

// As close to an empty kernel as can be checked: one thread adds 1 to one float.
__global__ void bump(float* y) { y[0] += 1.0f; }

// One thread spins for `cycles` clock ticks: it keeps the stream busy while the host enqueues the
// timed work behind it, and it touches no memory, so the L2 keeps what it held.
__global__ void hold(long long cycles) {
  long long t0 = clock64();
  while (clock64() - t0 < cycles) {
  }
}

// Every thread waits `cycles` ticks, then the grid adds 1 to each element. A grid of a few blocks
// leaves most multiprocessors idle: room for a second kernel beside it.
__global__ void spin_add(const float* x, float* y, size_t n, long long cycles) {
  long long t0 = clock64();
  while (clock64() - t0 < cycles) {
  }
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
    y[i] = x[i] + 1.0f;
}

unsigned blocks(size_t n) { return (unsigned)((n + kBlock - 1) / kBlock); }

void launch_scale(const float* x, float* y, size_t n, hipStream_t s = 0) {
  scale<<<blocks(n), kBlock, 0, s>>>(x, y, 2.0f, n);
}

// ---------------------------------------------------------------- the L2 flush
// Writes a buffer twice the size of the L2 the runtime reports, so that no line of the timed kernel's
// buffers is left in it. Enqueued on the stream before each timed run, outside its two events.
struct L2Flush {
  char* buf = nullptr;
  size_t bytes = 0;
  explicit L2Flush(size_t l2_bytes) {
    bytes = 2 * l2_bytes;
    TUTOR_CHECK(hipMalloc(&buf, bytes));
  }
  ~L2Flush() { TUTOR_CHECK(hipFree(buf)); }
  void operator()(hipStream_t s) const { TUTOR_CHECK(hipMemsetAsync(buf, 0, bytes, s)); }
};

// Keeps the GPU busy writing the flush buffer for `ms` milliseconds, so that its clocks have risen
// from idle before anything is timed. No kernel under test runs in it.
void warm_clocks(const L2Flush& flush, double ms, hipStream_t s) {
  auto t0 = std::chrono::steady_clock::now();
  while (std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() < ms) {
    for (int i = 0; i < 16; ++i) flush(s);
    TUTOR_CHECK(hipStreamSynchronize(s));
  }
}

size_t l2_bytes() {
  int dev = 0, bytes = 0;
  TUTOR_CHECK(hipGetDevice(&dev));
  TUTOR_CHECK(hipDeviceGetAttribute(&bytes, hipDeviceAttributeL2CacheSize, dev));
  return (size_t)bytes;
}

// ---------------------------------------------------------------- timers
struct Stats {
  double median, p10, p90;  // microseconds
};

Stats stats_of(std::vector<double> t) {
  std::sort(t.begin(), t.end());
  auto at = [&](double q) { return t[(size_t)(q * (double)(t.size() - 1) + 0.5)]; };
  return {at(0.5), at(0.1), at(0.9)};
}

double host_us(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b) {
  return std::chrono::duration<double, std::micro>(b - a).count();
}

// Trap 1: the host's clock around the launch call alone. A launch only enqueues the kernel and
// returns, so this measures the enqueue, not the kernel.
template <class F>
Stats host_no_sync(F&& launch, int reps) {
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    TUTOR_CHECK(hipDeviceSynchronize());
    auto a = std::chrono::steady_clock::now();
    launch();
    auto b = std::chrono::steady_clock::now();
    t.push_back(host_us(a, b));
  }
  TUTOR_CHECK(hipDeviceSynchronize());
  return stats_of(t);
}

// Device events around each run of `launch`, with `before(s)` enqueued ahead of each run, untimed.
// Everything is enqueued first and waited for once, so the stream never runs dry between runs.
// Returns the microseconds of each timed run, in the order they ran.
template <class F, class B>
std::vector<double> event_times(F&& launch, B&& before, int warmup, int reps, hipStream_t s) {
  for (int i = 0; i < warmup; ++i) {
    before(s);
    launch(s);
  }
  std::vector<hipEvent_t> start(reps), stop(reps);
  for (int r = 0; r < reps; ++r) {
    TUTOR_CHECK(hipEventCreate(&start[r]));
    TUTOR_CHECK(hipEventCreate(&stop[r]));
  }
  for (int r = 0; r < reps; ++r) {
    // TODO 2: run `before` on the stream, then time one run of `launch` between this repetition's two
    //         events. Nothing but the kernel may sit between the two events, and nothing may wait here.
  }
  TUTOR_CHECK(hipGetLastError());
  TUTOR_CHECK(hipStreamSynchronize(s));
  std::vector<double> t(reps);
  for (int r = 0; r < reps; ++r) {
    float ms = NAN;  // stays NaN for a pair the loop never recorded
    if (hipEventElapsedTime(&ms, start[r], stop[r]) != hipSuccess) (void)hipGetLastError();
    t[r] = 1e3 * ms;
    TUTOR_CHECK(hipEventDestroy(start[r]));
    TUTOR_CHECK(hipEventDestroy(stop[r]));
  }
  return t;
}

// Events around each run, each run waited for before the next start event, no flush: a timer that
// falls into the idle-gap and the warm-L2 traps at once. Three untimed runs first; 20 timed, as the
// course kit's timer did before it queued its runs behind a spin and flushed the L2 before each.
template <class F>
double waited_median(F&& launch) {
  for (int i = 0; i < 3; ++i) launch();
  TUTOR_CHECK(hipDeviceSynchronize());
  hipEvent_t start, stop;
  TUTOR_CHECK(hipEventCreate(&start));
  TUTOR_CHECK(hipEventCreate(&stop));
  std::vector<double> t;
  for (int r = 0; r < 20; ++r) {
    TUTOR_CHECK(hipEventRecord(start));
    launch();
    TUTOR_CHECK(hipEventRecord(stop));
    TUTOR_CHECK(hipEventSynchronize(stop));
    float ms = 0;
    TUTOR_CHECK(hipEventElapsedTime(&ms, start, stop));
    t.push_back(1e3 * ms);
  }
  TUTOR_CHECK(hipGetLastError());
  TUTOR_CHECK(hipEventDestroy(start));
  TUTOR_CHECK(hipEventDestroy(stop));
  return stats_of(t).median;
}

// ---------------------------------------------------------------- graphs and streams
// A graph of `n` bump launches, captured from stream `s`: one launch of it runs all `n`.
hipGraphExec_t bump_graph(float* y, int n, hipStream_t s) {
  hipGraphExec_t exec = nullptr;
  // TODO 3: record n launches of bump on stream s into a graph, without running them now, and make
  //         `exec` the executable form of that graph; free what is no longer needed.
  (void)y, (void)n, (void)s;
  return exec;
}

// Two spin_add kernels, on (x1, y1) and (x2, y2), between the events `start` and `stop` of stream s1.
// two_streams false: both on s1, one after the other. True: the second on s2, beside the first.
void two_kernels(const float* x1, float* y1, const float* x2, float* y2, size_t n, long long cycles, unsigned grid,
                 bool two_streams, hipStream_t s1, hipStream_t s2, hipEvent_t start, hipEvent_t stop,
                 hipEvent_t joined) {
  TUTOR_CHECK(hipEventRecord(start, s1));
  if (!two_streams) {
    spin_add<<<grid, kBlock, 0, s1>>>(x1, y1, n, cycles);
    spin_add<<<grid, kBlock, 0, s1>>>(x2, y2, n, cycles);
  } else {
    // TODO 4: the first kernel on s1, the second on s2, side by side. The second may start only once
    //         `start` has happened on s1, and `stop` (recorded on s1 below) only once both have finished.
    (void)s2, (void)joined;
  }
  TUTOR_CHECK(hipEventRecord(stop, s1));
}

struct Streams {
  hipStream_t s1, s2;
  hipEvent_t start, stop, joined;
  Streams() {
    TUTOR_CHECK(hipStreamCreateWithFlags(&s1, hipStreamNonBlocking));
    TUTOR_CHECK(hipStreamCreateWithFlags(&s2, hipStreamNonBlocking));
    TUTOR_CHECK(hipEventCreate(&start));
    TUTOR_CHECK(hipEventCreate(&stop));
    TUTOR_CHECK(hipEventCreate(&joined));
  }
  ~Streams() {
    TUTOR_CHECK(hipEventDestroy(start));
    TUTOR_CHECK(hipEventDestroy(stop));
    TUTOR_CHECK(hipEventDestroy(joined));
    TUTOR_CHECK(hipStreamDestroy(s1));
    TUTOR_CHECK(hipStreamDestroy(s2));
  }
};

// ---------------------------------------------------------------- checks
// scale on fresh random inputs, output poisoned; a*x is one rounding on the GPU and the CPU alike.
void verify_scale(size_t n, uint64_t seed) {
  std::vector<float> x(n), y(n), ref(n);
  tutor::fill_random(x, seed);
  for (size_t i = 0; i < n; ++i) ref[i] = 2.0f * x[i];
  float *dx, *dy;
  tutor::guarded_malloc(&dx, n, "x");
  tutor::guarded_malloc(&dy, n, "y");
  TUTOR_CHECK(hipMemcpy(dx, x.data(), n * sizeof(float), hipMemcpyHostToDevice));
  tutor::poison(dy, n * sizeof(float));
  launch_scale(dx, dy, n);
  TUTOR_CHECK_LAUNCH();
  TUTOR_CHECK(hipMemcpy(y.data(), dy, n * sizeof(float), hipMemcpyDeviceToHost));
  tutor::check_close("timing", "scale", std::to_string(n), y.data(), ref.data(), n, seed);
  tutor::guarded_free(dx);
  tutor::guarded_free(dy);
}

// The right way's timer on a known spin. hold(kSpin), timed by event_times with another hold(kSpin)
// enqueued ahead of each run, must read what one hold(kSpin) alone reads between two events: a start
// event recorded before `before` would add a second spin. And the host must have enqueued every timed
// run long before the first could end: a wait inside the loop would hold it for two spins a run.
void verify_timer(uint64_t seed) {
  constexpr long long kSpin = 4000000;  // ~2 ms at 2 GHz
  constexpr int kReps = 5;
  hipStream_t s;
  TUTOR_CHECK(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));
  hipEvent_t a, b;
  TUTOR_CHECK(hipEventCreate(&a));
  TUTOR_CHECK(hipEventCreate(&b));
  hold<<<1, 1, 0, s>>>(20 * kSpin);  // ~40 ms of work first, so that the clocks have risen
  std::vector<double> alone;
  for (int r = 0; r < 3; ++r) {
    TUTOR_CHECK(hipEventRecord(a, s));
    hold<<<1, 1, 0, s>>>(kSpin);
    TUTOR_CHECK(hipEventRecord(b, s));
    TUTOR_CHECK(hipEventSynchronize(b));
    float ms = 0;
    TUTOR_CHECK(hipEventElapsedTime(&ms, a, b));
    alone.push_back(1e3 * ms);
  }
  std::vector<std::chrono::steady_clock::time_point> calls;
  auto timed = [&](hipStream_t st) {
    calls.push_back(std::chrono::steady_clock::now());
    hold<<<1, 1, 0, st>>>(kSpin);
  };
  auto ahead = [](hipStream_t st) { hold<<<1, 1, 0, st>>>(kSpin); };
  const double got = stats_of(event_times(timed, ahead, 1, kReps, s)).median;
  const double want = stats_of(alone).median;
  const float ratio = (float)(got / want), one = 1.0f;
  tutor::check_close("timing", "timer_one_spin", "read over one spin alone", &ratio, &one, 1, seed, 0.0, 0.25);
  const float queued = calls.size() >= (size_t)kReps ? (float)(host_us(calls[calls.size() - kReps], calls.back()) / want) : 1e9f;
  const float zero = 0.0f;
  tutor::check_close("timing", "timer_no_wait", "host span of the timed runs over one spin", &queued, &zero, 1, seed,
                     0.5, 0.0);
  TUTOR_CHECK(hipEventDestroy(a));
  TUTOR_CHECK(hipEventDestroy(b));
  TUTOR_CHECK(hipStreamDestroy(s));
}

// A graph of n bumps, and n eager bumps, each from 0: both must leave exactly n.
void verify_graph(int n, uint64_t seed) {
  float* dy;
  tutor::guarded_malloc(&dy, 1, "y");
  hipStream_t s;
  TUTOR_CHECK(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));
  hipGraphExec_t exec = bump_graph(dy, n, s);
  float got = 0, want = (float)n;
  for (int eager = 0; eager < 2; ++eager) {
    TUTOR_CHECK(hipMemsetAsync(dy, 0, sizeof(float), s));  // on s: a non-blocking stream does not wait for the default one
    if (eager)
      for (int i = 0; i < n; ++i) bump<<<1, 1, 0, s>>>(dy);
    else
      TUTOR_CHECK(hipGraphLaunch(exec, s));
    TUTOR_CHECK(hipStreamSynchronize(s));
    TUTOR_CHECK_LAUNCH();
    TUTOR_CHECK(hipMemcpy(&got, dy, sizeof(float), hipMemcpyDeviceToHost));
    tutor::check_close("timing", eager ? "eager_bumps" : "graph_bumps", std::to_string(n), &got, &want, 1, seed);
  }
  TUTOR_CHECK(hipGraphExecDestroy(exec));
  TUTOR_CHECK(hipStreamDestroy(s));
  tutor::guarded_free(dy);
}

// Both kernels' outputs, on one stream and on two, each poisoned first.
void verify_streams(size_t n, uint64_t seed) {
  std::vector<float> x1(n), x2(n), y(n), ref1(n), ref2(n);
  tutor::fill_random(x1, seed);
  tutor::fill_random(x2, seed);
  for (size_t i = 0; i < n; ++i) ref1[i] = x1[i] + 1.0f, ref2[i] = x2[i] + 1.0f;
  float *dx1, *dx2, *dy1, *dy2;
  tutor::guarded_malloc(&dx1, n, "x1");
  tutor::guarded_malloc(&dx2, n, "x2");
  tutor::guarded_malloc(&dy1, n, "y1");
  tutor::guarded_malloc(&dy2, n, "y2");
  TUTOR_CHECK(hipMemcpy(dx1, x1.data(), n * sizeof(float), hipMemcpyHostToDevice));
  TUTOR_CHECK(hipMemcpy(dx2, x2.data(), n * sizeof(float), hipMemcpyHostToDevice));
  Streams st;
  for (int two = 0; two < 2; ++two) {
    tutor::poison(dy1, n * sizeof(float));
    tutor::poison(dy2, n * sizeof(float));
    TUTOR_CHECK(hipDeviceSynchronize());  // the copies and the poison are on the default stream, which s1 and s2 do not wait for
    two_kernels(dx1, dy1, dx2, dy2, n, 200000, 3, two == 1, st.s1, st.s2, st.start, st.stop, st.joined);
    // Read back on s1 right after stop, without waiting for the whole device: if stop did not wait for
    // the second kernel (~100 us of spinning), its output is still the poison here.
    TUTOR_CHECK(hipEventSynchronize(st.stop));
    TUTOR_CHECK(hipGetLastError());
    const char* v = two ? "two_streams" : "one_stream";
    std::vector<float> y2(n);
    TUTOR_CHECK(hipMemcpyAsync(y.data(), dy1, n * sizeof(float), hipMemcpyDeviceToHost, st.s1));
    TUTOR_CHECK(hipMemcpyAsync(y2.data(), dy2, n * sizeof(float), hipMemcpyDeviceToHost, st.s1));
    TUTOR_CHECK(hipStreamSynchronize(st.s1));
    tutor::check_close("timing", v, std::to_string(n) + " first", y.data(), ref1.data(), n, seed);
    tutor::check_close("timing", v, std::to_string(n) + " second", y2.data(), ref2.data(), n, seed);
    TUTOR_CHECK_LAUNCH();
  }
  for (float* p : {dx1, dx2, dy1, dy2}) tutor::guarded_free(p);
}

// ---------------------------------------------------------------- bench
// All times in microseconds. The floor of a scale run: its bytes at the copy rate of this run.
void record(const char* variant, double us, const tutor::Ceiling& c, double bytes = 0) {
  tutor::measure("timing", variant, "time", us, "us", c, bytes, us / 1e3);
}

tutor::Ceiling floor_of(double bytes, const tutor::Ceiling& copy) {
  return {"DRAM floor: these bytes at the device-to-device rate of this run", bytes / (copy.value * 1e3), "us"};
}

void bench_scale(size_t small, size_t large, const tutor::Ceiling& copy) {
  const size_t l2 = l2_bytes();
  tutor::measure("timing", "device_l2", "l2_size", (double)l2 / (1 << 20), "MiB", copy);
  L2Flush flush(l2);
  auto wait = [](hipStream_t s) { hold<<<1, 1, 0, s>>>(100000); };  // ~50 us at 2 GHz, no memory
  // The right way's untimed work: the flush, then the spin, so that the host's enqueue of the next run
  // is hidden behind both and the start event never waits on it.
  auto cold = [&](hipStream_t s) {
    flush(s);
    wait(s);
  };
  float *dx, *dy;
  TUTOR_CHECK(hipMalloc(&dx, large * sizeof(float)));
  TUTOR_CHECK(hipMalloc(&dy, large * sizeof(float)));
  TUTOR_CHECK(hipMemset(dx, 0, large * sizeof(float)));
  hipStream_t s;
  TUTOR_CHECK(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));

  // Trap 2 first, before anything else launches scale_first: the host clock around its first launch,
  // synchronized, with the L2 flushed before it.
  {
    const double bytes = 8.0 * small;
    std::vector<float> x(small), y(small), ref(small);
    tutor::fill_random(x, 1);
    for (size_t i = 0; i < small; ++i) ref[i] = 2.0f * x[i];
    TUTOR_CHECK(hipMemcpy(dx, x.data(), small * sizeof(float), hipMemcpyHostToDevice));
    flush(0);
    TUTOR_CHECK(hipDeviceSynchronize());
    auto a = std::chrono::steady_clock::now();
    scale_first<<<blocks(small), kBlock>>>(dx, dy, 2.0f, small);
    TUTOR_CHECK(hipDeviceSynchronize());
    auto b = std::chrono::steady_clock::now();
    record("small_cold_first_call", host_us(a, b), floor_of(bytes, copy), bytes);
    TUTOR_CHECK(hipMemcpy(y.data(), dy, small * sizeof(float), hipMemcpyDeviceToHost));
    tutor::check_close("timing", "scale_first", std::to_string(small), y.data(), ref.data(), small, 1);
  }
  for (size_t n : {small, large}) {
    const double bytes = 8.0 * n;
    const tutor::Ceiling fl = floor_of(bytes, copy);
    const bool is_small = n == small;
    auto on = [&](hipStream_t st) { launch_scale(dx, dy, n, st); };
    if (is_small) {
      // Trap 1: the host clock around the launch, no synchronize.
      record("small_host_no_sync", host_no_sync([&] { launch_scale(dx, dy, n); }, 50).median, fl, bytes);
    }
    // The course kit's own helper, as the labs call it, on the same buffers.
    // Every timer from here on starts with the clocks risen (warm_clocks), as a long program's would be.
    warm_clocks(flush, 100, s);
    const double kit = 1e3 * tutor::timed_ms([&] { launch_scale(dx, dy, n); });
    record(is_small ? "small_kit" : "large_kit", kit, fl, bytes);
    if (is_small) {
      // Each run waited for, no flush: both traps at once.
      warm_clocks(flush, 100, s);
      record("small_kit_waited", waited_median([&] { launch_scale(dx, dy, n); }), fl, bytes);
      // Trap 3: events, warm-up, many repeats, the stream kept busy ahead of each run, the L2 warm.
      warm_clocks(flush, 100, s);
      record("small_warm_l2", stats_of(event_times(on, wait, 3, 100, s)).median, fl, bytes);
    }
    // The right way: the same, with the L2 flushed before each run, then the spin.
    warm_clocks(flush, 100, s);
    Stats right = stats_of(event_times(on, cold, 3, is_small ? 100 : 30, s));
    record(is_small ? "small_right" : "large_right", right.median, fl, bytes);
    if (is_small) {
      record("spread_p10", right.p10, fl, bytes);
      record("spread_p90", right.p90, fl, bytes);
    }
  }
  // Trap 4: the right way's timer after the GPU has idled for a second, with three warm-up runs only:
  // the clocks may not have risen by the time the first repeats run. A median over all the repeats
  // would hide a slow start, so the first repeat and the mean of the first 10 are recorded.
  std::this_thread::sleep_for(std::chrono::seconds(1));
  auto on_small = [&](hipStream_t st) { launch_scale(dx, dy, small, st); };
  const std::vector<double> idle = event_times(on_small, cold, 3, 100, s);
  double first10 = 0;
  for (int r = 0; r < 10; ++r) first10 += idle[r] / 10;
  record("small_after_idle", first10, floor_of(8.0 * small, copy), 8.0 * small);
  record("small_after_idle_first", idle[0], floor_of(8.0 * small, copy), 8.0 * small);
  TUTOR_CHECK(hipStreamDestroy(s));
  TUTOR_CHECK(hipFree(dx));
  TUTOR_CHECK(hipFree(dy));
}

// The cost of a launch: one bump timed like any kernel by the kit and by a timer that waits for each
// run, the host's enqueue of N bumps, N eager bumps between two events, and one graph of N bumps between
// two events; all per launch.
void bench_launch(const tutor::Ceiling& copy) {
  constexpr int kN = 1000;
  float* dy;
  TUTOR_CHECK(hipMalloc(&dy, sizeof(float)));
  TUTOR_CHECK(hipMemset(dy, 0, sizeof(float)));
  hipStream_t s;
  TUTOR_CHECK(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));
  record("launch_event_single", 1e3 * tutor::timed_ms([&] { bump<<<1, 1>>>(dy); }), copy);
  record("launch_event_waited", waited_median([&] { bump<<<1, 1>>>(dy); }), copy);
  hipGraphExec_t exec = bump_graph(dy, kN, s);
  hipEvent_t start, stop;
  TUTOR_CHECK(hipEventCreate(&start));
  TUTOR_CHECK(hipEventCreate(&stop));
  std::vector<double> host, eager, graph;
  for (int r = 0; r < 7; ++r) {
    TUTOR_CHECK(hipStreamSynchronize(s));
    auto a = std::chrono::steady_clock::now();
    TUTOR_CHECK(hipEventRecord(start, s));
    for (int i = 0; i < kN; ++i) bump<<<1, 1, 0, s>>>(dy);
    TUTOR_CHECK(hipEventRecord(stop, s));
    auto b = std::chrono::steady_clock::now();
    TUTOR_CHECK(hipEventSynchronize(stop));
    float ms = 0;
    TUTOR_CHECK(hipEventElapsedTime(&ms, start, stop));
    host.push_back(host_us(a, b) / kN);
    eager.push_back(1e3 * ms / kN);
    TUTOR_CHECK(hipEventRecord(start, s));
    TUTOR_CHECK(hipGraphLaunch(exec, s));
    TUTOR_CHECK(hipEventRecord(stop, s));
    TUTOR_CHECK(hipEventSynchronize(stop));
    TUTOR_CHECK(hipEventElapsedTime(&ms, start, stop));
    if (r > 0) graph.push_back(1e3 * ms / kN);  // the first launch of a graph uploads it
  }
  TUTOR_CHECK(hipGetLastError());
  record("launch_host", stats_of(host).median, copy);
  record("launch_eager", stats_of(eager).median, copy);
  record("launch_graph", stats_of(graph).median, copy);
  TUTOR_CHECK(hipGraphExecDestroy(exec));
  TUTOR_CHECK(hipEventDestroy(start));
  TUTOR_CHECK(hipEventDestroy(stop));
  TUTOR_CHECK(hipStreamDestroy(s));
  TUTOR_CHECK(hipFree(dy));
}

// Two independent kernels, each a grid of a quarter as many blocks as there are multiprocessors that
// spin for the same time: alone, one after the other on one stream, and side by side on two.
void bench_streams(const tutor::Ceiling& copy) {
  int dev = 0, sms = 0;
  TUTOR_CHECK(hipGetDevice(&dev));
  TUTOR_CHECK(hipDeviceGetAttribute(&sms, hipDeviceAttributeMultiprocessorCount, dev));
  const unsigned grid = (unsigned)std::max(1, sms / 4);
  const size_t n = (size_t)grid * kBlock;
  const long long cycles = 200000;  // ~100 us at 2 GHz
  float *x1, *y1, *x2, *y2;
  for (float** p : {&x1, &y1, &x2, &y2}) {
    TUTOR_CHECK(hipMalloc(p, n * sizeof(float)));
    TUTOR_CHECK(hipMemset(*p, 0, n * sizeof(float)));
  }
  Streams st;
  std::vector<double> one, serial, two;
  for (int r = 0; r < 12; ++r) {
    float ms = 0;
    TUTOR_CHECK(hipEventRecord(st.start, st.s1));
    spin_add<<<grid, kBlock, 0, st.s1>>>(x1, y1, n, cycles);
    TUTOR_CHECK(hipEventRecord(st.stop, st.s1));
    TUTOR_CHECK(hipEventSynchronize(st.stop));
    TUTOR_CHECK(hipEventElapsedTime(&ms, st.start, st.stop));
    if (r >= 2) one.push_back(1e3 * ms);
    for (int k = 0; k < 2; ++k) {
      two_kernels(x1, y1, x2, y2, n, cycles, grid, k == 1, st.s1, st.s2, st.start, st.stop, st.joined);
      TUTOR_CHECK(hipEventSynchronize(st.stop));
      TUTOR_CHECK(hipEventElapsedTime(&ms, st.start, st.stop));
      if (r >= 2) (k ? two : serial).push_back(1e3 * ms);
    }
  }
  TUTOR_CHECK(hipGetLastError());
  const double alone = stats_of(one).median;
  const tutor::Ceiling overlap = {"perfect overlap (one kernel alone)", alone, "us"};
  record("streams_one", alone, overlap);
  record("streams_serial", stats_of(serial).median, overlap);
  record("streams_two", stats_of(two).median, overlap);
  for (float* p : {x1, y1, x2, y2}) TUTOR_CHECK(hipFree(p));
  (void)copy;
}

int main(int argc, char** argv) {
  tutor::Args args = tutor::parse_args(argc, argv);
  std::vector<size_t> sizes = {1, 255, 257, 4097, 1000003};
  if (args.quick) sizes = {1, 257, 4097};
  for (size_t n : sizes) verify_scale(n, args.seed);
  verify_timer(args.seed);
  verify_graph(args.quick ? 10 : 1000, args.seed);
  for (size_t n : {(size_t)1, (size_t)1000, (size_t)100003}) verify_streams(n, args.seed);
  if (args.bench) {
    const tutor::Ceiling copy = tutor::copy_ceiling();
    // 2^21 floats: two 8 MiB buffers, which fit in the L2 together; 2^26 floats: 512 MiB of traffic.
    bench_scale((size_t)tutor::arg_int(args, "--small", 1 << 21), (size_t)tutor::arg_int(args, "--large", 1 << 26), copy);
    bench_launch(copy);
    bench_streams(copy);
  }
  return tutor::finish("timing");
}
