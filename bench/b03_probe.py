# One-off probe: which kernel SDPA runs at the B03 headline shape, and each Triton candidate's registers/spills.
import sys, torch
sys.path.insert(0, "labs/B03/triton"); sys.path.insert(0, "labs/common/python")
import flash_attention as fa
q, k, v = (torch.randn(8, 16, 4096, 128, device="cuda", dtype=torch.bfloat16) for _ in range(3))
o = torch.empty_like(q)
from torch.profiler import profile, ProfilerActivity
for causal in (False, True):
    torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal)
    with profile(activities=[ProfilerActivity.CUDA]) as p:
        torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal); torch.cuda.synchronize()
    print("sdpa causal" if causal else "sdpa", sorted({e.name[:110] for e in p.events() if e.device_type.name == "CUDA"}))
for cfg in fa.CANDIDATES:
    kern = fa.attn_fwd_kernel[(1, 1)](q, k, v, o, 4096, 0.1, CAUSAL=False, HEAD_DIM=128, UPCAST=False, **cfg)
    print("pointer", fa.shape_name(cfg), "regs", kern.n_regs, "spills", kern.n_spills, "smem", kern.metadata.shared)
