"""A07 exploration: why the lab's tl.dot GEMM stays near 78% of torch.mm at 4096^3 bf16 (H200).

Run from the repo root:  python3 A07_sweep.py (wherever it lies)      (about 60-100 s, mostly compiles)
Prints one line per variant: TFLOP/s (median over interleaved rounds), ratio to torch.mm measured in the same
round (median), max relative error vs torch.mm.  A hard time guard skips compiles past ~95 s.
"""
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.getcwd(), "labs", "common", "python"))

import torch  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402

import tutor_lab  # noqa: E402

T0 = time.time()
GUARD_S = float(os.environ.get("A07_GUARD_S", "95"))
N = int(os.environ.get("A07_N", "4096"))
INTERP = os.environ.get("TRITON_INTERPRET") == "1"


@triton.jit
def tile_kernel(a_ptr, b_ptr, c_ptr, M, N, K, sbk, sbn, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                GROUP_M: tl.constexpr, WRAP: tl.constexpr, UPCAST: tl.constexpr):
    # C = A @ Bt, Bt[k, n] at b_ptr + k * sbk + n * sbn (B N x K row-major: sbk=1, sbn=K; B K x N: sbk=N, sbn=1)
    pid = tl.program_id(0)
    grid_m = tl.cdiv(M, BM)
    grid_n = tl.cdiv(N, BN)
    per_group = GROUP_M * grid_n
    first_m = (pid // per_group) * GROUP_M
    group_m = min(grid_m - first_m, GROUP_M)
    pid_m = first_m + (pid % per_group) % group_m
    pid_n = (pid % per_group) // group_m
    rows = pid_m * BM + tl.arange(0, BM)
    cols = pid_n * BN + tl.arange(0, BN)
    ks = tl.arange(0, BK)
    if WRAP:
        ar = rows % M
        bc = cols % N
    else:  # valid only when M, N, K are multiples of the tile (4096 here)
        ar = rows
        bc = cols
    a_ptrs = a_ptr + ar[:, None] * K + ks[None, :]
    b_ptrs = b_ptr + bc[None, :] * sbn + ks[:, None] * sbk
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        a = tl.load(a_ptrs)
        b = tl.load(b_ptrs)
        if UPCAST:
            a = a.to(tl.float32)
            b = b.to(tl.float32)
        acc = tl.dot(a, b, acc)
        a_ptrs += BK
        b_ptrs += BK * sbk
    if WRAP:
        mask = (rows[:, None] < M) & (cols[None, :] < N)
        tl.store(c_ptr + rows[:, None] * N + cols[None, :], acc.to(tl.bfloat16), mask=mask)
    else:
        tl.store(c_ptr + rows[:, None] * N + cols[None, :], acc.to(tl.bfloat16))


@triton.jit
def persistent_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                      GROUP_M: tl.constexpr, NUM_SMS: tl.constexpr, UPCAST: tl.constexpr):
    # B is N x K row-major; each program walks tiles pid, pid + NUM_SMS, ... (4096: no masks)
    grid_m = tl.cdiv(M, BM)
    grid_n = tl.cdiv(N, BN)
    tiles = grid_m * grid_n
    per_group = GROUP_M * grid_n
    ks = tl.arange(0, BK)
    for tile in range(tl.program_id(0), tiles, NUM_SMS):
        first_m = (tile // per_group) * GROUP_M
        group_m = min(grid_m - first_m, GROUP_M)
        pid_m = first_m + (tile % per_group) % group_m
        pid_n = (tile % per_group) // group_m
        rows = pid_m * BM + tl.arange(0, BM)
        cols = pid_n * BN + tl.arange(0, BN)
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k0 in range(0, K, BK):
            a = tl.load(a_ptr + rows[:, None] * K + (k0 + ks)[None, :])
            b = tl.load(b_ptr + cols[None, :] * K + (k0 + ks)[:, None])
            if UPCAST:
                a = a.to(tl.float32)
                b = b.to(tl.float32)
            acc = tl.dot(a, b, acc)
        tl.store(c_ptr + rows[:, None] * N + cols[None, :], acc.to(tl.bfloat16))


@triton.jit
def tma_kernel(a_desc, b_desc, c_desc, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
               GROUP_M: tl.constexpr, NUM_SMS: tl.constexpr, PERSISTENT: tl.constexpr):
    # Host-side tensor descriptors (triton.tools.tensor_descriptor): A [BM, BK], B (N x K) [BN, BK], C [BM, BN]
    grid_m = tl.cdiv(M, BM)
    grid_n = tl.cdiv(N, BN)
    tiles = grid_m * grid_n
    per_group = GROUP_M * grid_n
    step = NUM_SMS if PERSISTENT else tiles
    for tile in range(tl.program_id(0), tiles, step):
        first_m = (tile // per_group) * GROUP_M
        group_m = min(grid_m - first_m, GROUP_M)
        pid_m = first_m + (tile % per_group) % group_m
        pid_n = (tile % per_group) // group_m
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k0 in range(0, K, BK):
            a = a_desc.load([pid_m * BM, k0])
            b = b_desc.load([pid_n * BN, k0])
            acc = tl.dot(a, tl.trans(b), acc)
        c_desc.store([pid_m * BM, pid_n * BN], acc.to(tl.bfloat16))


def cfg(bm, bn, bk, w, s, g=8):
    return dict(BM=bm, BN=bn, BK=bk, GROUP_M=g, num_warps=w, num_stages=s)


def cname(c):
    return f"{c['BM']}x{c['BN']}x{c['BK']}_w{c['num_warps']}_s{c['num_stages']}_g{c['GROUP_M']}"


STAGE1 = [cfg(128, 256, 64, 8, 3), cfg(128, 256, 64, 8, 4), cfg(256, 128, 64, 8, 3), cfg(256, 128, 64, 8, 4),
          cfg(128, 128, 64, 4, 4), cfg(128, 128, 64, 4, 5), cfg(128, 128, 64, 8, 4), cfg(128, 128, 64, 8, 5),
          cfg(128, 128, 128, 8, 3), cfg(128, 256, 128, 8, 2)]


def main():
    dev = tutor_lab.DEVICE
    n = N
    torch.manual_seed(0)
    a = torch.rand(n, n, device=dev).sub_(0.5).to(torch.bfloat16)
    b = torch.rand(n, n, device=dev).sub_(0.5).to(torch.bfloat16)  # N x K
    bkn = b.t().contiguous()  # K x N, the same matrix B^T stored N-contiguous
    c = torch.empty(n, n, device=dev, dtype=torch.bfloat16)
    ref = torch.mm(a, b.t()).float()
    ref_max = float(ref.abs().max())
    flops = 2 * n ** 3
    sms = torch.cuda.get_device_properties(0).multi_processor_count if dev == "cuda" else 4
    print(f"device {torch.cuda.get_device_name(0) if dev == 'cuda' else 'cpu'} SMs {sms} n {n} "
          f"torch {torch.__version__} triton {triton.__version__}", flush=True)

    def tflops(ms):
        return flops / (ms * 1e9)

    scratch = torch.empty(256 << 20, dtype=torch.uint8, device=dev) if dev == "cuda" else None

    def timed(fn, repeat=1, flush=True, warmup=3, reps=20):
        """Median ms per launch, the way the kit's new timer does it (own copy, independent of the kit):
        events per run, all runs enqueued behind a spinning kernel, L2 overwritten before each run."""
        if dev != "cuda":
            for _ in range(warmup):
                fn()
            ts = []
            for _ in range(reps):
                t = time.perf_counter()
                for _ in range(repeat):
                    fn()
                ts.append((time.perf_counter() - t) * 1e3 / repeat)
            return statistics.median(ts)
        for _ in range(warmup):
            fn()
        torch.cuda.synchronize()
        start = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
        stop = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
        torch.cuda._sleep(60_000_000)  # ~30 ms of spinning: the host enqueues every run meanwhile
        for i in range(reps):
            if flush:
                scratch.fill_(i & 255)
            start[i].record()
            for _ in range(repeat):
                fn()
            stop[i].record()
        torch.cuda.synchronize()
        return statistics.median(x.elapsed_time(y) for x, y in zip(start, stop)) / repeat

    def err_of():
        return float((c.float() - ref).abs().max()) / ref_max

    entries = {}  # name -> (fn, err, compile_s)

    def add(name, fn):
        if time.time() - T0 > GUARD_S:
            print(f"SKIP {name}: time guard", flush=True)
            return None
        t = time.time()
        try:
            c.fill_(float("nan"))
            fn()
            tutor_lab.sync()
            e = err_of()
        except Exception as ex:  # noqa: BLE001
            print(f"FAIL {name}: {type(ex).__name__}: {str(ex)[:300]}", flush=True)
            return None
        entries[name] = (fn, e)
        ms = timed(fn)
        print(f"  compiled {name:44s} {time.time() - t:5.1f} s  first {tflops(ms):6.1f} TFLOP/s  err {e:.2e}",
              flush=True)
        return ms

    def tile_fn(cf, wrap=True, kn=False):
        grid = (triton.cdiv(n, cf["BM"]) * triton.cdiv(n, cf["BN"]),)
        bb, sbk, sbn = (bkn, n, 1) if kn else (b, 1, n)
        return lambda: tile_kernel[grid](a, bb, c, n, n, n, sbk, sbn, **cf, WRAP=wrap, UPCAST=INTERP)

    blas = lambda: torch.mm(a, b.t(), out=c)  # noqa: E731
    add("torch.mm", blas)

    print("stage 1: the lab's kernel (wrap, B N x K), configs", flush=True)
    first = {}
    for cf in STAGE1:
        ms = add("lab " + cname(cf), tile_fn(cf))
        if ms:
            first[cname(cf)] = (ms, cf)
    top = [cf for _, cf in sorted(first.values(), key=lambda t: t[0])[:2]]

    print("stage 2: factors on the two fastest", flush=True)
    for cf in top:
        add("nowrap " + cname(cf), tile_fn(cf, wrap=False))
        add("kn " + cname(cf), tile_fn(cf, kn=True))
        g16 = dict(cf, GROUP_M=16)
        add("lab " + cname(g16), tile_fn(g16))
    if top:
        add("kn+nowrap " + cname(top[0]), tile_fn(top[0], wrap=False, kn=True))

    print("stage 3: persistent and TMA", flush=True)
    pers = [cfg(128, 256, 64, 8, 3), cfg(256, 128, 64, 8, 4)]
    for cf in pers:
        grid = (min(sms, triton.cdiv(n, cf["BM"]) * triton.cdiv(n, cf["BN"])),)
        add("persistent " + cname(cf), lambda cf=cf, grid=grid: persistent_kernel[grid](
            a, b, c, n, n, n, **cf, NUM_SMS=sms, UPCAST=INTERP))
    try:
        from triton.tools.tensor_descriptor import TensorDescriptor
    except Exception as ex:  # noqa: BLE001
        TensorDescriptor = None
        print(f"FAIL tma import: {ex}", flush=True)
    if TensorDescriptor is not None and not INTERP:
        # shapes whose stages plus the TMA store's C tile fit the 227 KiB (Triton 3.9 for sm_90: 213,016 B and
        # 163,872 B; 4 stages of 128x256x64 or 256x128x64 need 262,176 B and would not launch)
        for cf, persistent in [(cfg(128, 256, 64, 8, 3), False), (cfg(256, 128, 64, 8, 3), False),
                               (cfg(128, 128, 64, 4, 4), False), (cfg(128, 128, 64, 8, 4), False),
                               (cfg(128, 256, 64, 8, 3), True), (cfg(128, 128, 64, 8, 4), True)]:
            ad = TensorDescriptor.from_tensor(a, [cf["BM"], cf["BK"]])
            bd = TensorDescriptor.from_tensor(b, [cf["BN"], cf["BK"]])
            cd = TensorDescriptor.from_tensor(c, [cf["BM"], cf["BN"]])
            tiles = triton.cdiv(n, cf["BM"]) * triton.cdiv(n, cf["BN"])
            grid = (min(sms, tiles) if persistent else tiles,)
            add(("tma-persistent " if persistent else "tma ") + cname(cf),
                lambda cf=cf, grid=grid, ad=ad, bd=bd, cd=cd, p=persistent: tma_kernel[grid](
                    ad, bd, cd, n, n, n, **cf, NUM_SMS=sms, PERSISTENT=p))

    print(f"compiles done at {time.time() - T0:.1f} s; interleaved rounds", flush=True)
    names = list(entries)
    rounds = int(os.environ.get("A07_ROUNDS", "5"))
    ms_of = {k: [] for k in names}
    ratio_of = {k: [] for k in names}
    for r in range(rounds):
        if time.time() - T0 > GUARD_S + 15:
            print(f"stopping rounds after {r}: time guard", flush=True)
            break
        order = names[r % len(names):] + names[:r % len(names)]
        got = {k: timed(entries[k][0]) for k in order}
        blas_ms = timed(blas)  # torch.mm again at the end of the round: the ratio uses the mean of both
        base = 0.5 * (got["torch.mm"] + blas_ms)
        for k in names:
            ms_of[k].append(got[k])
            ratio_of[k].append(base / got[k])
    print(f"\n{'variant':52s} {'TFLOP/s':>8s} {'min..max':>15s} {'ratio':>6s} {'max rel err':>11s}")
    for k in sorted(names, key=lambda k: -statistics.median(ratio_of[k]) if ratio_of[k] else 0):
        if not ms_of[k]:
            continue
        t = [tflops(m) for m in ms_of[k]]
        print(f"{k:52s} {statistics.median(t):8.1f} {min(t):7.1f}..{max(t):7.1f} "
              f"{statistics.median(ratio_of[k]):6.3f} {entries[k][1]:11.2e}", flush=True)

    best = max((k for k in names if k != "torch.mm" and ms_of[k]), key=lambda k: statistics.median(ratio_of[k]),
               default=None)
    print("\ntiming modes (torch.mm and the fastest variant; REPEAT launches per timed call; flush of L2)")
    for k in ["torch.mm"] + ([best] if best else []):
        fn = entries[k][0]
        for repeat, flush in [(1, True), (10, True), (1, False), (10, False)]:
            vals = [tflops(timed(fn, repeat, flush)) for _ in range(3)]
            print(f"  {k:44s} repeat {repeat:2d} flush {str(flush):5s} "
                  f"{statistics.median(vals):7.1f} TFLOP/s ({min(vals):.1f}..{max(vals):.1f})", flush=True)
    print(f"total {time.time() - T0:.1f} s")


if __name__ == "__main__":
    main()
