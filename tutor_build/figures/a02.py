"""Concept figures of module A02, memory coalescing.

Sector counts and conflict degrees come from ``models/coalescing.py`` (the "Coalescing and bank
conflicts" player); the figure functions lay out the same addresses the model counts, and say so in each
shape's tooltip, so the tests can check that what is drawn is what the model computes.
"""

from __future__ import annotations

from collections import Counter

from ..models import coalescing
from ..render.svg import Canvas, wrap

W = 560
LINE = 128  # bytes in an L1/L2 line: four sectors


def _addr(lane: int, stride: int, elem: int) -> int:
    return lane * stride * elem


# ------------------------------------------------------------------ 1. the analogy: crates, not sheets

def crates(lucky_stride: int = 1, unlucky_stride: int = 32, elem: int = 4) -> Canvas:
    """A row of 32 students asks for 32 sheets (4-byte elements); the warehouse ships whole crates (32-byte
    sectors) of 8 sheets. Consecutive sheets fill 4 crates; one sheet per shelf costs 32 crates."""
    lanes = coalescing.LANES
    per_crate = coalescing.SECTOR // elem
    x0 = 24
    slot = (W - 2 * x0) / lanes
    c = Canvas(W, 600)

    def crate(x: float, y: float, used: set[int], w: float, h: float, name: str) -> None:
        c.rect(x, y, w, h, fill="none", stroke="fg", rx=3, width=1.5, title=f"{name}: shipped")
        sl = w / per_crate
        for k in range(per_crate):
            c.rect(x + k * sl + 2, y + 3, sl - 4, h - 6, fill="s1" if k in used else "grid", rx=1.5,
                   title=f"{name}, sheet {k}: " + ("used" if k in used else "packaging"))

    def header(y: float, title: str, stride: int) -> float:
        r = coalescing.compute({"stride": stride, "bytes_per_element": elem})
        carried = r["bytes_moved"] // elem
        used = r["bytes_requested"] // elem
        c.text(x0, y, title, bold=True, size=16)
        c.text(x0, y + 21, f"{r['sectors']} crates shipped: {used} of {carried} sheets used", fill="muted")
        return y + 36

    def students(y: float) -> None:
        for i in range(lanes):
            c.circle(x0 + (i + 0.5) * slot, y, 4.5, fill="s3", title=f"student {i}")

    # lucky: sheet i of one shelf for student i
    y = header(26, "Lucky row: 32 sheets side by side", lucky_stride)
    students(y + 6)
    shipped = _shipments(lucky_stride, elem)
    ycr = y + 40
    for i in range(lanes):
        lx = x0 + (i + 0.5) * slot
        line_no, sec, k = _sheet(i, lucky_stride, elem)
        order = shipped.index((line_no, sec))
        tx = x0 + order * per_crate * slot + (k + 0.5) * slot
        c.line(lx, y + 12, tx, ycr - 2, stroke="muted", width=1)
    for order, key in enumerate(shipped):
        used = {_sheet(i, lucky_stride, elem)[2] for i in range(lanes) if _sheet(i, lucky_stride, elem)[:2] == key}
        crate(x0 + order * per_crate * slot, ycr, used, per_crate * slot, 30, f"lucky row, crate {order}")
    y = ycr + 30 + 52

    # unlucky: student i's sheet is on shelf i, each in a crate of its own
    y = header(y, "Unlucky row: one sheet from each shelf", unlucky_stride)
    students(y + 6)
    shipped = _shipments(unlucky_stride, elem)
    per_row = lanes // per_crate  # four crates across, as wide as the lucky row's pallet
    ycr = y + 30
    gap = 10
    cw = (W - 2 * x0 - gap * (per_row - 1)) / per_row
    for order, key in enumerate(shipped):
        cx = x0 + (order % per_row) * (cw + gap)
        cy = ycr + (order // per_row) * 24
        used = {_sheet(i, unlucky_stride, elem)[2] for i in range(lanes)
                if _sheet(i, unlucky_stride, elem)[:2] == key}
        crate(cx, cy, used, cw, 20, f"unlucky row, crate {order}")
    rows = -(-len(shipped) // per_row)
    y = ycr + rows * 24 + 22
    for i, (col, lab) in enumerate((("s1", "sheet a student asked for"), ("grid", "packaging: shipped, unused"))):
        c.rect(x0, y + i * 24 - 8, 14, 16, fill=col, rx=1.5)
        c.text(x0 + 22, y + i * 24, lab, middle=True)
    c.height = y + 24 + 16
    return c


def _sheet(lane: int, stride: int, elem: int) -> tuple[int, int, int]:
    """(line, sector in line, element in sector) of a lane's first byte."""
    a = _addr(lane, stride, elem)
    return a // LINE, (a % LINE) // coalescing.SECTOR, (a % coalescing.SECTOR) // elem


def _shipments(stride: int, elem: int) -> list[tuple[int, int]]:
    """The (line, sector) pairs a warp's request touches, in address order."""
    touched = set()
    for i in range(coalescing.LANES):
        a = _addr(i, stride, elem)
        for s in range(a // coalescing.SECTOR, (a + elem - 1) // coalescing.SECTOR + 1):
            touched.add((s * coalescing.SECTOR // LINE, (s * coalescing.SECTOR % LINE) // coalescing.SECTOR))
    return sorted(touched)


# ------------------------------------------------------------------ 2. lanes to sectors and lines

def lanes_to_sectors(strides: tuple = (1, 2, 32), elem: int = 4) -> Canvas:
    """For each stride: the 32 lanes of a warp, the 128-byte lines their addresses fall in (only lines the
    request touches are drawn, in address order), the 32-byte sectors moved and the bytes asked for.

    A request that touches a few lines draws them side by side, each lane joined to the slot of its address;
    one that touches many stacks them, a row per line, and labels which lanes own the first and last."""
    lanes = coalescing.LANES
    sectors_per_line = LINE // coalescing.SECTOR
    per_sector = coalescing.SECTOR // elem
    slots = LINE // elem
    x0 = 24
    span = W - 2 * x0
    cell = span / lanes
    c = Canvas(W, 1200)
    y = 8
    for stride in strides:
        r = coalescing.compute({"stride": stride, "bytes_per_element": elem})
        touched = _shipments(stride, elem)
        lines = sorted({ln for ln, _ in touched})
        c.text(x0, y + 18, f"stride {stride}", bold=True, size=16)
        c.text(W - x0, y + 18, f"{r['sectors']} sectors, {r['efficiency']:.1%} useful".replace(".0%", "%"),
               anchor="end", bold=True, fill="good" if r["efficiency"] == 1 else "bad")
        c.text(x0, y + 40, "lane 0", fill="muted")
        c.text(W - x0, y + 40, f"lane {lanes - 1}", anchor="end", fill="muted")
        ly = y + 48
        for i in range(lanes):
            c.rect(x0 + i * cell + 1, ly, cell - 2, 14, fill="s3", rx=2, title=f"lane {i}: byte {_addr(i, stride, elem)}")
        few = len(lines) <= 4
        if few:  # one row, the lines side by side in address order
            gap = 12
            line_w = (span - gap * (len(lines) - 1)) / len(lines)
            row_h = 20
            my = ly + 14 + 44
            origin = {ln: (x0 + k * (line_w + gap), my) for k, ln in enumerate(lines)}
        else:  # a row per line, stacked
            line_w = span
            row_h = 9
            my = ly + 14 + 16
            origin = {ln: (x0, my + k * row_h) for k, ln in enumerate(lines)}
        slot_w = line_w / slots
        sec_w = per_sector * slot_w
        asked = {_sheet(i, stride, elem) for i in range(lanes)}
        for ln in lines:
            ox, oy = origin[ln]
            for sec in range(sectors_per_line):
                sx = ox + sec * sec_w
                moved = (ln, sec) in touched
                c.rect(sx, oy, sec_w, row_h, fill="grid" if moved else "bg", stroke="fg" if moved else "muted",
                       width=1,
                       title=f"stride {stride}, line {ln}, sector {sec}: " + ("moved" if moved else "not moved"))
                if moved:
                    for k in range(per_sector):
                        if (ln, sec, k) in asked:
                            c.rect(sx + k * slot_w + 1, oy + 2, slot_w - 2, row_h - 4, fill="s1")
        if few:
            # each lane joined to the slot of its address, ending on the line's top edge
            for i in range(lanes):
                ln, sec, k = _sheet(i, stride, elem)
                ox, oy = origin[ln]
                c.line(x0 + (i + 0.5) * cell, ly + 15, ox + (sec * per_sector + k + 0.5) * slot_w, oy,
                       stroke="muted", width=0.8)
            for ln in lines:
                ox, oy = origin[ln]
                c.text(ox + line_w / 2, oy + row_h + 18, f"bytes {ln * LINE}-{(ln + 1) * LINE - 1}", anchor="middle",
                       fill="muted")
            end = my + row_h + 26
        else:
            end = my + len(lines) * row_h
            owner = {}
            for i in range(lanes):
                owner.setdefault(_sheet(i, stride, elem)[0], []).append(i)
            tx = x0 + sec_w + 10
            for ln in (lines[0], lines[-1]):
                who = owner[ln]
                lab = f"← lane {who[0]}" if len(who) == 1 else f"← lanes {who[0]}-{who[-1]}"
                c.rect(tx - 4, origin[ln][1] + row_h / 2 - 9, len(lab) * 8 + 8, 18, fill="bg")
                c.text(tx, origin[ln][1] + row_h / 2, lab, middle=True, bold=True)
            note = "one lane per line"
            c.rect(tx - 4, (my + end) / 2 - 9, len(note) * 8 + 8, 18, fill="bg")
            c.text(tx, (my + end) / 2, note, middle=True, fill="muted")
        what = f"{len(lines)} line{'s' if len(lines) > 1 else ''} of 128 B"
        c.text(x0, end + 14, what, fill="muted")
        c.text(W - x0, end + 14, f"{r['bytes_moved']} B moved for {r['bytes_requested']} B", anchor="end",
               fill="muted")
        y = end + 40
    # legend
    c.rect(x0, y - 8, 16, 16, fill="s1")
    c.text(x0 + 22, y, "asked for", middle=True)
    c.rect(x0 + 120, y - 8, 16, 16, fill="grid", stroke="fg")
    c.text(x0 + 142, y, "sector moved", middle=True)
    c.rect(x0 + 284, y - 8, 16, 16, fill="bg", stroke="muted")
    c.text(x0 + 306, y, "sector not moved", middle=True)
    c.height = y + 18
    return c


# ------------------------------------------------------------------ 3. shared-memory banks

def _layouts(col: int, tile: int) -> list[tuple[str, str, dict[int, int], set[int], int]]:
    """(title, rule, lane -> physical word of element (lane, col), padding words, words in the tile)."""
    out = []
    for title, rule, pad in ((f"{tile} × {tile}", "plain", 0), (f"{tile} × {tile + 1}", "pad 1", 1)):
        pitch = tile + pad
        words = {r: r * pitch + col for r in range(tile)}
        pads = {r * pitch + c for r in range(tile) for c in range(tile, pitch)}
        out.append((title, rule, words, pads, tile * pitch))
    out.append((f"{tile} × {tile}", "swizzle c ⊕ r", {r: r * tile + (col ^ r) for r in range(tile)}, set(),
                tile * tile))
    return out


def bank_conflicts(col: int = 5, tile: int = 32) -> Canvas:
    """A warp reads column `col` of a tile of floats (lane r reads row r). Each panel draws the tile's words
    in bank order (word w in bank w mod 32, one row of 32 banks per 128 bytes) with the column's words
    filled, and below it how many lanes each bank must serve."""
    banks = coalescing.BANKS
    cs = 5.2
    pw = banks * cs
    gap = (W - 3 * pw - 24) / 2
    x0 = 12
    c = Canvas(W, 600)
    c.text(W / 2, 20, f"a warp reads column {col}: lane r reads row r", anchor="middle", bold=True, size=16)
    top = 74
    layouts = _layouts(col, tile)
    max_rows = max(-(-n // banks) for *_, n in layouts)
    hist_top = top + max_rows * cs + 56
    hist_h = 3 * tile
    for p, (title, rule, words, pads, nwords) in enumerate(layouts):
        px = x0 + p * (pw + gap)
        c.text(px + pw / 2, top - 32, title, anchor="middle", bold=True)
        c.text(px + pw / 2, top - 13, rule, anchor="middle", fill="muted")
        nrows = -(-nwords // banks)
        c.rect(px, top, pw, nrows * cs, fill="grid")
        per_bank = Counter(w % banks for w in set(words.values()))
        degree = max(per_bank.values())
        hot = "bad" if degree > 1 else "good"
        for w in sorted(pads):
            c.rect(px + (w % banks) * cs, top + (w // banks) * cs, cs, cs, fill="muted", title=f"{rule}, padding word {w}")
        for lane, w in words.items():
            c.rect(px + (w % banks) * cs, top + (w // banks) * cs, cs, cs, fill=hot,
                   title=f"{rule}, lane {lane}: row {lane}, column {col}, word {w}, bank {w % banks}")
        c.text(px, top + nrows * cs + 18, "bank 0", fill="muted")
        c.text(px + pw, top + nrows * cs + 18, "31", anchor="end", fill="muted")
        # lanes per bank
        base = hist_top + hist_h
        c.line(px, base, px + pw, base, stroke="fg")
        for b in range(banks):
            n = per_bank.get(b, 0)
            if n:
                c.rect(px + b * cs + 0.5, base - n * 3, cs - 1, n * 3, fill=hot, title=f"{rule}, bank {b}: {n} lane(s)")
        c.text(px + pw / 2, base + 22, f"{degree}-way conflict" if degree > 1 else "1 lane per bank", anchor="middle",
               bold=True, fill=hot)
        c.text(px + pw / 2, base + 42, f"{degree} passes" if degree > 1 else "1 pass", anchor="middle", fill=hot)
    c.text(x0, hist_top - 6, "lanes per bank", fill="muted")
    # Legend: what the cells are, and why a padded row does not line up with a drawn row.
    y = hist_top + hist_h + 72
    for i, (fill, label) in enumerate((("bad", "a word the warp reads, sharing a bank"),
                                       ("good", "a word the warp reads, alone in its bank"),
                                       ("muted", "a padding word, never read"), ("grid", "the tile's other words"))):
        c.rect(x0, y + 22 * i - 11, 14, 14, fill=fill)
        c.text(x0 + 22, y + 22 * i, label, middle=True)
    y += 22 * 4 + 4
    for j, line in enumerate(wrap("Cells are drawn 32 words to a row, one column per bank, so a padded tile's "
                                  "33-word rows wrap across the drawn rows.", 62)):
        c.text(x0, y + 20 * j, line, fill="muted")
    c.height = y + 20 * j + 12
    return c
