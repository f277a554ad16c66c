// The small kit every lab of the course includes. NVIDIA and AMD labs each include their own
// copy, and the two copies match line for line.
//
// A lab prints one JSON object per line:
//   {"event": "check",   "lab": ..., "variant": ..., "size": ..., "ok": ..., "mismatches": ..., ...}
//   {"event": "measure", "lab": ..., "variant": ..., "metric": ..., "value": ..., "unit": ...,
//    "ceiling": {"name": ..., "value": ..., "unit": ...}, "bytes": ..., "ms": ...}
// and exits non-zero if any check failed. Flags: --bench, --quick, --seed N (replay a failed run).
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

// Every runtime call goes through this: on failure it names the call, the file and the line.
#define TUTOR_CHECK(call) ::tutor::check_call((call), #call, __FILE__, __LINE__)

namespace tutor {

// Lanes that execute in lockstep: a warp of 32 on NVIDIA, a wavefront of 64 on AMD CDNA.
constexpr int kWarpSize = 32;  // vendor-specific

inline void check_call(cudaError_t err, const char* call, const char* file, int line) {
  if (err == cudaSuccess) return;
  std::fprintf(stderr, "error: %s returned %s (%s) at %s:%d\n", call, cudaGetErrorName(err),
               cudaGetErrorString(err), file, line);
  std::exit(2);
}

// Reports a failed kernel launch (bad configuration) at once, and a fault inside it at the sync.
#define TUTOR_CHECK_LAUNCH() \
  do { \
    TUTOR_CHECK(cudaGetLastError()); \
    TUTOR_CHECK(cudaDeviceSynchronize()); \
  } while (0)

// ---------------------------------------------------------------- arguments and seed
struct Args {
  bool bench = false;   // after the checks, time every variant
  bool quick = false;   // smaller sizes
  uint64_t seed = 0;    // fresh each run unless --seed is given
  std::vector<std::string> rest;  // anything else, for the lab to read (e.g. --n 4096)
};

inline uint64_t fresh_seed() {
  uint64_t s = 0;
  if (FILE* f = std::fopen("/dev/urandom", "rb")) {
    if (std::fread(&s, sizeof s, 1, f) != 1) s = 0;
    std::fclose(f);
  }
  if (s == 0) s = (uint64_t)std::chrono::steady_clock::now().time_since_epoch().count();
  return s % 1000000007ull;  // short enough to retype
}

inline Args parse_args(int argc, char** argv) {
  Args a;
  a.seed = fresh_seed();
  for (int i = 1; i < argc; ++i) {
    std::string s = argv[i];
    if (s == "--bench") a.bench = true;
    else if (s == "--quick") a.quick = true;
    else if (s == "--seed" && i + 1 < argc) a.seed = std::strtoull(argv[++i], nullptr, 10);
    else a.rest.push_back(s);
  }
  return a;
}

// The value after `--name` among the leftover arguments, or `fallback`.
inline long long arg_int(const Args& a, const char* name, long long fallback) {
  for (size_t i = 0; i + 1 < a.rest.size(); ++i)
    if (a.rest[i] == name) return std::atoll(a.rest[i + 1].c_str());
  return fallback;
}

// ---------------------------------------------------------------- inputs and outputs
// Uniform random floats in [lo, hi). Each call draws a different stream from the run's seed.
inline void fill_random(std::vector<float>& v, uint64_t seed, float lo = -1.0f, float hi = 1.0f) {
  static uint64_t stream = 0;
  std::mt19937_64 gen(seed * 1000003ull + stream++);
  std::uniform_real_distribution<float> dist(lo, hi);
  for (float& x : v) x = dist(gen);
}

// Fills a device buffer with 0xFF bytes: every float becomes NaN, so an element the kernel
// forgot to write can never pass the check by luck.
inline void poison(void* dev_ptr, size_t bytes) { TUTOR_CHECK(cudaMemset(dev_ptr, 0xFF, bytes)); }

// ---------------------------------------------------------------- JSON lines
// Names in this kit are plain identifiers, so strings need no escaping.
inline void json_begin(const char* event, const char* lab, const char* variant) {
  std::printf("{\"event\": \"%s\", \"lab\": \"%s\", \"variant\": \"%s\"", event, lab, variant);
}
inline void json_end() {
  std::printf("}\n");
  std::fflush(stdout);
}

// A number field; NaN and Inf are not JSON numbers, so they are written as strings.
inline void json_number(const char* key, double x) {
  if (std::isfinite(x)) std::printf(", \"%s\": %.9g", key, x);
  else std::printf(", \"%s\": \"%s\"", key, std::isnan(x) ? "nan" : x > 0 ? "inf" : "-inf");
}

inline int& failures() {
  static int n = 0;
  return n;
}

// Compares every element with the reference: |got - ref| <= atol + rtol * |ref|.
// NaN and Inf never pass. Prints one check line and returns whether it passed.
inline bool check_close(const char* lab, const char* variant, const std::string& size,
                        const float* got, const float* ref, size_t n, uint64_t seed,
                        double atol = 0.0, double rtol = 0.0) {
  size_t bad = 0, first_bad = n;
  double max_err = 0.0;
  for (size_t i = 0; i < n; ++i) {
    double g = got[i], r = ref[i], err = std::fabs(g - r);
    bool ok = std::isfinite(g) && err <= atol + rtol * std::fabs(r);
    if (!ok && bad++ == 0) first_bad = i;
    if (std::isfinite(err)) max_err = std::max(max_err, err);
  }
  bool ok = bad == 0;
  json_begin("check", lab, variant);
  std::printf(", \"size\": \"%s\", \"ok\": %s, \"mismatches\": %zu, \"max_abs_err\": %.3g",
              size.c_str(), ok ? "true" : "false", bad, max_err);
  if (!ok) {
    std::printf(", \"first_bad\": %zu", first_bad);
    json_number("got", got[first_bad]);
    json_number("want", ref[first_bad]);
  }
  std::printf(", \"seed\": %llu", (unsigned long long)seed);
  json_end();
  if (!ok) ++failures();
  return ok;
}

struct Ceiling {
  const char* name;
  double value;
  const char* unit;
};

inline void measure(const char* lab, const char* variant, const char* metric, double value,
                    const char* unit, const Ceiling& c, double bytes = 0, double ms = 0) {
  json_begin("measure", lab, variant);
  std::printf(", \"metric\": \"%s\", \"value\": %.6g, \"unit\": \"%s\"", metric, value, unit);
  std::printf(", \"ceiling\": {\"name\": \"%s\", \"value\": %.6g, \"unit\": \"%s\"}", c.name,
              c.value, c.unit);
  if (bytes > 0) std::printf(", \"bytes\": %.0f", bytes);
  if (ms > 0) std::printf(", \"ms\": %.6g", ms);
  json_end();
}

// Ends the program: exit status 1 if any check failed.
inline int finish(const char* lab) {
  std::printf("{\"event\": \"summary\", \"lab\": \"%s\", \"failures\": %d}\n", lab, failures());
  if (failures()) std::fprintf(stderr, "%s: %d check(s) FAILED\n", lab, failures());
  return failures() ? 1 : 0;
}

// ---------------------------------------------------------------- timing
// Runs `launch` `warmup` times untimed, then `reps` times, each between two device events;
// returns the median in milliseconds. `launch` only enqueues work on the default stream.
template <class F>
float median_ms(F&& launch, int warmup = 3, int reps = 20) {
  cudaEvent_t start, stop;
  TUTOR_CHECK(cudaEventCreate(&start));
  TUTOR_CHECK(cudaEventCreate(&stop));
  for (int i = 0; i < warmup; ++i) launch();
  TUTOR_CHECK(cudaGetLastError());
  TUTOR_CHECK(cudaDeviceSynchronize());
  std::vector<float> times(reps);
  for (int i = 0; i < reps; ++i) {
    TUTOR_CHECK(cudaEventRecord(start));
    launch();
    TUTOR_CHECK(cudaEventRecord(stop));
    TUTOR_CHECK(cudaEventSynchronize(stop));
    TUTOR_CHECK(cudaEventElapsedTime(&times[i], start, stop));
  }
  TUTOR_CHECK(cudaGetLastError());
  TUTOR_CHECK(cudaEventDestroy(start));
  TUTOR_CHECK(cudaEventDestroy(stop));
  std::sort(times.begin(), times.end());
  return times[reps / 2];
}

// GB/s for `bytes` moved in `ms` milliseconds (1 GB = 1e9 bytes).
inline double gbps(double bytes, double ms) { return bytes / (ms * 1e6); }

// The bandwidth ceiling: a device-to-device copy of `bytes`, counted as bytes read + written.
inline Ceiling copy_ceiling(size_t bytes = size_t(1) << 30) {
  void *src, *dst;
  TUTOR_CHECK(cudaMalloc(&src, bytes));
  TUTOR_CHECK(cudaMalloc(&dst, bytes));
  TUTOR_CHECK(cudaMemset(src, 0, bytes));
  auto copy = [&] { TUTOR_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice)); };
  float ms = median_ms(copy);
  TUTOR_CHECK(cudaFree(src));
  TUTOR_CHECK(cudaFree(dst));
  return {"device-to-device copy", gbps(2.0 * bytes, ms), "GB/s"};
}

}  // namespace tutor
