// The small kit every lab of the course includes. NVIDIA and AMD labs each include their own
// copy, and the two copies match line for line.
//
// A lab prints one JSON object per line:
//   {"event": "check",   "lab": ..., "variant": ..., "size": ..., "ok": ..., "mismatches": ..., ...}
//   {"event": "measure", "lab": ..., "variant": ..., "metric": ..., "value": ..., "unit": ...,
//    "ceiling": {"name": ..., "value": ..., "unit": ...}, "bytes": ..., "ms": ...}
// and exits non-zero if any check failed. Flags: --bench, --quick, --seed N (replay a failed run).
#pragma once
#include <hip/hip_runtime.h>

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
constexpr int kWarpSize = 64;  // vendor-specific

inline void check_call(hipError_t err, const char* call, const char* file, int line) {
  if (err == hipSuccess) return;
  std::fprintf(stderr, "error: %s returned %s (%s) at %s:%d\n", call, hipGetErrorName(err),
               hipGetErrorString(err), file, line);
  std::exit(2);
}

// Reports a failed kernel launch (bad configuration) at once, and a fault inside it at the sync.
#define TUTOR_CHECK_LAUNCH() \
  do { \
    TUTOR_CHECK(hipGetLastError()); \
    TUTOR_CHECK(hipDeviceSynchronize()); \
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
inline void poison(void* dev_ptr, size_t bytes) { TUTOR_CHECK(hipMemset(dev_ptr, 0xFF, bytes)); }

// ---------------------------------------------------------------- guard zones
// Buffers a check hands to a kernel sit inside a larger allocation whose guard zones, before and
// after the buffer, hold a pattern of their own (a NaN for floats). A kernel that writes past a
// buffer changes a guard, and the next check fails naming the buffer, the side and the index; a
// kernel that reads past an input reads a NaN. TUTOR_NO_GUARDS=1 turns them off so that
// compute-sanitizer sees the real allocation bounds.
constexpr uint32_t kGuardWord = 0x7FC05EEDu;  // a quiet NaN with a payload of its own

struct GuardedAlloc {
  char* base;
  size_t pad, count, elem;  // pad bytes before and after count elements of elem bytes
  std::string name;
};

inline std::vector<GuardedAlloc>& guarded_allocs() {
  static std::vector<GuardedAlloc> all;
  return all;
}

inline std::vector<char> guard_bytes(size_t n) {
  std::vector<char> bytes(n);
  for (size_t i = 0; i < n; ++i) bytes[i] = (char)((kGuardWord >> (8 * (i % 4))) & 0xFF);
  return bytes;
}

inline void arm_guards(const GuardedAlloc& g) {
  std::vector<char> pattern = guard_bytes(g.pad);
  TUTOR_CHECK(hipMemcpy(g.base, pattern.data(), g.pad, hipMemcpyHostToDevice));
  TUTOR_CHECK(hipMemcpy(g.base + g.pad + g.count * g.elem, pattern.data(), g.pad, hipMemcpyHostToDevice));
}

// Like hipMalloc for `count` elements of T, with guard zones; free it with guarded_free.
template <class T>
void guarded_malloc(T** ptr, size_t count, const char* name) {
  const char* off = std::getenv("TUTOR_NO_GUARDS");
  size_t bytes = count * sizeof(T);
  size_t pad = (off && off[0] == '1') ? 0 : std::min(std::max(bytes, size_t(16384)), size_t(4) << 20);
  pad = (pad + 255) / 256 * 256;  // keeps the buffer as aligned as hipMalloc's
  char* base;
  TUTOR_CHECK(hipMalloc(&base, pad + bytes + pad));
  GuardedAlloc g{base, pad, count, sizeof(T), name};
  if (pad) arm_guards(g);
  guarded_allocs().push_back(g);
  *ptr = reinterpret_cast<T*>(base + pad);
}

// Appends a plain-words report for each guard zone of `g` that a kernel changed, and re-arms it.
inline void scan_guards(const GuardedAlloc& g, std::vector<std::string>& reports) {
  if (!g.pad) return;
  bool written = false;
  std::vector<char> want = guard_bytes(g.pad), got(g.pad);
  for (int side = 0; side < 2; ++side) {
    const char* zone = side == 0 ? g.base : g.base + g.pad + g.count * g.elem;
    TUTOR_CHECK(hipMemcpy(got.data(), zone, g.pad, hipMemcpyDeviceToHost));
    long long first = 0, last = 0, changed = 0;
    for (size_t e = 0; e < g.pad / g.elem; ++e) {
      if (std::memcmp(&got[e * g.elem], &want[e * g.elem], g.elem) == 0) continue;
      long long idx = side == 0 ? (long long)e - (long long)(g.pad / g.elem) : (long long)(g.count + e);
      if (changed++ == 0) first = idx;
      last = idx;
    }
    if (!changed) continue;
    std::string where = changed == 1 ? "index " + std::to_string(first)
                                     : "indices " + std::to_string(first) + ".." + std::to_string(last);
    char text[256];
    std::string size = g.count == 1 ? "1 element, index 0"
                                    : std::to_string(g.count) + " elements, 0.." + std::to_string(g.count - 1);
    std::snprintf(text, sizeof text, "wrote %lld element%s %s of %s (%s; %s has %s)", changed,
                  changed == 1 ? "" : "s", side == 0 ? "before the start" : "past the end", g.name.c_str(),
                  where.c_str(), g.name.c_str(), size.c_str());
    reports.push_back(text);
    written = true;
  }
  if (written) arm_guards(g);
}

// Reports from buffers already freed, waiting for the next check.
inline std::vector<std::string>& pending_guard_reports() {
  static std::vector<std::string> pending;
  return pending;
}

// Frees a buffer from guarded_malloc; its guards are checked first, for the next check to report.
inline void guarded_free(void* ptr) {
  auto& all = guarded_allocs();
  for (size_t i = 0; i < all.size(); ++i) {
    if (all[i].base + all[i].pad != ptr) continue;
    scan_guards(all[i], pending_guard_reports());
    TUTOR_CHECK(hipFree(all[i].base));
    all.erase(all.begin() + (long)i);
    return;
  }
  TUTOR_CHECK(hipFree(ptr));
}

// Plain-words reports of guard elements any kernel changed since the last call.
inline std::vector<std::string> guards_written() {
  std::vector<std::string> reports;
  reports.swap(pending_guard_reports());
  for (const GuardedAlloc& g : guarded_allocs()) scan_guards(g, reports);
  return reports;
}

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

// Writes a JSON string array field: "key": ["...", ...]. Reports hold no quotes or backslashes.
inline void json_strings(const char* key, const std::vector<std::string>& items) {
  std::printf(", \"%s\": [", key);
  for (size_t i = 0; i < items.size(); ++i) std::printf("%s\"%s\"", i ? ", " : "", items[i].c_str());
  std::printf("]");
}

// Compares every element with the reference: |got - ref| <= atol + rtol * |ref|.
// NaN and Inf never pass, and a write into any guard zone since the last check fails too. A wrong
// element is counted by what it holds: the poison (never written), the guard pattern (read from
// outside an input), another NaN or Inf, or a wrong finite value. `cols` > 0 reports the first wrong
// element of a 2-D output as [row, column]. Prints one check line and returns whether it passed.
inline bool check_close(const char* lab, const char* variant, const std::string& size,
                        const float* got, const float* ref, size_t n, uint64_t seed,
                        double atol = 0.0, double rtol = 0.0, size_t cols = 0) {
  size_t bad = 0, first_bad = n, nan = 0, never_written = 0, from_guard = 0, nan_or_inf = 0;
  double max_err = -1.0;  // over the finite elements; -1: none
  for (size_t i = 0; i < n; ++i) {
    double g = got[i], r = ref[i], err = std::fabs(g - r);
    bool ok = std::isfinite(g) && err <= atol + rtol * std::fabs(r);
    if (std::isnan(g)) ++nan;
    if (std::isfinite(err)) max_err = std::max(max_err, err);
    if (ok) continue;
    if (bad++ == 0) first_bad = i;
    uint32_t bits;
    std::memcpy(&bits, &got[i], sizeof bits);
    if (bits == 0xFFFFFFFFu) ++never_written;
    else if (bits == kGuardWord) ++from_guard;
    else if (!std::isfinite(g)) ++nan_or_inf;
  }
  std::vector<std::string> written = guards_written();
  bool ok = bad == 0 && written.empty();
  json_begin("check", lab, variant);
  std::printf(", \"size\": \"%s\", \"ok\": %s, \"mismatches\": %zu, \"numel\": %zu, \"nan\": %zu", size.c_str(),
              ok ? "true" : "false", bad, n, nan);
  if (max_err >= 0) std::printf(", \"max_abs_err\": %.3g", max_err);
  else std::printf(", \"max_abs_err\": null");
  if (bad) {
    std::printf(", \"never_written\": %zu, \"from_guard\": %zu, \"nan_or_inf\": %zu, \"wrong_value\": %zu",
                never_written, from_guard, nan_or_inf, bad - never_written - from_guard - nan_or_inf);
    if (cols) std::printf(", \"first_bad\": [%zu, %zu]", first_bad / cols, first_bad % cols);
    else std::printf(", \"first_bad\": %zu", first_bad);
    json_number("got", got[first_bad]);
    json_number("want", ref[first_bad]);
  }
  if (!written.empty()) json_strings("guard_written", written);
  if (!ok) {
    const char* cause = !written.empty() ? "guard_written"
                        : never_written  ? "never_written"
                        : from_guard     ? "from_guard"
                        : nan_or_inf     ? "nan_or_inf"
                                         : "wrong_value";
    std::printf(", \"cause\": \"%s\"", cause);
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
  std::vector<std::string> written = guards_written();  // a stray write after the last check
  if (!written.empty()) {
    json_begin("check", lab, "after the last check");
    std::printf(", \"size\": \"\", \"ok\": false, \"cause\": \"guard_written\"");
    json_strings("guard_written", written);
    json_end();
    ++failures();
  }
  std::printf("{\"event\": \"summary\", \"lab\": \"%s\", \"failures\": %d}\n", lab, failures());
  if (failures()) std::fprintf(stderr, "%s: %d check(s) FAILED\n", lab, failures());
  return failures() ? 1 : 0;
}

// ---------------------------------------------------------------- timing
// One GPU thread spins for `cycles` clock ticks: the stream stays busy, the caches untouched.
__global__ void hold_kernel(long long cycles) {
  const long long t0 = clock64();
  while (clock64() - t0 < cycles) {
  }
}

// Holds the stream for about `ms` milliseconds (at clocks up to 2 GHz; longer at lower clocks).
inline void hold_gpu(double ms) { hold_kernel<<<1, 1>>>(static_cast<long long>(ms * 2e6)); }

// Overwrites the whole L2 (a zeroed buffer twice its size), so that the next kernel finds none of
// its own data there.
inline void flush_l2() {
  static void* buffer = nullptr;
  static size_t bytes = 0;
  if (buffer == nullptr) {
    int device = 0, l2 = 0;
    TUTOR_CHECK(hipGetDevice(&device));
    TUTOR_CHECK(hipDeviceGetAttribute(&l2, hipDeviceAttributeL2CacheSize, device));
    bytes = 2 * static_cast<size_t>(l2 > 0 ? l2 : 128 << 20);
    TUTOR_CHECK(hipMalloc(&buffer, bytes));
  }
  TUTOR_CHECK(hipMemsetAsync(buffer, 0, bytes));
}

// How a run is timed. `flush`: the L2 is overwritten before every run, outside its window, so each
// run starts cold as the first touch of data in a program does (off where the warm cache is the
// point). `queue_ahead`: a spinning kernel holds the stream while the host enqueues every run, so no
// window holds the host's launch time (off where that time is what is measured, as in eager steps).
struct Timing {
  int warmup = 3;
  int reps = 20;
  bool flush = true;
  bool queue_ahead = true;
};

// Milliseconds of each of `reps` runs of `launch`, sorted; each run between two device events of
// its own, all of them enqueued before one wait. `launch` only enqueues work on the default stream.
template <class F>
std::vector<float> times_ms(F&& launch, Timing how = {}) {
  double host_ms = 1e9;  // the host's quickest enqueue of one run, from the warm-up
  for (int i = 0; i < how.warmup; ++i) {
    if (how.flush) flush_l2();
    const auto t0 = std::chrono::steady_clock::now();
    launch();
    host_ms = std::min(host_ms, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  TUTOR_CHECK(hipGetLastError());
  TUTOR_CHECK(hipDeviceSynchronize());
  std::vector<hipEvent_t> start(how.reps), stop(how.reps);
  for (int i = 0; i < how.reps; ++i) {
    TUTOR_CHECK(hipEventCreate(&start[i]));
    TUTOR_CHECK(hipEventCreate(&stop[i]));
  }
  // Twice the host's estimated enqueue time of every run (events and flush included), capped.
  if (how.queue_ahead) hold_gpu(std::min(100.0, 0.5 + 2.0 * how.reps * (std::min(host_ms, 5.0) + 0.02)));
  for (int i = 0; i < how.reps; ++i) {
    if (how.flush) flush_l2();
    TUTOR_CHECK(hipEventRecord(start[i]));
    launch();
    TUTOR_CHECK(hipEventRecord(stop[i]));
  }
  TUTOR_CHECK(hipGetLastError());
  TUTOR_CHECK(hipDeviceSynchronize());
  std::vector<float> times(how.reps);
  for (int i = 0; i < how.reps; ++i) {
    TUTOR_CHECK(hipEventElapsedTime(&times[i], start[i], stop[i]));
    TUTOR_CHECK(hipEventDestroy(start[i]));
    TUTOR_CHECK(hipEventDestroy(stop[i]));
  }
  std::sort(times.begin(), times.end());
  return times;
}

// The median of a sorted list: the mean of the middle two for an even count (as Python's statistics).
inline float median_of(const std::vector<float>& sorted) {
  const size_t n = sorted.size();
  return n % 2 ? sorted[n / 2] : 0.5f * (sorted[n / 2 - 1] + sorted[n / 2]);
}

// The median milliseconds of `launch` (see times_ms): the kit's timer.
template <class F>
float timed_ms(F&& launch, Timing how = {}) {
  return median_of(times_ms(launch, how));
}

// The kit's first timer, kept unchanged for the labs measured with it (new labs use timed_ms):
// runs `launch` `warmup` times untimed, then `reps` times, each between two device events and waited
// for, no flush; returns the median in milliseconds. `launch` only enqueues work on the default stream.
template <class F>
float median_ms(F&& launch, int warmup = 3, int reps = 20) {
  hipEvent_t start, stop;
  TUTOR_CHECK(hipEventCreate(&start));
  TUTOR_CHECK(hipEventCreate(&stop));
  for (int i = 0; i < warmup; ++i) launch();
  TUTOR_CHECK(hipGetLastError());
  TUTOR_CHECK(hipDeviceSynchronize());
  std::vector<float> times(reps);
  for (int i = 0; i < reps; ++i) {
    TUTOR_CHECK(hipEventRecord(start));
    launch();
    TUTOR_CHECK(hipEventRecord(stop));
    TUTOR_CHECK(hipEventSynchronize(stop));
    TUTOR_CHECK(hipEventElapsedTime(&times[i], start, stop));
  }
  TUTOR_CHECK(hipGetLastError());
  TUTOR_CHECK(hipEventDestroy(start));
  TUTOR_CHECK(hipEventDestroy(stop));
  std::sort(times.begin(), times.end());
  return times[reps / 2];
}

// GB/s for `bytes` moved in `ms` milliseconds (1 GB = 1e9 bytes).
inline double gbps(double bytes, double ms) { return bytes / (ms * 1e6); }

// The bandwidth ceiling: a device-to-device copy of `bytes`, counted as bytes read + written.
inline Ceiling copy_ceiling(size_t bytes = size_t(1) << 30) {
  void *src, *dst;
  TUTOR_CHECK(hipMalloc(&src, bytes));
  TUTOR_CHECK(hipMalloc(&dst, bytes));
  TUTOR_CHECK(hipMemset(src, 0, bytes));
  auto copy = [&] { TUTOR_CHECK(hipMemcpyAsync(dst, src, bytes, hipMemcpyDeviceToDevice)); };
  float ms = median_ms(copy);
  TUTOR_CHECK(hipFree(src));
  TUTOR_CHECK(hipFree(dst));
  return {"device-to-device copy", gbps(2.0 * bytes, ms), "GB/s"};
}

}  // namespace tutor
