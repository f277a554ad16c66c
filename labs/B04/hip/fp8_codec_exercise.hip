// B04 fp8_codec EXERCISE: fill in the TODOs of fp8_encode; the check fails until they are right.
// B04 fp8_codec: encode float32 -> 8-bit float and decode back, in the four formats
//   e4m3 (OCP, bias 7, max 448)   e4m3fnuz (CDNA 3, bias 8, max 240)
//   e5m2 (OCP, bias 15, inf)      e5m2fnuz (CDNA 3, bias 16, max 57344)
// written with integer bit manipulation, checked bit for bit against an independent host reference.
//   build: hipcc -O3 -std=c++17 --offload-arch=gfx942 -I labs/common/hip labs/B04/hip/fp8_codec.hip -o fp8_codec  // vendor-specific
//   run:   ./fp8_codec           all 256 patterns + random floats (ties, subnormals, overflow, NaN/Inf)
//          ./fp8_codec --bench   encode bandwidth vs the copy ceiling, and a cross-check
//                                against the hardware conversion where the GPU has one
//   host:  g++ -O2 -std=c++17 -x c++ -DB04_HOST_ONLY <this file> -o fp8_host
//          builds only the codec and the reference, for the CPU test against ml_dtypes.
#ifndef B04_HOST_ONLY
#include "tutor_lab.hip.h"  // vendor-specific
#include <hip/hip_runtime.h>  // vendor-specific
#define B04_HD __host__ __device__
#else
#define B04_HD
#endif
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

// ------------------------------------------------------------------ the four formats
enum Fmt { E4M3 = 0, E4M3FNUZ = 1, E5M2 = 2, E5M2FNUZ = 3 };
const char* const kFmtName[4] = {"e4m3", "e4m3fnuz", "e5m2", "e5m2fnuz"};

struct FmtInfo {
  int mbits;          // mantissa bits (3 or 2)
  int bias;           // exponent bias
  uint32_t max_code;  // largest finite positive code: 0x7E, 0x7F, 0x7B, 0x7F
  uint32_t nan_code;  // NaN we emit (OCP adds the sign bit): 0x7F, 0x80, 0x7E, 0x80
  bool fnuz;          // one NaN (0x80), no -0, no inf
  bool has_inf;       // only OCP e5m2: S.11111.00
};

B04_HD constexpr FmtInfo fmt_info(int f) {
  return f == E4M3       ? FmtInfo{3, 7, 0x7Eu, 0x7Fu, false, false}
         : f == E4M3FNUZ ? FmtInfo{3, 8, 0x7Fu, 0x80u, true, false}
         : f == E5M2     ? FmtInfo{2, 15, 0x7Bu, 0x7Eu, false, true}
                         : FmtInfo{2, 16, 0x7Fu, 0x80u, true, false};
}

B04_HD inline uint32_t f32_bits(float x) {
  uint32_t u;
  memcpy(&u, &x, 4);
  return u;
}
B04_HD inline float bits_f32(uint32_t u) {
  float x;
  memcpy(&x, &u, 4);
  return x;
}

// v >> s rounded to nearest, ties to the even result (1 <= s <= 31).
B04_HD inline uint32_t shift_round_even(uint32_t v, int s) {
  uint32_t q = v >> s, rem = v & ((1u << s) - 1u), half = 1u << (s - 1);
  if (rem > half || (rem == half && (q & 1u))) ++q;
  return q;
}

// ------------------------------------------------------------------ the codec (device and host)
// float32 -> fp8 code, round to nearest even. saturate: overflow and +-inf become +-max.
template <int F>
B04_HD inline uint8_t fp8_encode(float x, bool saturate) {
  constexpr FmtInfo f = fmt_info(F);
  const uint32_t u = f32_bits(x);
  const uint32_t sign = (u >> 24) & 0x80u;
  const uint32_t a = u & 0x7FFFFFFFu;  // |x| as bits
  const uint32_t nan = f.fnuz ? f.nan_code : (f.nan_code | sign);
  if (a > 0x7F800000u) return (uint8_t)nan;  // NaN stays NaN
  const uint32_t overflow = saturate ? (f.max_code | sign) : f.has_inf ? (0x7Cu | sign) : nan;
  if (a == 0x7F800000u) return (uint8_t)overflow;  // +-inf
  const int e = (int)(a >> 23) - 127;  // unbiased exponent (fp32 subnormals land far below range)
  const int te = e + f.bias;           // the exponent field it would have in fp8
  uint32_t code;
  if (te >= 1) {
    // Normal in fp8: exponent field and mantissa side by side, so that rounding up the
    // mantissa carries into the exponent (1.111b rounds to 10.000b) without a special case.
    // TODO 1: code = |x| as an fp8 normal code (exponent field, then mbits mantissa bits; the sign
    //         comes later), rounded to nearest even by shift_round_even. Which of a's bits must go?
    code = 0u;
  } else {
    // Subnormal in fp8: the significand with its hidden 1, shifted onto the subnormal grid
    // 2^(1 - bias - mbits). A carry out of the top subnormal gives the smallest normal code.
    // TODO 2: code = |x| counted in units of that grid, rounded to nearest even; a's significand
    //         (hidden 1 included) counts units of 2^(e - 23). Mind the shifts shift_round_even accepts.
    code = 0u;
  }
  if (code > f.max_code) return (uint8_t)overflow;  // 480 in e4m3, 256 in e4m3fnuz, ...
  if (code == 0) return (uint8_t)(f.fnuz ? 0u : sign);  // FNUZ has no -0
  return (uint8_t)(code | sign);
}

// fp8 code -> float32, exact (every fp8 value is a float32 value).
template <int F>
B04_HD inline float fp8_decode(uint8_t b) {
  constexpr FmtInfo f = fmt_info(F);
  const uint32_t sign = (uint32_t)(b & 0x80u) << 24;
  const uint32_t mag = b & 0x7Fu;
  const uint32_t E = mag >> f.mbits, M = mag & ((1u << f.mbits) - 1u);
  if (f.fnuz && b == 0x80u) return bits_f32(0x7FC00000u);                   // the only NaN
  if (!f.fnuz && !f.has_inf && mag == 0x7Fu) return bits_f32(sign | 0x7FC00000u);  // S.1111.111
  if (f.has_inf && E == 31u) return bits_f32(sign | (M ? 0x7FC00000u : 0x7F800000u));
  if (E == 0u) {
    if (M == 0u) return bits_f32(sign);  // +-0
    // subnormal M * 2^(1 - bias - mbits): move the leading 1 of M (bit p) into the hidden bit
    const int p = M >= 4u ? 2 : M >= 2u ? 1 : 0;
    const uint32_t exp32 = (uint32_t)(p + 1 - f.bias - f.mbits + 127);
    return bits_f32(sign | exp32 << 23 | (M - (1u << p)) << (23 - p));
  }
  return bits_f32(sign | (E - f.bias + 127u) << 23 | M << (23 - f.mbits));
}

B04_HD inline uint8_t encode_fmt(int f, float x, bool sat) {
  return f == E4M3 ? fp8_encode<E4M3>(x, sat) : f == E4M3FNUZ ? fp8_encode<E4M3FNUZ>(x, sat)
         : f == E5M2 ? fp8_encode<E5M2>(x, sat) : fp8_encode<E5M2FNUZ>(x, sat);
}
B04_HD inline float decode_fmt(int f, uint8_t b) {
  return f == E4M3 ? fp8_decode<E4M3>(b) : f == E4M3FNUZ ? fp8_decode<E4M3FNUZ>(b)
         : f == E5M2 ? fp8_decode<E5M2>(b) : fp8_decode<E5M2FNUZ>(b);
}

// ------------------------------------------------------------------ independent host reference
// Written from the definitions, not from the bit tricks above: values by ldexp, encoding by
// searching the sorted table of the non-negative finite codes 0..max_code (127, 128, 124, 128).
namespace ref {
inline double decode(int f, int b) {
  const FmtInfo fi = fmt_info(f);
  const int E = (b & 0x7F) >> fi.mbits, M = b & ((1 << fi.mbits) - 1);
  const int emax_field = (1 << (7 - fi.mbits)) - 1;
  const double s = (b & 0x80) ? -1.0 : 1.0;
  if (fi.fnuz && b == 0x80) return NAN;
  if (!fi.fnuz && !fi.has_inf && E == emax_field && M == (1 << fi.mbits) - 1) return NAN;
  if (fi.has_inf && E == emax_field) return M ? NAN : s * INFINITY;
  if (E == 0) return s * std::ldexp((double)M, 1 - fi.bias - fi.mbits);
  return s * std::ldexp((double)((1 << fi.mbits) + M), E - fi.bias - fi.mbits);
}

inline uint8_t encode(int f, float x, bool saturate) {
  const FmtInfo fi = fmt_info(f);
  const int mc = (int)fi.max_code;
  std::vector<double> table(mc + 1);  // values of codes 0..max_code, increasing
  for (int c = 0; c <= mc; ++c) table[c] = decode(f, c);
  const uint8_t sign = std::signbit(x) ? 0x80 : 0x00;
  const uint8_t nan = fi.fnuz ? (uint8_t)fi.nan_code : (uint8_t)(fi.nan_code | sign);
  if (std::isnan(x)) return nan;
  const uint8_t overflow =
      saturate ? (uint8_t)(mc | sign) : fi.has_inf ? (uint8_t)(0x7C | sign) : nan;
  const double a = std::fabs((double)x);
  if (std::isinf(a)) return overflow;
  // Beyond max by more than half a step of the top binade: overflow. Exactly half a step is a
  // tie between max and the next (unrepresentable) code, won by whichever is even.
  const double limit = table[mc] + (table[mc] - table[mc - 1]) / 2;
  if (a > limit || (a == limit && (mc & 1))) return overflow;
  int code;
  if (a >= table[mc]) {
    code = mc;
  } else {
    const int k = (int)(std::upper_bound(table.begin(), table.end(), a) - table.begin()) - 1;
    const double below = a - table[k], above = table[k + 1] - a;  // exact in double
    code = below < above ? k : above < below ? k + 1 : (k % 2 == 0 ? k : k + 1);
  }
  if (code == 0) return fi.fnuz ? 0 : sign;
  return (uint8_t)(code | sign);
}
}  // namespace ref

#ifndef B04_HOST_ONLY
// The GPU's own conversion: two float32 values to two codes in one instruction,  // vendor-specific
// V_CVT_PK_FP8_F32 (FNUZ e4m3, gfx940-gfx942). Its only NaN is 0x80; clamping to +-240 first  // vendor-specific
// (NaN excepted) makes +-inf and finite overflow saturate, as in fp8_encode(x, true).  // vendor-specific
constexpr int kHwFmt = E4M3FNUZ;  // the format this GPU converts to in hardware  // vendor-specific
__device__ inline uint32_t hw_encode2(float a, float b) {  // code of a in the low byte, b above it
#if defined(__gfx940__) || defined(__gfx941__) || defined(__gfx942__)  // vendor-specific
  a = a == a ? fminf(fmaxf(a, -240.0f), 240.0f) : a;  // vendor-specific
  b = b == b ? fminf(fmaxf(b, -240.0f), 240.0f) : b;  // vendor-specific
  return (uint32_t)__builtin_amdgcn_cvt_pk_fp8_f32(a, b, 0, false) & 0xFFFFu;  // vendor-specific
#else  // a target without fp8 instructions: the software encoder  // vendor-specific
  return (uint32_t)fp8_encode<E4M3FNUZ>(a, true) | (uint32_t)fp8_encode<E4M3FNUZ>(b, true) << 8;  // vendor-specific
#endif  // vendor-specific
}
#endif

#if defined(B04_CODEC_ONLY)
// Included by quantize: the codec and the reference only.
#elif defined(B04_HOST_ONLY)
// Host-only mode, for the CPU test: `decode` prints, per format and bit pattern, the float32 bits
// of the reference value and of the codec's value; `encode` reads float32 bit patterns (hex, one
// a line) from stdin and prints, per format and saturation mode, the reference code and the codec's.
int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "decode";
  if (mode == "decode") {
    for (int f = 0; f < 4; ++f)
      for (int b = 0; b < 256; ++b) {
        const double r = ref::decode(f, b);
        const float d = decode_fmt(f, (uint8_t)b);
        std::printf("%s %d %s %s\n", kFmtName[f], b,
                    std::isnan(r) ? "nan" : std::to_string(f32_bits((float)r)).c_str(),
                    std::isnan(d) ? "nan" : std::to_string(f32_bits(d)).c_str());
      }
    return 0;
  }
  unsigned u;
  while (std::scanf("%x", &u) == 1) {
    const float x = bits_f32(u);
    for (int f = 0; f < 4; ++f)
      for (int sat = 0; sat < 2; ++sat)
        std::printf("%d %d ", ref::encode(f, x, sat), encode_fmt(f, x, sat));
    std::printf("\n");
  }
  return 0;
}
#else
// ------------------------------------------------------------------ kernels
template <int F>
__global__ void encode_kernel(const float* x, uint8_t* q, size_t n, bool saturate) {
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x)
    q[i] = fp8_encode<F>(x[i], saturate);
}

template <int F>
__global__ void decode_kernel(const uint8_t* q, float* y, size_t n) {
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x)
    y[i] = fp8_decode<F>(q[i]);
}

// The hardware conversion in the encode kernel's loop: one element per thread, the same 4-byte
// load and 1-byte store, hw_encode2 in place of fp8_encode.
__global__ void hw_encode_kernel(const float* x, uint8_t* q, size_t n) {
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x)
    q[i] = (uint8_t)hw_encode2(x[i], 0.0f);
}

constexpr int kBlock = 256;  // a multiple of 64: whole wavefronts on AMD, whole warps on NVIDIA

unsigned grid_for(size_t n) { return (unsigned)std::min<size_t>((n + kBlock - 1) / kBlock, 65535); }

void launch_encode(int f, const float* x, uint8_t* q, size_t n, bool sat) {
  if (f == E4M3) encode_kernel<E4M3><<<grid_for(n), kBlock>>>(x, q, n, sat);
  if (f == E4M3FNUZ) encode_kernel<E4M3FNUZ><<<grid_for(n), kBlock>>>(x, q, n, sat);
  if (f == E5M2) encode_kernel<E5M2><<<grid_for(n), kBlock>>>(x, q, n, sat);
  if (f == E5M2FNUZ) encode_kernel<E5M2FNUZ><<<grid_for(n), kBlock>>>(x, q, n, sat);
}

void launch_decode(int f, const uint8_t* q, float* y, size_t n) {
  if (f == E4M3) decode_kernel<E4M3><<<grid_for(n), kBlock>>>(q, y, n);
  if (f == E4M3FNUZ) decode_kernel<E4M3FNUZ><<<grid_for(n), kBlock>>>(q, y, n);
  if (f == E5M2) decode_kernel<E5M2><<<grid_for(n), kBlock>>>(q, y, n);
  if (f == E5M2FNUZ) decode_kernel<E5M2FNUZ><<<grid_for(n), kBlock>>>(q, y, n);
}

// One check line: every byte must equal the reference byte.
bool check_bytes(const char* variant, const std::string& size, const uint8_t* got,
                 const uint8_t* want, const float* in, size_t n, uint64_t seed) {
  size_t bad = 0, first = n;
  for (size_t i = 0; i < n; ++i)
    if (got[i] != want[i] && bad++ == 0) first = i;
  tutor::json_begin("check", "fp8_codec", variant);
  std::printf(", \"size\": \"%s\", \"ok\": %s, \"mismatches\": %zu", size.c_str(),
              bad ? "false" : "true", bad);
  if (bad) std::printf(", \"first_bad\": %zu, \"input_bits\": \"0x%08x\", \"got\": \"0x%02x\", "
                       "\"want\": \"0x%02x\"", first, f32_bits(in[first]), got[first], want[first]);
  std::printf(", \"seed\": %llu", (unsigned long long)seed);
  tutor::json_end();
  if (bad) ++tutor::failures();
  return bad == 0;
}

// Inputs that hit every corner: random bit patterns (all exponents, NaN, Inf, fp32 subnormals),
// exact fp8 values and the midpoints between neighbours (ties) and their float32 neighbours,
// values around the overflow threshold, signed zeros.
std::vector<float> tricky_inputs(int f, size_t n, uint64_t seed) {
  std::mt19937_64 gen(seed * 7919u + (uint64_t)f);
  std::vector<double> vals;
  for (int c = 0; c <= (int)fmt_info(f).max_code; ++c) vals.push_back(ref::decode(f, c));
  std::vector<float> x(n);
  for (size_t i = 0; i < n; ++i) {
    const uint64_t r = gen();
    const int k = (int)(r % (vals.size() - 1));
    const double mid = (vals[k] + vals[k + 1]) / 2, top = vals.back();
    switch ((r >> 20) % 6) {
      case 0: x[i] = bits_f32((uint32_t)(r >> 32)); break;                    // any pattern
      case 1: x[i] = (float)vals[k]; break;                                   // exact value
      case 2: x[i] = (float)mid; break;                                       // a tie
      case 3: x[i] = std::nextafter((float)mid, (r >> 40) & 1 ? 1e30f : -1e30f); break;
      case 4: x[i] = (float)(top * (0.9 + 0.3 * ((r >> 40) % 1000) / 1000.0)); break;  // overflow
      default: x[i] = (float)std::ldexp(((r >> 40) % 4096) / 4096.0, -(int)((r >> 52) % 24)); break;
    }
    if ((r >> 60) & 1) x[i] = -x[i];
  }
  if (n > 4) { x[0] = 0.0f; x[1] = -0.0f; x[2] = INFINITY; x[3] = -NAN; }
  return x;
}

void verify(int f, size_t n, uint64_t seed) {
  const std::string size = std::to_string(n);
  // decode: all 256 patterns (repeated to n), compared as float32 bits; NaN must stay NaN
  std::vector<uint8_t> codes(n), want(n), got(n);
  for (size_t i = 0; i < n; ++i) codes[i] = (uint8_t)((i * 37 + seed) & 0xFF);
  uint8_t* dq;
  float* dy;
  tutor::guarded_malloc(&dq, n, "q");
  tutor::guarded_malloc(&dy, n, "y");
  TUTOR_CHECK(hipMemcpy(dq, codes.data(), n, hipMemcpyHostToDevice));
  tutor::poison(dy, n * sizeof(float));
  launch_decode(f, dq, dy, n);
  TUTOR_CHECK_LAUNCH();
  std::vector<float> y(n);
  TUTOR_CHECK(hipMemcpy(y.data(), dy, n * sizeof(float), hipMemcpyDeviceToHost));
  size_t bad = 0;
  for (size_t i = 0; i < n; ++i) {
    const double r = ref::decode(f, codes[i]);
    const bool ok = std::isnan(r) ? std::isnan(y[i]) : f32_bits(y[i]) == f32_bits((float)r);
    bad += !ok;
  }
  tutor::json_begin("check", "fp8_codec", (std::string("decode_") + kFmtName[f]).c_str());
  std::printf(", \"size\": \"%s\", \"ok\": %s, \"mismatches\": %zu, \"seed\": %llu", size.c_str(),
              bad ? "false" : "true", bad, (unsigned long long)seed);
  tutor::json_end();
  if (bad) ++tutor::failures();
  // encode: tricky floats, both saturation modes
  std::vector<float> x = tricky_inputs(f, n, seed);
  float* dx;
  tutor::guarded_malloc(&dx, n, "x");
  TUTOR_CHECK(hipMemcpy(dx, x.data(), n * sizeof(float), hipMemcpyHostToDevice));
  for (int sat = 0; sat < 2; ++sat) {
    for (size_t i = 0; i < n; ++i) want[i] = ref::encode(f, x[i], sat);
    tutor::poison(dq, n);
    launch_encode(f, dx, dq, n, sat);
    TUTOR_CHECK_LAUNCH();
    TUTOR_CHECK(hipMemcpy(got.data(), dq, n, hipMemcpyDeviceToHost));
    const std::string v = std::string("encode_") + kFmtName[f] + (sat ? "_sat" : "");
    check_bytes(v.c_str(), size, got.data(), want.data(), x.data(), n, seed);
  }
  // the hardware conversion, on the same inputs: saturating, and any NaN gives the canonical NaN
  if (f == kHwFmt) {
    for (size_t i = 0; i < n; ++i) want[i] = ref::encode(f, std::isnan(x[i]) ? NAN : x[i], true);
    tutor::poison(dq, n);
    hw_encode_kernel<<<grid_for(n), kBlock>>>(dx, dq, n);
    TUTOR_CHECK_LAUNCH();
    TUTOR_CHECK(hipMemcpy(got.data(), dq, n, hipMemcpyDeviceToHost));
    const std::string v = std::string("encode_") + kFmtName[f] + "_hw";
    check_bytes(v.c_str(), size, got.data(), want.data(), x.data(), n, seed);
  }
  tutor::guarded_free(dq);
  tutor::guarded_free(dy);
  tutor::guarded_free(dx);
}

// Encode bandwidth: 4 bytes read + 1 byte written per element.
void bench(int f, bool hw, size_t n, const tutor::Ceiling& ceiling) {
  float* dx;
  uint8_t* dq;
  TUTOR_CHECK(hipMalloc(&dx, n * sizeof(float)));
  TUTOR_CHECK(hipMalloc(&dq, n));
  { std::vector<float> h(n); tutor::fill_random(h, 7, -300.0f, 300.0f);  // never time on zeros
    TUTOR_CHECK(hipMemcpy(dx, h.data(), n * sizeof(float), hipMemcpyHostToDevice)); }
  const float ms = tutor::median_ms([&] {
    if (hw) hw_encode_kernel<<<grid_for(n), kBlock>>>(dx, dq, n);
    else launch_encode(f, dx, dq, n, true);
  });
  const double bytes = 5.0 * n;
  const std::string v = std::string("encode_") + kFmtName[f] + (hw ? "_hw" : "");
  tutor::measure("fp8_codec", v.c_str(), "bandwidth", tutor::gbps(bytes, ms), "GB/s", ceiling,
                 bytes, ms);
  TUTOR_CHECK(hipFree(dx));
  TUTOR_CHECK(hipFree(dq));
}

int main(int argc, char** argv) {
  tutor::Args args = tutor::parse_args(argc, argv);
  if (args.bench) {
    const tutor::Ceiling ceiling = tutor::copy_ceiling();
    for (int f = 0; f < 4; ++f) bench(f, false, size_t(1) << 28, ceiling);
    bench(kHwFmt, true, size_t(1) << 28, ceiling);  // the GPU's own conversion
    return tutor::finish("fp8_codec");
  }
  std::vector<size_t> sizes = {1, 255, 4097, (size_t(1) << 20) + 3};
  if (args.quick) sizes.pop_back();
  for (int f = 0; f < 4; ++f)
    for (size_t n : sizes) verify(f, n, args.seed);
  return tutor::finish("fp8_codec");
}
#endif
