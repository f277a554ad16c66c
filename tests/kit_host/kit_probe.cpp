// Drives the lab kit's host code the way a lab does, with host loops standing in for kernels.
// argv[1] picks the scenario; the kit prints its JSON check lines and the summary.
#include KIT_HEADER

#include <string>
#include <vector>

int main(int argc, char** argv) {
  std::string scenario = argc > 1 ? argv[1] : "";
  const size_t rows = 2, cols = 3, n = rows * cols;
  std::vector<float> want(n, 1.0f), got(n);
  float *x, *y;
  tutor::guarded_malloc(&x, n, "x");
  tutor::guarded_malloc(&y, n, "y");
  TUTOR_CHECK(RT(Memcpy)(x, want.data(), n * sizeof(float), RT(MemcpyHostToDevice)));
  tutor::poison(y, n * sizeof(float));
  if (scenario == "poisoned") {
    std::vector<float> raw(n);
    TUTOR_CHECK(RT(Memcpy)(raw.data(), y, n * sizeof(float), RT(MemcpyDeviceToHost)));
    for (float v : raw) {
      unsigned bits;
      std::memcpy(&bits, &v, 4);
      if (bits != 0xFFFFFFFFu) return 3;  // the poison is all ones
    }
    return 0;
  }
  if (scenario == "correct") for (size_t i = 0; i < n; ++i) y[i] = x[i];
  if (scenario == "first_row_only") for (size_t i = 0; i < cols; ++i) y[i] = x[i];
  if (scenario == "one_past_the_end") { for (size_t i = 0; i < n; ++i) y[i] = x[i]; y[n] = 1.0f; }
  if (scenario == "one_before_the_start") { for (size_t i = 0; i < n; ++i) y[i] = x[i]; y[-1] = 1.0f; }
  if (scenario == "read_past_the_input") { for (size_t i = 0; i < n; ++i) y[i] = x[i + 1]; }
  if (scenario == "off_by_a_little") { for (size_t i = 0; i < n; ++i) y[i] = x[i] + 1e-3f; }
  TUTOR_CHECK(RT(Memcpy)(got.data(), y, n * sizeof(float), RT(MemcpyDeviceToHost)));
  tutor::check_close("probe", scenario.c_str(), "2x3", got.data(), want.data(), n, 7, 1e-5, 1e-5, cols);
  tutor::guarded_free(x);
  tutor::guarded_free(y);
  return tutor::finish("probe");
}
