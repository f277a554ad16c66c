// B03 attention: O = softmax(Q K^T / sqrt(d)) V in float32 on the SIMT lanes, naive and tiled.
// Q, K, V and O are heads x n x kDim, row-major; one head after the other.
//   build: nvcc -O3 -std=c++17 -arch=sm_90a -I labs/common/cuda labs/B03/cuda/attention.cu -o attention  // vendor-specific
//   run:   ./attention            checks both paths, causal and not, on odd lengths against a float64 reference
//          ./attention --bench    GB/s of each path (and of the softmax step alone) at n = 1024, 2048, 4096
//                                 (16 heads, d = 64), with the copy ceiling measured in the same run;
//                                 --seqs 2048 picks one length,
//                                 --once launches each path once untimed (for Nsight Compute)
//  naive   three kernels: naive_scores writes the n x n scores S to memory, naive_softmax reads S and
//          writes P, naive_pv reads P and V and writes O (4 n^2 floats of traffic a head, besides Q, K, V, O)
//  tiled   one kernel: each thread owns one query row; the block walks K and V in tiles held in shared
//          memory, with an online softmax (running maximum, running sum, rescaled output); S never
//          leaves the chip
// No warp-level operations: every reduction goes through shared memory, so the code is the same for
// NVIDIA's 32-lane warps and AMD's 64-lane wavefronts.
#include "tutor_lab.cuh"  // vendor-specific

constexpr int kDim = 64;      // head dimension d
constexpr int kTile = 16;     // naive kernels: a 16 x 16 block of threads
constexpr int kThreads = 256; // naive_softmax: threads per row
constexpr int kRows = 64;     // tiled: query rows a block, one a thread
constexpr int kKeys = 32;     // tiled: keys (and values) a step

// ---------------------------------------------------------------- naive: three kernels
// S[h, i, j] = scale * q_i . k_j, and -inf above the diagonal when causal. Block (x, y) computes the
// 16 x 16 scores of query rows y*16.. and key rows x*16..; it stages both 16 x d tiles in shared memory.
__global__ void naive_scores(const float* q, const float* k, float* s, int n, float scale, int causal) {
  __shared__ float qs[kTile][kDim + 1], ks[kTile][kDim + 1];  // +1: rows start in different banks
  const size_t head = blockIdx.z;
  const float* qh = q + head * n * kDim;
  const float* kh = k + head * n * kDim;
  const int i0 = blockIdx.y * kTile, j0 = blockIdx.x * kTile;
  const int tx = threadIdx.x, ty = threadIdx.y;
  for (int c = tx; c < kDim; c += kTile) {
    qs[ty][c] = i0 + ty < n ? qh[(size_t)(i0 + ty) * kDim + c] : 0.0f;
    ks[ty][c] = j0 + ty < n ? kh[(size_t)(j0 + ty) * kDim + c] : 0.0f;
  }
  __syncthreads();
  const int i = i0 + ty, j = j0 + tx;
  if (i >= n || j >= n) return;
  float acc = 0.0f;
#pragma unroll 16
  for (int c = 0; c < kDim; ++c) acc += qs[ty][c] * ks[tx][c];
  s[(head * n + i) * n + j] = causal && j > i ? -INFINITY : acc * scale;
}

// The maximum (or the sum) of one value per thread over the block, returned to every thread. The
// first barrier keeps a second call from overwriting red[] while a slow thread still reads red[0].
__device__ float block_reduce(float v, bool take_max) {
  __shared__ float red[kThreads];
  __syncthreads();
  red[threadIdx.x] = v;
  __syncthreads();
  for (int half = kThreads / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) {
      const float other = red[threadIdx.x + half];
      red[threadIdx.x] = take_max ? fmaxf(red[threadIdx.x], other) : red[threadIdx.x] + other;
    }
    __syncthreads();
  }
  return red[0];
}

// One block per row of S (heads x n rows): the row is read once into shared memory (n floats of dynamic
// shared memory), then its maximum, the sum of exp(s - max), and P = exp(s - max) / sum written.
__global__ void __launch_bounds__(kThreads) naive_softmax(const float* s, float* p, int n) {
  extern __shared__ float row[];
  const float* x = s + (size_t)blockIdx.x * n;
  float* y = p + (size_t)blockIdx.x * n;
  float m = -INFINITY;
  for (int c = threadIdx.x; c < n; c += kThreads) {
    row[c] = x[c];
    m = fmaxf(m, row[c]);
  }
  m = block_reduce(m, true);  // finite: key 0 is never masked
  float sum = 0.0f;
  for (int c = threadIdx.x; c < n; c += kThreads) sum += expf(row[c] - m);
  sum = block_reduce(sum, false);
  for (int c = threadIdx.x; c < n; c += kThreads) y[c] = expf(row[c] - m) / sum;
}

// O[h, i, :] = sum_j P[h, i, j] V[h, j, :]. Block x computes query rows x*16.. of head y, all d columns:
// thread (tx, ty) owns row ty and columns tx, tx + 16, tx + 32, tx + 48. Each step stages a 16 x 16 tile
// of P and a 16 x d tile of V.
__global__ void naive_pv(const float* p, const float* v, float* o, int n) {
  __shared__ float ps[kTile][kTile + 1], vs[kTile][kDim];
  const size_t head = blockIdx.y;
  const float* ph = p + head * n * n;
  const float* vh = v + head * n * kDim;
  const int i0 = blockIdx.x * kTile;
  const int tx = threadIdx.x, ty = threadIdx.y;
  float acc[kDim / kTile] = {};
  for (int j0 = 0; j0 < n; j0 += kTile) {
    ps[ty][tx] = i0 + ty < n && j0 + tx < n ? ph[(size_t)(i0 + ty) * n + j0 + tx] : 0.0f;
    for (int c = tx; c < kDim; c += kTile) vs[ty][c] = j0 + ty < n ? vh[(size_t)(j0 + ty) * kDim + c] : 0.0f;
    __syncthreads();
#pragma unroll
    for (int jj = 0; jj < kTile; ++jj) {
      const float pj = ps[ty][jj];
#pragma unroll
      for (int r = 0; r < kDim / kTile; ++r) acc[r] += pj * vs[jj][tx + r * kTile];
    }
    __syncthreads();
  }
  if (i0 + ty >= n) return;
#pragma unroll
  for (int r = 0; r < kDim / kTile; ++r) o[(head * n + i0 + ty) * kDim + tx + r * kTile] = acc[r];
}

// ---------------------------------------------------------------- tiled: one kernel, online softmax
// Thread t of block x owns query row i = x * kRows + t of head y: its q (scaled) and its output
// accumulator live in registers. Each step the block loads kKeys rows of K and of V into shared memory
// (every thread reads the same element at once: a broadcast), computes its kKeys scores, and folds them
// into its running maximum m, running sum l and accumulator, rescaled by exp(m_old - m_new).
__global__ void __launch_bounds__(kRows) tiled(const float* q, const float* k, const float* v, float* o,
                                               int n, float scale, int causal) {
  __shared__ float ks[kKeys][kDim], vs[kKeys][kDim];
  const size_t head = blockIdx.y;
  const float* qh = q + head * n * kDim;
  const float* kh = k + head * n * kDim;
  const float* vh = v + head * n * kDim;
  const int i = blockIdx.x * kRows + threadIdx.x;
  float qr[kDim], acc[kDim];
#pragma unroll
  for (int c = 0; c < kDim; ++c) {
    qr[c] = i < n ? qh[(size_t)i * kDim + c] * scale : 0.0f;
    acc[c] = 0.0f;
  }
  float m = -INFINITY, l = 0.0f;
  // Causal: no row of this block sees a key past its own last row.
  const int end = causal ? min(n, (int)(blockIdx.x + 1) * kRows) : n;
  for (int j0 = 0; j0 < end; j0 += kKeys) {
    __syncthreads();  // every thread is done with the previous tile
    for (int e = threadIdx.x; e < kKeys * kDim; e += kRows) {
      const int r = e / kDim, c = e % kDim;
      const bool inside = j0 + r < n;
      ks[r][c] = inside ? kh[(size_t)(j0 + r) * kDim + c] : 0.0f;
      vs[r][c] = inside ? vh[(size_t)(j0 + r) * kDim + c] : 0.0f;
    }
    __syncthreads();
    float sc[kKeys];
    float m_new = m;
#pragma unroll
    for (int jj = 0; jj < kKeys; ++jj) {
      float x = 0.0f;
#pragma unroll
      for (int c = 0; c < kDim; ++c) x += qr[c] * ks[jj][c];
      const int j = j0 + jj;
      sc[jj] = j < n && !(causal && j > i) ? x : -INFINITY;
      m_new = fmaxf(m_new, sc[jj]);
    }
    // m_new is finite: key j0 is visible to every row on the first step (j0 = 0), and m only grows.
    const float alpha = expf(m - m_new);  // 0 on the first step (m = -inf)
    l *= alpha;
#pragma unroll
    for (int c = 0; c < kDim; ++c) acc[c] *= alpha;
#pragma unroll
    for (int jj = 0; jj < kKeys; ++jj) {
      const float pj = expf(sc[jj] - m_new);  // 0 for a masked key
      l += pj;
#pragma unroll
      for (int c = 0; c < kDim; ++c) acc[c] += pj * vs[jj][c];
    }
    m = m_new;
  }
  if (i >= n) return;
#pragma unroll
  for (int c = 0; c < kDim; ++c) o[((size_t)head * n + i) * kDim + c] = acc[c] / l;
}

// ---------------------------------------------------------------- driver
const char* const kVariants[] = {"naive", "tiled"};

// `s` and `p` are the naive path's heads x n x n buffers (unused by the tiled kernel).
void launch(const std::string& variant, const float* q, const float* k, const float* v, float* s, float* p,
            float* o, int heads, int n, int causal) {
  const float scale = 1.0f / std::sqrt((float)kDim);
  if (variant == "naive") {
    const int tiles = (n + kTile - 1) / kTile;
    naive_scores<<<dim3(tiles, tiles, heads), dim3(kTile, kTile)>>>(q, k, s, n, scale, causal);
    naive_softmax<<<heads * n, kThreads, n * sizeof(float)>>>(s, p, n);
    naive_pv<<<dim3(tiles, heads), dim3(kTile, kTile)>>>(p, v, o, n);
  } else {
    tiled<<<dim3((n + kRows - 1) / kRows, heads), kRows>>>(q, k, v, o, n, scale, causal);
  }
}

// float64 reference, one query row at a time (the first `rows` rows of each head).
void reference(const std::vector<float>& q, const std::vector<float>& k, const std::vector<float>& v,
               std::vector<float>& ref, int heads, int n, int causal, int rows) {
  const double scale = 1.0 / std::sqrt((double)kDim);
  std::vector<double> sc(n), out(kDim);
  for (int h = 0; h < heads; ++h) {
    const size_t base = (size_t)h * n * kDim;
    for (int i = 0; i < rows; ++i) {
      const int last = causal ? i + 1 : n;
      double m = -INFINITY, sum = 0.0;
      for (int j = 0; j < last; ++j) {
        double x = 0.0;
        for (int c = 0; c < kDim; ++c) x += (double)q[base + (size_t)i * kDim + c] * k[base + (size_t)j * kDim + c];
        sc[j] = x * scale;
        m = std::max(m, sc[j]);
      }
      std::fill(out.begin(), out.end(), 0.0);
      for (int j = 0; j < last; ++j) {
        const double e = std::exp(sc[j] - m);
        sum += e;
        for (int c = 0; c < kDim; ++c) out[c] += e * v[base + (size_t)j * kDim + c];
      }
      for (int c = 0; c < kDim; ++c) ref[base + (size_t)i * kDim + c] = (float)(out[c] / sum);
    }
  }
}

// Each output is a weighted mean of at most n values of V (|v| < 1), its weights summed in float32: n
// additions, each off by at most 2^-24 of the running total, bound the error of the sum and of the
// accumulator by n 2^-24 each (relative), so |o - ref| <= 2 n 2^-24 max|v|. A score error ds moves o by at most
// 2 |ds| max|v|. A score sums 64 products of |q k| <= 9: its float32 rounding is typically sqrt(64) x 2^-24 x 9,
// about 4e-6, or 5e-7 after the 1/8 scale (the worst case, 64 x 2^-24 x 576 / 8 = 2.7e-4, needs every rounding
// to go one way); expf adds 2 ulp. 1e-5 more covers the typical case ten times over.
double abs_tol(int n) { return 2.0 * n * std::ldexp(1.0, -24) + 1e-5; }

// Both paths, causal and not, on fresh inputs: Q and K in [-3, 3) (scores of a few units, so the
// running maximum moves often), V in [-1, 1); outputs (and the naive path's S and P) poisoned first.
void verify(int heads, int n, uint64_t seed) {
  const size_t elems = (size_t)heads * n * kDim, scores = (size_t)heads * n * n;
  std::vector<float> q(elems), k(elems), v(elems), got(elems), ref(elems);
  tutor::fill_random(q, seed, -3.0f, 3.0f);
  tutor::fill_random(k, seed + 1, -3.0f, 3.0f);
  tutor::fill_random(v, seed + 2);
  float *dq, *dk, *dv, *ds, *dp, *dout;
  tutor::guarded_malloc(&dq, elems, "q");
  tutor::guarded_malloc(&dk, elems, "k");
  tutor::guarded_malloc(&dv, elems, "v");
  tutor::guarded_malloc(&ds, scores, "s");
  tutor::guarded_malloc(&dp, scores, "p");
  tutor::guarded_malloc(&dout, elems, "o");
  TUTOR_CHECK(cudaMemcpy(dq, q.data(), elems * sizeof(float), cudaMemcpyHostToDevice));
  TUTOR_CHECK(cudaMemcpy(dk, k.data(), elems * sizeof(float), cudaMemcpyHostToDevice));
  TUTOR_CHECK(cudaMemcpy(dv, v.data(), elems * sizeof(float), cudaMemcpyHostToDevice));
  const std::string size = std::to_string(heads) + "x" + std::to_string(n) + "x" + std::to_string(kDim);
  for (int causal = 0; causal < 2; ++causal) {
    reference(q, k, v, ref, heads, n, causal, n);
    for (const char* variant : kVariants) {
      tutor::poison(ds, scores * sizeof(float));
      tutor::poison(dp, scores * sizeof(float));
      tutor::poison(dout, elems * sizeof(float));
      launch(variant, dq, dk, dv, ds, dp, dout, heads, n, causal);
      TUTOR_CHECK_LAUNCH();
      TUTOR_CHECK(cudaMemcpy(got.data(), dout, elems * sizeof(float), cudaMemcpyDeviceToHost));
      const std::string name = std::string(variant) + (causal ? "_causal" : "");
      tutor::check_close("attention", name.c_str(), size, got.data(), ref.data(), elems, seed, abs_tol(n), 0.0, kDim);
    }
  }
  tutor::guarded_free(dq);
  tutor::guarded_free(dk);
  tutor::guarded_free(dv);
  tutor::guarded_free(ds);
  tutor::guarded_free(dp);
  tutor::guarded_free(dout);
}

// Each path is credited with the bytes it must move at least (its model, tutor_build/models/attention_io.py):
// naive 4 (4 n d + 4 n^2) bytes a head (Q, K read; S written, read; P written, read; V read; O written),
// tiled 4 (4 n d) (Q, K, V read once, O written once). The copy ceiling counts bytes read plus written.
// Non-causal only; each timed result is checked on the first 64 rows of head 0. `once` (--once, for the
// profiler) launches each path once, checked, and records nothing.
void bench(int heads, int n, bool once, uint64_t seed) {
  const size_t elems = (size_t)heads * n * kDim, scores = (size_t)heads * n * n;
  std::vector<float> q(elems), k(elems), v(elems), got(elems), ref(elems);
  tutor::fill_random(q, seed, -3.0f, 3.0f);
  tutor::fill_random(k, seed + 1, -3.0f, 3.0f);
  tutor::fill_random(v, seed + 2);
  float *dq, *dk, *dv, *ds, *dp, *dout;
  TUTOR_CHECK(cudaMalloc(&dq, elems * sizeof(float)));
  TUTOR_CHECK(cudaMalloc(&dk, elems * sizeof(float)));
  TUTOR_CHECK(cudaMalloc(&dv, elems * sizeof(float)));
  TUTOR_CHECK(cudaMalloc(&ds, scores * sizeof(float)));
  TUTOR_CHECK(cudaMalloc(&dp, scores * sizeof(float)));
  TUTOR_CHECK(cudaMalloc(&dout, elems * sizeof(float)));
  TUTOR_CHECK(cudaMemcpy(dq, q.data(), elems * sizeof(float), cudaMemcpyHostToDevice));
  TUTOR_CHECK(cudaMemcpy(dk, k.data(), elems * sizeof(float), cudaMemcpyHostToDevice));
  TUTOR_CHECK(cudaMemcpy(dv, v.data(), elems * sizeof(float), cudaMemcpyHostToDevice));
  const tutor::Ceiling ceiling = once ? tutor::Ceiling{"none", 0.0, "GB/s"} : tutor::copy_ceiling(scores * sizeof(float));
  const int rows = std::min(n, 64);  // the rows checked: the first 64 of head 0
  reference(q, k, v, ref, 1, n, 0, rows);
  const std::string size = std::to_string(heads) + "x" + std::to_string(n) + "x" + std::to_string(kDim);
  for (const char* variant : kVariants) {
    const std::string name = std::string(variant) + "_s" + std::to_string(n);
    tutor::poison(dout, elems * sizeof(float));
    if (once) {
      launch(variant, dq, dk, dv, ds, dp, dout, heads, n, 0);
      TUTOR_CHECK_LAUNCH();
    } else {
      const float ms = tutor::timed_ms([&] { launch(variant, dq, dk, dv, ds, dp, dout, heads, n, 0); });
      const double nd = (double)heads * n * kDim, nn = (double)heads * n * n;
      const double moved = std::string(variant) == "naive" ? 4.0 * (4.0 * nd + 4.0 * nn) : 4.0 * (4.0 * nd);
      tutor::measure("attention", name.c_str(), "bandwidth", tutor::gbps(moved, ms), "GB/s", ceiling, moved, ms);
    }
    TUTOR_CHECK(cudaMemcpy(got.data(), dout, (size_t)rows * kDim * sizeof(float), cudaMemcpyDeviceToHost));
    tutor::check_close("attention", (name + "_bench").c_str(), size, got.data(), ref.data(), (size_t)rows * kDim,
                       seed, abs_tol(n), 0.0, kDim);
  }
  // The softmax step alone, on the scores the naive path left in s: no matrix work, 8 n^2 bytes a head
  // (read S, write P). Checked on the first 64 rows of head 0 against a float64 softmax of those scores.
  if (!once) {
    const double moved = 8.0 * (double)heads * n * n;
    const float ms = tutor::timed_ms([&] { naive_softmax<<<heads * n, kThreads, n * sizeof(float)>>>(ds, dp, n); });
    tutor::measure("attention", ("softmax_s" + std::to_string(n)).c_str(), "bandwidth", tutor::gbps(moved, ms), "GB/s",
                   ceiling, moved, ms);
    std::vector<float> srow((size_t)rows * n), prow((size_t)rows * n), pref((size_t)rows * n);
    TUTOR_CHECK(cudaMemcpy(srow.data(), ds, srow.size() * sizeof(float), cudaMemcpyDeviceToHost));
    TUTOR_CHECK(cudaMemcpy(prow.data(), dp, prow.size() * sizeof(float), cudaMemcpyDeviceToHost));
    for (int r = 0; r < rows; ++r) {
      double m = -INFINITY, sum = 0.0;
      for (int c = 0; c < n; ++c) m = std::max(m, (double)srow[(size_t)r * n + c]);
      for (int c = 0; c < n; ++c) sum += std::exp(srow[(size_t)r * n + c] - m);
      for (int c = 0; c < n; ++c) pref[(size_t)r * n + c] = (float)(std::exp(srow[(size_t)r * n + c] - m) / sum);
    }
    tutor::check_close("attention", ("softmax_s" + std::to_string(n) + "_bench").c_str(), size, prow.data(), pref.data(),
                       prow.size(), seed, 1e-9, 1e-5, n);
  }
  TUTOR_CHECK(cudaFree(dq));
  TUTOR_CHECK(cudaFree(dk));
  TUTOR_CHECK(cudaFree(dv));
  TUTOR_CHECK(cudaFree(ds));
  TUTOR_CHECK(cudaFree(dp));
  TUTOR_CHECK(cudaFree(dout));
}

int main(int argc, char** argv) {
  tutor::Args args = tutor::parse_args(argc, argv);
  // Lengths that are not multiples of any tile (97, 1000, 4099), one that is (256), and n = 1.
  std::vector<std::pair<int, int>> shapes = {{1, 1}, {2, 97}, {3, 1000}, {2, 256}, {1, 4099}};
  if (args.quick) shapes = {{1, 1}, {2, 97}, {1, 1000}};
  for (auto [heads, n] : shapes) verify(heads, n, args.seed);
  if (args.bench) {
    const int heads = (int)tutor::arg_int(args, "--heads", 16);
    const int only = (int)tutor::arg_int(args, "--seqs", 0);  // one length (the profiler's runs), or all three
    const bool once = std::find(args.rest.begin(), args.rest.end(), "--once") != args.rest.end();
    for (int n : {1024, 2048, 4096})
      if (only == 0 || only == n) bench(heads, n, once, args.seed);
  }
  return tutor::finish("attention");
}
