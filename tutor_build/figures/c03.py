"""Figures of module C03 (KV cache management), drawn from tutor_build/models/kvcache.py.

Every number printed on these figures is computed here or in the KV model from the published configs (the same
code the page's table and the claims test use). Each drawn quantity carries a <title> naming it and its value,
which tests/test_figures_c03.py reads back.
"""

from __future__ import annotations

from ..models import kvcache as kv
from ..render.svg import Canvas

W = 560
# One meaning per colour: a token held (s2), allocated but empty (warn), a hole too small to use (bad), free (grid).
C_USED, C_INTERNAL, C_EXTERNAL, C_FREE = "s2", "warn", "bad", "grid"

# ---------------------------------------------------------------- section 1: the shelf, three ways

# A toy pool of 48 slots and four requests (the tokens each holds now). The fixed slot is 12; a reservation is
# prompt + max_new as each client declared it; pages hold 4 slots. The first-fit row keeps a 5-slot hole where a
# request has left, and the next request in line needs 8 slots, so holes under 8 are external waste.
SHELF_POOL = 48
SHELF_REQUESTS = (("A", 9), ("B", 3), ("C", 11), ("D", 6))
SHELF_FIXED = 12
SHELF_RESERVED = {"A": 11, "B": 7, "C": 12, "D": 9}
SHELF_HOLE = 5  # left after A by a request that has finished
SHELF_NEXT = 8  # slots the request at the head of the queue needs
SHELF_PAGE = 4
SHELF_PAGE_ORDER = (5, 0, 9, 2, 7, 11, 3, 8, 1)  # pool pages handed out, in the order the requests take them


def shelf_rows() -> list[tuple[str, list[tuple[int, int, str, str]]]]:
    """For each scheme: (label, segments (start, length, part, owner)), part one of used/internal/external/free."""
    rows = []
    segs, x = [], 0
    for name, n in SHELF_REQUESTS:
        segs += [(x, n, "used", name), (x + n, SHELF_FIXED - n, "internal", name)]
        x += SHELF_FIXED
    if x < SHELF_POOL:
        segs.append((x, SHELF_POOL - x, "free", ""))
    rows.append((f"one slot of the maximum, {SHELF_FIXED} each", segs))

    segs, x = [], 0
    for i, (name, n) in enumerate(SHELF_REQUESTS):
        r = SHELF_RESERVED[name]
        segs += [(x, n, "used", name), (x + n, r - n, "internal", name)]
        x += r
        if i == 0:
            segs.append((x, SHELF_HOLE, "external" if SHELF_HOLE < SHELF_NEXT else "free", ""))
            x += SHELF_HOLE
    tail = SHELF_POOL - x
    segs.append((x, tail, "external" if tail < SHELF_NEXT else "free", ""))
    rows.append(("reserve what each client declared, first fit", segs))

    segs, k = [], 0
    taken = set()
    for name, n in SHELF_REQUESTS:
        for j in range(kv.pages_for(n, SHELF_PAGE)):
            p = SHELF_PAGE_ORDER[k]
            k += 1
            taken.add(p)
            fill = min(SHELF_PAGE, n - j * SHELF_PAGE)
            segs.append((p * SHELF_PAGE, fill, "used", name))
            if fill < SHELF_PAGE:
                segs.append((p * SHELF_PAGE + fill, SHELF_PAGE - fill, "internal", name))
    for p in range(SHELF_POOL // SHELF_PAGE):
        if p not in taken:
            segs.append((p * SHELF_PAGE, SHELF_PAGE, "free", ""))
    rows.append((f"pigeonholes (pages) of {SHELF_PAGE}, anywhere", sorted(segs)))
    return rows


def shelf_totals() -> list[dict[str, int]]:
    out = []
    for _, segs in shelf_rows():
        t = {"used": 0, "internal": 0, "external": 0, "free": 0}
        for _, n, part, _ in segs:
            t[part] += n
        out.append(t)
    return out


_PART_FILL = {"used": C_USED, "internal": C_INTERNAL, "external": C_EXTERNAL, "free": C_FREE}
_PART_WORD = {"used": "holding notes", "internal": "given out, empty", "external": "gap too short", "free": "free"}


def shelf() -> Canvas:
    """Three strips of the same 48-slot shelf holding the same four files: fixed slots, declared reservations
    placed first fit, and pages anywhere with an index card each."""
    cell = 11
    x0 = (W - SHELF_POOL * cell) / 2
    top = 96
    row_h = 96
    c = Canvas(W, top + row_h * 3 + 10)
    for i, part in enumerate(("used", "internal", "external", "free")):
        lx, ly = 20 + (i % 2) * 270, 18 + (i // 2) * 28
        c.rect(lx, ly - 8, 16, 16, fill=_PART_FILL[part])
        c.text(lx + 24, ly, _PART_WORD[part], middle=True)
    for r, ((label, segs), tot) in enumerate(zip(shelf_rows(), shelf_totals())):
        y = top + r * row_h
        c.text(x0, y, label, bold=True)
        by = y + 12
        for start, n, part, owner in segs:
            if n <= 0:
                continue
            c.rect(x0 + start * cell, by, n * cell, 34, fill=_PART_FILL[part], stroke="bg",
                   title=f"{part} {owner}".strip() + f": {n} slots")
            if part == "used" and n * cell >= 14:
                c.text(x0 + start * cell + n * cell / 2, by + 17, owner, anchor="middle", middle=True, fill="bg",
                       bold=True)
        for s in range(0, SHELF_POOL + 1, SHELF_PAGE if r == 2 else SHELF_POOL):
            c.line(x0 + s * cell, by - 3, x0 + s * cell, by + 37, stroke="fg", width=1.5 if r == 2 else 1)
        c.text(x0, by + 54, f"{tot['used']} holding notes · {tot['internal']} empty inside · "
               f"{tot['external']} in gaps too short", fill="muted")
    return c


# ---------------------------------------------------------------- section 2: bytes per token, six configs


def kv_bytes_rows(bytes_per_value: float = 2) -> list[tuple[str, str, float]]:
    return [(m.name, m.kind, kv.bytes_per_token(m, bytes_per_value)) for m in kv.MODELS]


def _kib(b: float) -> str:
    return f"{b / 1024:,.0f} KiB" if b >= 10 * 1024 else f"{b / 1024:,.1f} KiB"


def kv_bytes(bytes_per_value: float = 2) -> Canvas:
    """Horizontal bars: the KV bytes one token costs in each model, bf16, from its config."""
    rows = kv_bytes_rows(bytes_per_value)
    top, bar_h, gap = 20, 26, 34
    c = Canvas(W, top + len(rows) * (bar_h + gap) + 26)
    x0, x1 = 20, 340
    biggest = max(b for _, _, b in rows)
    for i, (name, kind, b) in enumerate(rows):
        y = top + i * (bar_h + gap)
        c.text(x0, y + 4, f"{name} ({kind})", bold=True)
        w = max((x1 - x0) * b / biggest, 2)
        c.rect(x0, y + 12, w, bar_h, fill="s1" if kind in ("MHA", "GQA") else "s4",
               title=f"{name}: {b:,.0f} bytes")
        c.text(x0 + w + 8, y + 12 + bar_h / 2, f"{b:,.0f} B ({_kib(b)})", middle=True)
    c.text(x0, top + len(rows) * (bar_h + gap) + 8, "KV cache bytes per token, all layers, bf16", fill="muted")
    return c


# ---------------------------------------------------------------- section 2: the block table and a shared prefix

# Two sequences of pages of 16 tokens; their first two pages hold the same system prompt and are stored once.
BT_TABLES = {"A": (3, 7, 1, 10), "B": (3, 7, 5)}
BT_POOL = 12


def block_table(page: int = 16, kv_heads: int = 8, head_dim: int = 128, block_n: int = 64) -> Canvas:
    """Each sequence's block table (one entry per page) pointing into a shuffled pool; shared pages drawn once."""
    cell_w, cell_h = 40, 30
    c = Canvas(W, 410)
    owners: dict[int, set[str]] = {}
    for s, t in BT_TABLES.items():
        for p in t:
            owners.setdefault(p, set()).add(s)
    # the tables, side by side
    ty = 60
    tx = {"A": 20, "B": 330}
    c.text(20, 20, f"block tables: 4-byte entries, one per {page} tokens", fill="muted")
    for s, t in BT_TABLES.items():
        c.text(tx[s], ty - 12, f"table {s}", bold=True)
        for j, p in enumerate(t):
            fill = "s5" if len(owners[p]) > 1 else ("s1" if s == "A" else "s3")
            c.rect(tx[s] + j * cell_w, ty, cell_w, cell_h, fill=fill, stroke="bg",
                   title=f"table {s} entry {j}: page {p}")
            c.text(tx[s] + j * cell_w + cell_w / 2, ty + cell_h / 2, str(p), anchor="middle", middle=True,
                   fill="bg", bold=True)
    # the pool
    py = 230
    px = (W - BT_POOL * cell_w) / 2
    c.text(px, py - 14, "the pool of pages (physical)", bold=True)
    for p in range(BT_POOL):
        o = owners.get(p, set())
        fill = "s5" if len(o) > 1 else ("s1" if o == {"A"} else "s3" if o == {"B"} else "grid")
        c.rect(px + p * cell_w, py, cell_w, cell_h, fill=fill, stroke="bg",
               title=f"page {p}: " + ("shared by A and B" if len(o) > 1 else f"{''.join(o)}" if o else "free"))
        c.text(px + p * cell_w + cell_w / 2, py + cell_h / 2, str(p), anchor="middle", middle=True,
               fill="bg" if o else "fg")
    for s, t in BT_TABLES.items():
        for j, p in enumerate(t):
            c.line(tx[s] + j * cell_w + cell_w / 2, ty + cell_h, px + p * cell_w + cell_w / 2, py, stroke="muted",
                   arrow=True)
    kb = kv.page_bytes(page, kv_heads, head_dim) / 1024
    spans = block_n // page
    c.text(20, py + 66, f"one page: {page} tokens × {kv_heads} KV heads × {head_dim} × 2 B", fill="fg")
    c.text(20, py + 88, f"= {kb:,.0f} KiB of K and {kb:,.0f} KiB of V per layer", fill="fg")
    c.text(20, py + 116, f"a {block_n}-token tile reads {spans} table entries, then its K and V", fill="muted")
    c.text(20, py + 138, f"table bytes per KV byte, one head: {kv.table_share(page, head_dim):.3%}", fill="muted")
    _swatch = [("s1", "A only"), ("s3", "B only"), ("s5", "shared prefix"), ("grid", "free")]
    for i, (fill, label) in enumerate(_swatch):
        c.rect(20 + i * 135, 392 - 8, 16, 16, fill=fill)
        c.text(44 + i * 135, 392, label, middle=True)
    return c
