// A05 scan: the inclusive prefix sum out[i] = in[0] + ... + in[i] of n float32 values, two ways:
// reduce-then-scan (three passes; in is read twice: 3n bytes) and a single-pass scan with
// decoupled look-back (Merrill and Garland, 2016), which moves the minimum 2n.
//   build: hipcc -O3 -std=c++17 --offload-arch=gfx942 -I labs/common/hip labs/A05/hip/scan.hip -o scan  // vendor-specific
//   run:   ./scan            checks both variants on odd sizes (exact on integers, bounded on floats)
//          ./scan --bench    GB/s of each on 2^28 floats (bytes read + written once), beside the copy
#include "tutor_lab.hip.h"  // vendor-specific

constexpr int kThreads = 256;                          // threads per block, one block per tile
constexpr int kWarps = kThreads / tutor::kWarpSize;    // 8 warps (NVIDIA) or 4 wavefronts (AMD)
constexpr int kChunks = 4;                             // float4s per thread
constexpr int kChunk = kThreads * 4;                   // 1,024 elements: one float4 per thread
constexpr int kTile = kChunk * kChunks;                // 4,096 elements per tile

// ---------------------------------------------------------------- lane operations
using lane_mask = unsigned long long;  // vendor-specific
__device__ float shfl_up(float v, int d) { return __shfl_up(v, d); }  // vendor-specific
__device__ float shfl_xor(float v, int d) { return __shfl_xor(v, d); }  // vendor-specific
__device__ lane_mask lane_ballot(bool p) { return __ballot(p); }  // vendor-specific
__device__ bool lane_any(bool p) { return __any(p); }  // vendor-specific
__device__ int lowest_lane(lane_mask m) { return __ffsll(m) - 1; }  // vendor-specific
// A pause of about 256 ns (AMD: 8 x 64 cycles) between two polls of the look-back window.
__device__ void back_off() { __builtin_amdgcn_s_sleep(8); }  // vendor-specific

// Every lane gets the sum of all lanes (a butterfly: log2(lanes) steps).
__device__ float warp_allsum(float v) {
  for (int d = tutor::kWarpSize / 2; d > 0; d /= 2) v += shfl_xor(v, d);
  return v;
}

// ---------------------------------------------------------------- one tile in registers
// Chunk k of a tile holds elements [k * 1024, (k + 1) * 1024); thread t holds its elements
// 4t .. 4t + 3 as one float4, so every load and store of a warp covers whole 128-byte lines.
__device__ void load_tile(const float* in, size_t base, size_t n, float4 v[kChunks]) {
#pragma unroll
  for (int k = 0; k < kChunks; ++k) {
    const size_t i = base + (size_t)k * kChunk + 4 * threadIdx.x;
    if (i + 3 < n) {
      v[k] = *reinterpret_cast<const float4*>(in + i);  // base is a multiple of 4: 16-byte aligned
    } else {
      v[k].x = i + 0 < n ? in[i + 0] : 0.0f;
      v[k].y = i + 1 < n ? in[i + 1] : 0.0f;
      v[k].z = i + 2 < n ? in[i + 2] : 0.0f;
      v[k].w = i + 3 < n ? in[i + 3] : 0.0f;
    }
  }
}

__device__ void store_tile(float* out, size_t base, size_t n, const float4 v[kChunks], float carry) {
#pragma unroll
  for (int k = 0; k < kChunks; ++k) {
    const size_t i = base + (size_t)k * kChunk + 4 * threadIdx.x;
    const float4 w = make_float4(v[k].x + carry, v[k].y + carry, v[k].z + carry, v[k].w + carry);
    if (i + 3 < n) {
      *reinterpret_cast<float4*>(out + i) = w;
    } else {
      if (i + 0 < n) out[i + 0] = w.x;
      if (i + 1 < n) out[i + 1] = w.y;
      if (i + 2 < n) out[i + 2] = w.z;
      if (i + 3 < n) out[i + 3] = w.w;
    }
  }
}

// Turns the tile in v into its own inclusive scan (as if the tile started the array) and returns
// the tile's total to every thread. Three levels: the 4 elements of a thread, the lanes of a warp
// (a shuffle scan, log2(lanes) steps), the warps of the block (their totals through shared memory).
__device__ float scan_tile(float4 v[kChunks]) {
  __shared__ float warp_total[kChunks][kWarps];
  const int lane = threadIdx.x % tutor::kWarpSize, warp = threadIdx.x / tutor::kWarpSize;
  float s[kChunks];
#pragma unroll
  for (int k = 0; k < kChunks; ++k) {
    v[k].y += v[k].x;
    v[k].z += v[k].y;
    v[k].w += v[k].z;
    s[k] = v[k].w;  // the thread's total for chunk k
  }
  for (int d = 1; d < tutor::kWarpSize; d *= 2) {
#pragma unroll
    for (int k = 0; k < kChunks; ++k) {
      float up = shfl_up(s[k], d);
      if (lane >= d) s[k] += up;  // s[k]: sum of this lane's totals and those of every lane below
    }
  }
  float before[kChunks];  // the sum of the lanes below this one: the exclusive scan
#pragma unroll
  for (int k = 0; k < kChunks; ++k) {
    before[k] = shfl_up(s[k], 1);
    if (lane == 0) before[k] = 0.0f;
    if (lane == tutor::kWarpSize - 1) warp_total[k][warp] = s[k];
  }
  __syncthreads();
  float running = 0.0f;  // everything in the tile before chunk k, then before this warp
#pragma unroll
  for (int k = 0; k < kChunks; ++k) {
    float offset = running;
    for (int w = 0; w < kWarps; ++w) {
      if (w == warp) offset = running;
      running += warp_total[k][w];
    }
    offset += before[k];
    v[k].x += offset;
    v[k].y += offset;
    v[k].z += offset;
    v[k].w += offset;
  }
  __syncthreads();  // warp_total may be reused by the next call
  return running;
}

// ---------------------------------------------------------------- reduce-then-scan
// Pass 1: the total of each tile. Pass 2: one block scans those totals in place. Pass 3: each tile
// scans itself again and adds the total of every tile before it. in is read twice: 3n bytes.
__global__ void __launch_bounds__(kThreads) tile_totals(const float* in, float* totals, size_t n) {
  float4 v[kChunks];
  load_tile(in, (size_t)blockIdx.x * kTile, n, v);
  float t = 0.0f;
#pragma unroll
  for (int k = 0; k < kChunks; ++k) t += (v[k].x + v[k].y) + (v[k].z + v[k].w);
  __shared__ float warp_part[kWarps];
  t = warp_allsum(t);
  if (threadIdx.x % tutor::kWarpSize == 0) warp_part[threadIdx.x / tutor::kWarpSize] = t;
  __syncthreads();
  if (threadIdx.x == 0) {
    float sum = 0.0f;
    for (int w = 0; w < kWarps; ++w) sum += warp_part[w];
    totals[blockIdx.x] = sum;
  }
}

__global__ void __launch_bounds__(kThreads) scan_totals(float* totals, size_t count) {
  float carry = 0.0f;
  for (size_t base = 0; base < count; base += kTile) {
    float4 v[kChunks];
    load_tile(totals, base, count, v);
    float t = scan_tile(v);
    store_tile(totals, base, count, v, carry);
    carry += t;
  }
}

__global__ void __launch_bounds__(kThreads) scan_add(const float* in, float* out, size_t n, const float* totals) {
  float4 v[kChunks];
  const size_t base = (size_t)blockIdx.x * kTile;
  load_tile(in, base, n, v);
  scan_tile(v);
  store_tile(out, base, n, v, blockIdx.x ? totals[blockIdx.x - 1] : 0.0f);
}

// ---------------------------------------------------------------- decoupled look-back
// Each tile publishes one 64-bit word: its status in the high half, a float in the low half.
//   kInvalid:   nothing yet;  kAggregate: the tile's own total;  kPrefix: the total of tiles 0..t.
// Status and value travel in one 64-bit store and one 64-bit load, so no reader can see a status
// without its value. volatile makes every spin iteration a fresh load from L2 (not a register, not
// the SM's non-coherent L1). With status and value in separate words, the writer would need a
// __threadfence() between the two stores and the reader one between the two loads.
constexpr unsigned long long kInvalid = 0, kAggregate = 1, kPrefix = 2;

__device__ unsigned long long pack(unsigned long long status, float value) {
  return status << 32 | __float_as_uint(value);
}
__device__ void publish(unsigned long long* word, unsigned long long status, float value) {
  *reinterpret_cast<volatile unsigned long long*>(word) = pack(status, value);
}

// Warp 0 finds the sum of every tile before `tile` (lane l reads tile - 1 - l, a window of one word
// per lane), publishes the tile's inclusive prefix, and returns that sum to every thread of the
// block. Every thread must call it. kBackOff: a lane whose window still holds a word with nothing
// in it sleeps before it reads again, as CUB's look-back does, so the polls of the waiting warps
// leave the L2 to the loads and stores of the tiles that are still moving data.
template <bool kBackOff>
__device__ float look_back(unsigned long long* word, unsigned long long tile, float total) {
  __shared__ float s_before;
  if (threadIdx.x < tutor::kWarpSize) {
    const int lane = threadIdx.x;
    float before = 0.0f;
    if (tile == 0) {
      if (lane == 0) publish(&word[0], kPrefix, total);
    } else {
      if (lane == 0) publish(&word[tile], kAggregate, total);  // lets successors start adding early
      long long last = (long long)tile - 1;                    // lane l reads tile last - l
      while (true) {
        const long long t = last - lane;
        unsigned long long w = pack(kPrefix, 0.0f);              // before tile 0: a prefix of 0
        while (true) {                                           // wait for the whole window
          if (t >= 0) w = *reinterpret_cast<volatile unsigned long long*>(&word[t]);
          if (!lane_any((w >> 32) == kInvalid)) break;
          if (kBackOff) back_off();
        }
        const lane_mask prefix = lane_ballot((w >> 32) == kPrefix);
        const int stop = prefix ? lowest_lane(prefix) : tutor::kWarpSize - 1;  // nearest prefix
        before += warp_allsum(lane <= stop ? __uint_as_float((unsigned)w) : 0.0f);
        if (prefix) break;
        last -= tutor::kWarpSize;  // all aggregates: slide the window back
      }
      if (lane == 0) publish(&word[tile], kPrefix, before + total);
    }
    if (lane == 0) s_before = before;
  }
  __syncthreads();
  return s_before;  // rewritten only after the next tile's scan_tile, whose barriers every thread passes
}

// state[0] counts the tiles handed out; state[1 + t] is tile t's word. All zero before the launch.
// The tile a block scans is the order it arrived in (an atomic counter), not blockIdx.x: every tile
// it waits for was handed to a block that is already running, so the wait always ends. With
// blockIdx.x, resident blocks could all be spinning on a tile whose block has not been scheduled.
// One block per tile: it takes its ticket, loads, scans, looks back, stores, and ends.
template <bool kBackOff>
__global__ void __launch_bounds__(kThreads) scan_lookback(const float* in, float* out, size_t n,
                                                          unsigned long long* state) {
  __shared__ unsigned long long s_tile;
  if (threadIdx.x == 0) s_tile = atomicAdd(&state[0], 1ull);
  __syncthreads();
  const unsigned long long tile = s_tile;
  float4 v[kChunks];
  const size_t base = tile * kTile;
  load_tile(in, base, n, v);
  const float total = scan_tile(v);
  const float before = look_back<kBackOff>(state + 1, tile, total);
  store_tile(out, base, n, v, before);
}

// Persistent: as many blocks as fit on the GPU at once, each taking tickets until they run out. A
// block takes the ticket of its next tile and issues that tile's loads before it looks back for the
// current one, so its loads stay in flight while warp 0 waits, and no block's slot on the SM sits
// idle between the end of one tile and the start of the next. Every block takes one ticket past
// the last tile (the one that ends its loop): state[0] ends at tiles + blocks. The wait still always
// ends: the lowest unfinished tile belongs to a running block whose earlier tiles are all done.
template <bool kBackOff>
__global__ void __launch_bounds__(kThreads) scan_lookback_persistent(const float* in, float* out, size_t n,
                                                                     unsigned long long* state) {
  __shared__ unsigned long long s_tile;
  const unsigned long long count = (n + kTile - 1) / kTile;
  if (threadIdx.x == 0) s_tile = atomicAdd(&state[0], 1ull);
  __syncthreads();
  unsigned long long tile = s_tile;
  float4 v[kChunks], next[kChunks];
  if (tile < count) load_tile(in, tile * kTile, n, v);
  while (tile < count) {
    __syncthreads();                                               // every thread has read s_tile
    if (threadIdx.x == 0) s_tile = atomicAdd(&state[0], 1ull);     // the next tile's ticket
    const float total = scan_tile(v);                              // its barriers publish s_tile
    const unsigned long long following = s_tile;
    if (following < count) load_tile(in, following * kTile, n, next);  // in flight during the look-back
    const float before = look_back<kBackOff>(state + 1, tile, total);
    store_tile(out, tile * kTile, n, v, before);
#pragma unroll
    for (int k = 0; k < kChunks; ++k) v[k] = next[k];
    tile = following;
  }
}

// ---------------------------------------------------------------- driver
const char* const kVariants[] = {"reduce_then_scan", "lookback", "lookback_backoff", "lookback_persistent",
                                 "lookback_persistent_backoff"};

unsigned tiles(size_t n) { return (unsigned)((n + kTile - 1) / kTile); }
bool persistent(const std::string& v) { return v.rfind("lookback_persistent", 0) == 0; }

// The persistent grid: as many blocks as the SMs hold at once, fewer if n has fewer tiles.
template <bool kBackOff>
unsigned persistent_blocks(size_t n) {
  static unsigned resident = 0;
  if (!resident) {
    int sms = 0, per_sm = 0;
    TUTOR_CHECK(hipDeviceGetAttribute(&sms, hipDeviceAttributeMultiprocessorCount, 0));
    TUTOR_CHECK(hipOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, scan_lookback_persistent<kBackOff>,
                                                               kThreads, 0));
    resident = (unsigned)(sms * std::max(1, per_sm));
  }
  return std::max(1u, std::min(resident, tiles(n)));
}

// How many blocks a variant launches (reduce_then_scan: its scan_add pass).
unsigned grid(const std::string& v, size_t n) {
  if (v == "lookback_persistent") return persistent_blocks<false>(n);
  if (v == "lookback_persistent_backoff") return persistent_blocks<true>(n);
  return tiles(n);
}

// totals: one float per tile; state: one word per tile plus the counter.
void launch(const std::string& v, const float* in, float* out, size_t n, float* totals,
            unsigned long long* state) {
  if (v == "reduce_then_scan") {
    tile_totals<<<tiles(n), kThreads>>>(in, totals, n);
    scan_totals<<<1, kThreads>>>(totals, tiles(n));
    scan_add<<<tiles(n), kThreads>>>(in, out, n, totals);
    return;
  }
  TUTOR_CHECK(hipMemsetAsync(state, 0, (tiles(n) + 1) * sizeof(unsigned long long)));
  if (v == "lookback")
    scan_lookback<false><<<tiles(n), kThreads>>>(in, out, n, state);
  else if (v == "lookback_backoff")
    scan_lookback<true><<<tiles(n), kThreads>>>(in, out, n, state);
  else if (v == "lookback_persistent")
    scan_lookback_persistent<false><<<grid(v, n), kThreads>>>(in, out, n, state);
  else
    scan_lookback_persistent<true><<<grid(v, n), kThreads>>>(in, out, n, state);
}

// Integers 0..7 stored as floats, each kept with probability min(1, 2^21 / n), the others 0: every
// partial sum is an integer below 2^24 (checked), so any order of addition is exact. Up to 2^21
// elements every value is kept.
void fill_exact(std::vector<float>& v, uint64_t seed) {
  tutor::fill_random(v, seed, 0.0f, 8.0f);
  const double keep = std::min(1.0, std::ldexp(1.0, 21) / (double)v.size());
  uint64_t h = seed * 0x9E3779B97F4A7C15ull + 1;
  double total = 0.0;
  for (float& x : v) {
    h ^= h << 13, h ^= h >> 7, h ^= h << 17;  // xorshift64: which elements are kept
    x = (double)(h >> 11) * 0x1.0p-53 < keep ? std::floor(x) : 0.0f;
    total += x;
  }
  if (total >= 0x1.0p24) {
    std::fprintf(stderr, "scan: the exact input sums to %.0f, not below 2^24\n", total);
    std::exit(2);
  }
}

// The ticket counter after a look-back launch: one ticket per tile, plus one per block that found
// the tickets used up (persistent). A count that ends elsewhere means a tile was taken twice, or
// skipped, or not by ticket. Checked on the host as a one-element check.
void check_tickets(const std::string& v, const std::string& label, const std::string& size, size_t n,
                   const unsigned long long* dstate, uint64_t seed) {
  unsigned long long count;
  TUTOR_CHECK(hipMemcpy(&count, dstate, sizeof count, hipMemcpyDeviceToHost));
  const float got = (float)count, want = (float)(tiles(n) + (persistent(v) ? grid(v, n) : 0));
  tutor::check_close("scan", (label + "_tickets").c_str(), size, &got, &want, 1, seed, 0, 0);
}

// The inclusive scan of in, in float64, rounded to float32.
void reference(const std::vector<float>& in, std::vector<float>& ref) {
  double run = 0.0;
  for (size_t i = 0; i < in.size(); ++i) ref[i] = (float)(run += in[i]);
}

// Every variant on fresh inputs, output poisoned first. Two checks per size:
//  - integers 0..7 stored as floats (fill_exact): every partial sum is an integer below 2^24, so the
//    scan is exact in any order of addition and must equal the reference bit for bit;
//  - uniform floats in [0, 1): out[i] sums i + 1 nonnegative terms, so whatever the order
//    |out[i] - exact[i]| <= gamma(i) exact[i], gamma(k) = k u / (1 - k u), u = 2^-24: a relative
//    tolerance gamma(n - 1), plus u for rounding the float64 reference to float32. The bound means
//    something only while (n - 1) u is well below 1: above 2^23 elements, the exact check alone.
// After each look-back variant, its ticket counter (check_tickets).
void verify(size_t n, uint64_t seed) {
  std::vector<float> in(n), out(n), ref(n);
  float *din, *dout, *dtotals;
  unsigned long long* dstate;
  tutor::guarded_malloc(&din, n, "in");
  tutor::guarded_malloc(&dout, n, "out");
  tutor::guarded_malloc(&dtotals, tiles(n), "totals");
  tutor::guarded_malloc(&dstate, tiles(n) + 1, "state");
  const std::string size = std::to_string(n);
  const double u = std::ldexp(1.0, -24), ku = (double)(n - 1) * u;
  for (int integers = 1; integers >= (ku < 0.5 ? 0 : 1); --integers) {
    if (integers) fill_exact(in, seed);
    else tutor::fill_random(in, seed, 0.0f, 1.0f);
    reference(in, ref);
    const double rtol = integers ? 0.0 : ku / (1.0 - ku) + u;
    TUTOR_CHECK(hipMemcpy(din, in.data(), n * sizeof(float), hipMemcpyHostToDevice));
    for (const char* v : kVariants) {
      tutor::poison(dout, n * sizeof(float));
      launch(v, din, dout, n, dtotals, dstate);
      TUTOR_CHECK_LAUNCH();
      TUTOR_CHECK(hipMemcpy(out.data(), dout, n * sizeof(float), hipMemcpyDeviceToHost));
      const std::string name = std::string(v) + (integers ? "" : "_float");
      tutor::check_close("scan", name.c_str(), size, out.data(), ref.data(), n, seed, 0, rtol);
      if (std::string(v) != "reduce_then_scan") check_tickets(v, name, size, n, dstate, seed);
    }
  }
  tutor::guarded_free(din);
  tutor::guarded_free(dout);
  tutor::guarded_free(dtotals);
  tutor::guarded_free(dstate);
}

// GB/s of each variant, counting the 2n bytes a scan must move (read once, write once), beside the
// copy ceiling, which moves the same 2n bytes. The input is fill_exact's: the values do not change
// the speed, and the output the timed runs leave behind (each run rewrites all of it) is then
// checked bit for bit, with the ticket counter of the last run.
void bench(size_t n, uint64_t seed) {
  const size_t bytes = n * sizeof(float);
  std::vector<float> in(n), out(n), ref(n);
  fill_exact(in, seed);
  reference(in, ref);
  float *din, *dout, *dtotals;
  unsigned long long* dstate;
  TUTOR_CHECK(hipMalloc(&din, bytes));
  TUTOR_CHECK(hipMalloc(&dout, bytes));
  TUTOR_CHECK(hipMalloc(&dtotals, tiles(n) * sizeof(float)));
  TUTOR_CHECK(hipMalloc(&dstate, (tiles(n) + 1) * sizeof(unsigned long long)));
  TUTOR_CHECK(hipMemcpy(din, in.data(), bytes, hipMemcpyHostToDevice));
  const tutor::Ceiling ceiling = tutor::copy_ceiling(bytes);
  const std::string size = std::to_string(n);
  for (const char* v : kVariants) {
    TUTOR_CHECK(hipMemset(dout, 0xFF, bytes));  // poisoned: the check sees only what the timed runs wrote
    float ms = tutor::timed_ms([&] { launch(v, din, dout, n, dtotals, dstate); });
    tutor::measure("scan", v, "bandwidth", tutor::gbps(2.0 * bytes, ms), "GB/s", ceiling, 2.0 * bytes, ms);
    TUTOR_CHECK(hipMemcpy(out.data(), dout, bytes, hipMemcpyDeviceToHost));
    const std::string name = std::string(v) + "_bench";
    tutor::check_close("scan", name.c_str(), size, out.data(), ref.data(), n, seed, 0, 0);
    if (std::string(v) != "reduce_then_scan") check_tickets(v, name, size, n, dstate, seed);
  }
  TUTOR_CHECK(hipFree(din));
  TUTOR_CHECK(hipFree(dout));
  TUTOR_CHECK(hipFree(dtotals));
  TUTOR_CHECK(hipFree(dstate));
}

int main(int argc, char** argv) {
  tutor::Args args = tutor::parse_args(argc, argv);
  // 2^25 + 4099: above 2^24, not a multiple of the tile or of 4, and 8,194 tiles: scan_totals carries
  // across its 4,096-element chunks, and every persistent block scans several tiles.
  std::vector<size_t> sizes = {1, 7, 1000, 4096, 4097, 100003, (1u << 20) + 7, (1u << 21) - 1, (1u << 25) + 4099};
  if (args.quick) sizes = {1, 7, 1000, 4097, 100003};
  for (size_t n : sizes) verify(n, args.seed);
  if (args.bench) bench((size_t)tutor::arg_int(args, "--n", 1ll << 28), args.seed);
  return tutor::finish("scan");
}
