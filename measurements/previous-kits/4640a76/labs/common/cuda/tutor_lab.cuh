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
  TUTOR_CHECK(cudaMemcpy(g.base, pattern.data(), g.pad, cudaMemcpyHostToDevice));
  TUTOR_CHECK(cudaMemcpy(g.base + g.pad + g.count * g.elem, pattern.data(), g.pad, cudaMemcpyHostToDevice));
}

// Like cudaMalloc for `count` elements of T, with guard zones; free it with guarded_free.
template <class T>
void guarded_malloc(T** ptr, size_t count, const char* name) {
  const char* off = std::getenv("TUTOR_NO_GUARDS");
  size_t bytes = count * sizeof(T);
  size_t pad = (off && off[0] == '1') ? 0 : std::min(std::max(bytes, size_t(16384)), size_t(4) << 20);
  pad = (pad + 255) / 256 * 256;  // keeps the buffer as aligned as cudaMalloc's
  char* base;
  TUTOR_CHECK(cudaMalloc(&base, pad + bytes + pad));
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
    TUTOR_CHECK(cudaMemcpy(got.data(), zone, g.pad, cudaMemcpyDeviceToHost));
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
    TUTOR_CHECK(cudaFree(all[i].base));
    all.erase(all.begin() + (long)i);
    return;
  }
  TUTOR_CHECK(cudaFree(ptr));
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
