"""Figures of module B04 (fp8 and below): the two rulers, the bit fields, the grid of values, scaling.

Every value written or placed in these figures is decoded or encoded by tutor_build.models.fp8, the code
the number-formats player and the claims test of B04 use; nothing is typed in by hand.
"""

from __future__ import annotations

import math
import re
from statistics import NormalDist

from ..models import fp8
from ..render.svg import MIN_FONT, Canvas, Scale, esc, wrap

NAMES = {"e4m3": "OCP E4M3", "e4m3fnuz": "FNUZ E4M3", "e5m2": "OCP E5M2", "e5m2fnuz": "FNUZ E5M2"}


def num(v: float) -> str:
    """A decoded value as a label: NaN, -0, 448, 0.5, 2^-9."""
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "−inf" if v < 0 else "inf"
    if v == 0:
        return "−0" if math.copysign(1.0, v) < 0 else "0"
    m, e = math.frexp(abs(v))
    if m == 0.5 and abs(v) < 0.01:
        return f"{'−' if v < 0 else ''}2^{e - 1}".replace("-", "−")
    return f"{v:g}".replace("-", "−")


def text_pow(c: Canvas, x: float, y: float, s: str, size: float = MIN_FONT, **kw) -> None:
    """Canvas.text, with each power written "2^−9" drawn as a raised exponent (a tspan) instead of a caret.
    The exponent keeps at least the canvas's minimum text size, so it stays readable on a phone."""
    c.text(x, y, s.replace("^", ""), size=size, **kw)  # checks the size and colour, builds the attributes
    if "^" not in s:
        return
    part = c.parts.pop()
    head = part[: part.index(">") + 1]
    pieces = re.split(r"\^([−-]?\d+)", s)  # text, exponent, text, exponent, ..., text
    rise = f"{size * 0.42:.1f}"
    small = f"{max(MIN_FONT, size * 0.8):g}"
    body = [esc(pieces[0])]
    for i in range(1, len(pieces), 2):
        body.append(f'<tspan dy="-{rise}" font-size="{small}">{esc(pieces[i])}</tspan>')
        if pieces[i + 1]:
            body.append(f'<tspan dy="{rise}">{esc(pieces[i + 1])}</tspan>')
    c.parts.append(head + "".join(body) + "</text>")


def bits(code: int, fmt: str) -> str:
    """The byte as sign.exponent.mantissa, e.g. 0.0111.000."""
    f = fp8.fmt_info(fmt)
    b = f"{code:08b}"
    return f"{b[0]}.{b[1:1 + f.ebits]}.{b[1 + f.ebits:]}"


def pattern(codes: list[int], fmt: str) -> str:
    """One pattern for a set of codes: bits all codes share, S for a free sign, x for a free bit."""
    f = fp8.fmt_info(fmt)
    if not codes:
        return "none"
    strs = [f"{c:08b}" for c in codes]
    out = []
    for i in range(8):
        col = {s[i] for s in strs}
        out.append(col.pop() if len(col) == 1 else ("S" if i == 0 else "x"))
    s = "".join(out)
    text = f"{s[0]}.{s[1:1 + f.ebits]}.{s[1 + f.ebits:]}"
    free = s.count("x") + s.count("S")
    if len(codes) < 2 ** free:  # not every combination of the free bits: say which one is missing
        missing = sorted(set(range(2 ** s[1:].count("x"))) - {c & ((1 << f.mbits) - 1) for c in codes})
        text += " (x ≠ " + ",".join(f"{m:0{f.mbits}b}" for m in missing) + ")"
    return text


def nan_codes(fmt: str) -> list[int]:
    return [c for c in range(256) if math.isnan(fp8.decode(c, fmt))]


def inf_codes(fmt: str) -> list[int]:
    return [c for c in range(256) if math.isinf(fp8.decode(c, fmt))]


# ----------------------------------------------------------------------------- section 1: two rulers


def rulers(fmt_a: str = "e4m3", fmt_b: str = "e4m3fnuz", top_code: int = 0x40, mark: int = 0x38) -> Canvas:
    """One set of marks (the codes 0..top_code, placed at their value under fmt_a), labelled by two factories."""
    codes = list(range(top_code + 1))
    va = [fp8.decode(c, fmt_a) for c in codes]
    tx = Scale(0, va[-1], 40, 530)
    f = fp8.fmt_info(fmt_a)
    labelled = [c for c in codes if (c & ((1 << f.mbits) - 1)) == 0 and va[c] >= va[-1] / 8] + [0]
    labelled += [c for c in codes if fp8.decode(c, fmt_a) == 1.5 * fp8.decode(mark, fmt_a)]
    c = Canvas(560, 400)
    c.text(8, 22, f"Factory 1 ({NAMES[fmt_a]}) prints:", bold=True)
    c.text(8, 170, f"Factory 2 ({NAMES[fmt_b]}) prints, on the same marks ↑", bold=True)
    y0, y1 = 64, 112  # the ruler body
    c.rect(30, y0, 510, y1 - y0, fill="grid", rx=4)
    for code in codes:
        x = tx(va[code])
        big = code in labelled
        hot = code == mark
        c.line(x, y0, x, y0 + (26 if big else 12), stroke="s2" if hot else "fg", width=2.5 if hot else 1)
        c.rect(x - 2, y0, 4, y1 - y0, fill="none",
               title=f"mark {code:#04x}: {num(fp8.decode(code, fmt_a))} on ruler 1, {num(fp8.decode(code, fmt_b))} on ruler 2")
    for code in labelled:
        x = tx(va[code])
        hot = code == mark
        a, b = num(fp8.decode(code, fmt_a)), num(fp8.decode(code, fmt_b))
        c.text(x, 54, a, anchor="middle", bold=hot, fill="s2" if hot else "fg", size=16 if hot else 14)
        c.text(x, 136, b, anchor="middle", bold=hot, fill="s2" if hot else "fg", size=16 if hot else 14)
    # the marks crowd towards zero
    c.text(tx(va[0x20]) + 4, y1 - 10, "←crowded", fill="muted")
    # what the highlighted mark means on each ruler, and every mark that is not halved but changes meaning
    x = 8
    lines = [(f"mark 0x{mark:02X}:", f"{num(fp8.decode(mark, fmt_a))} on ruler 1, {num(fp8.decode(mark, fmt_b))} on ruler 2",
              "s2")]
    for code in changed_marks(fmt_a, fmt_b):
        lines.append((f"mark 0x{code:02X}:",
                      f"{num(fp8.decode(code, fmt_a))} on ruler 1, {num(fp8.decode(code, fmt_b))} on ruler 2", "bad"))
    y = 206
    for head, body, col in lines:
        c.text(x, y, head, bold=True, fill=col, mono=True)
        c.text(x + 100, y, body)
        y += 24
    far = [f"0x{code:02X}" for code in changed_marks(fmt_a, fmt_b) if code > top_code and code != 0x80]
    note = f"0x80 sits at zero, beside 0x00; {' and '.join(far)} lie off this stretch, at the two far ends of the ruler."
    for i, s in enumerate(wrap(note, 66)):
        c.text(x, y + 6 + i * 20, s, fill="muted")
    c.height = y + 6 + i * 20 + 12
    return c


def changed_marks(fmt_a: str, fmt_b: str) -> list[int]:
    """The codes whose fmt_b label is not their fmt_a label halved: a NaN on one side, or a sign that changes.
    (The codes are ordered 0x80 first, then by code.)"""
    out = []
    for code in range(256):
        a, b = fp8.decode(code, fmt_a), fp8.decode(code, fmt_b)
        if math.isnan(a) or math.isnan(b) or b != a / 2 or math.copysign(1.0, a) != math.copysign(1.0, b):
            out.append(code)
    return sorted(out, key=lambda k: (k != 0x80, k))


# ----------------------------------------------------------------------------- section 2: bit fields


def _cell(c: Canvas, x: float, y: float, fmt: str) -> None:
    f = fp8.fmt_info(fmt)
    c.text(x, y + 16, NAMES[fmt], bold=True, size=16)
    c.text(x + 262, y + 16, f"bias {f.bias}", anchor="end", fill="muted")
    by, w = y + 28, 27
    fields = ["S"] + ["E"] * f.ebits + ["M"] * f.mbits
    for i, fld in enumerate(fields):
        fill = {"S": "s6", "E": "s1", "M": "s3"}[fld]
        c.rect(x + i * w, by, w - 2, 30, fill=fill, rx=3, title={"S": "sign", "E": "exponent", "M": "mantissa"}[fld])
        c.text(x + i * w + (w - 2) / 2, by + 16, fld, anchor="middle", middle=True, fill="bg", bold=True)
    c.text(x + 8 * w + 6, by + 16, f"1/{f.ebits}/{f.mbits}", middle=True, fill="muted")
    one = fp8.encode(1.0, fmt)
    facts = [
        ("max", f"{bits(f.max_code, fmt)} = {num(fp8.decode(f.max_code, fmt))}"),
        ("NaN", pattern(nan_codes(fmt), fmt)),
        ("inf", pattern(inf_codes(fmt), fmt)),
        ("0x80", f"= {num(fp8.decode(0x80, fmt))}"),
        ("1.0", f"= 0x{one:02X}"),
        ("tiny", f"{num(fp8.decode(0x01, fmt))} (0x01)"),
    ]
    ly = by + 58
    for head, body in facts:
        hot = head == "0x80"
        c.text(x, ly, head, fill="bad" if hot and "NaN" in body else "muted", bold=hot)
        text_pow(c, x + 44, ly, body, mono=True, fill="bad" if hot and "NaN" in body else "fg")
        ly += 21


def bitfields(formats: list[str]) -> Canvas:
    """A 2 x 2 grid of formats: OCP on the left, FNUZ on the right; E4M3 above, E5M2 below."""
    rows = (len(formats) + 1) // 2
    cell_h = 28 + 30 + 30 + 6 * 21 + 18
    c = Canvas(560, rows * cell_h + 6)
    for i, fmt in enumerate(formats):
        _cell(c, 8 + (i % 2) * 284, 4 + (i // 2) * cell_h, fmt)
    c.line(280, 8, 280, rows * cell_h - 10, stroke="grid")
    return c


# ----------------------------------------------------------------------------- section 2: grid of values


def grid(linear_max: float = 8.0, linear_formats: list[str] = ("e4m3", "e5m2"),
         log_formats: list[str] = ("e4m3", "e4m3fnuz")) -> Canvas:
    """Top: every value of each format in [0, linear_max] on a linear axis, with the step of each binade.
    Bottom: every positive finite value of two formats on a log2 axis, each binade one width."""
    c = Canvas(560, 470)
    tx = Scale(0, linear_max, 40, 530)
    y = 20
    c.text(8, y, f"Linear axis, 0 to {linear_max:g}", bold=True, size=16)
    y += 20
    for fmt in linear_formats:
        f = fp8.fmt_info(fmt)
        vals = sorted({fp8.decode(k, fmt) for k in range(0x80) if 0 <= fp8.decode(k, fmt) <= linear_max})
        c.text(8, y + 16, NAMES[fmt], bold=True)
        y += 26
        c.line(tx.a, y + 20, tx.b, y + 20, stroke="fg")
        for v in vals:
            c.line(tx(v), y + 8, tx(v), y + 20, stroke="s1" if f.mbits == 3 else "s2", width=1.2)
        # the step of each binade that is wide enough to be labelled
        e = math.floor(math.log2(linear_max)) - 1
        while 2.0 ** e >= linear_max / 8:
            lo, hi = 2.0 ** e, 2.0 ** (e + 1)
            step = fp8.decode(fp8.encode(lo, fmt) + 1, fmt) - lo
            c.line(tx(lo) + 2, y + 28, tx(hi) - 2, y + 28, stroke="muted")
            label = f"step {step:g}" if tx(hi) - tx(lo) > 90 else f"{step:g}"
            c.text((tx(lo) + tx(hi)) / 2, y + 46, label, anchor="middle", fill="muted")
            e -= 1
        y += 58
    for v in range(0, int(linear_max) + 1, 2 if linear_max > 8 else 1):
        c.text(tx(v), y + 2, f"{v}", anchor="middle", fill="muted")
    y += 36
    c.text(8, y, "Log axis: every binade the same width", bold=True, size=16)
    y += 14
    lows = [fp8.decode(0x01, fmt) for fmt in log_formats]
    highs = [fp8.fmt_info(fmt).max for fmt in log_formats]
    e_lo, e_hi = math.floor(math.log2(min(lows))), math.ceil(math.log2(max(highs)))
    lx = Scale(2.0 ** e_lo, 2.0 ** e_hi, 40, 530, log=True)
    for fmt in log_formats:
        f = fp8.fmt_info(fmt)
        vals = [fp8.decode(k, fmt) for k in range(1, f.max_code + 1)]
        c.text(8, y + 16, NAMES[fmt], bold=True)
        text_pow(c, 552, y + 16, f"{num(vals[0])} to {num(vals[-1])}", anchor="end", fill="muted")
        y += 24
        c.line(lx.a, y + 20, lx.b, y + 20, stroke="fg")
        for k, v in enumerate(vals, start=1):
            sub = k < (1 << f.mbits)
            c.line(lx(v), y + 6, lx(v), y + 20, stroke="warn" if sub else "s1", width=1)
        y += 30
    for e in range(e_lo, e_hi + 1):
        if e % 3 == 0:
            c.line(lx(2.0 ** e), y - 8, lx(2.0 ** e), y - 2, stroke="fg")
            text_pow(c, lx(2.0 ** e), y + 18, f"2^{e}".replace("-", "−"), size=16, anchor="middle", fill="muted")
    y += 38
    c.line(8, y - 4, 24, y - 4, stroke="warn", width=3)
    c.text(30, y, "subnormals (thin out)", fill="muted")
    c.line(220, y - 4, 236, y - 4, stroke="s1", width=3)
    c.text(242, y, "normals: 8 per binade", fill="muted")
    c.height = y + 10
    return c


# ----------------------------------------------------------------------------- section 2: scaling


def _sample(n: int, sigma: float) -> list[float]:
    nd = NormalDist(0.0, sigma)
    return [nd.inv_cdf((i + 0.5) / n) for i in range(n)]


def quantize_stats(xs: list[float], fmt: str, scale: float) -> dict:
    """What casting s*x to fmt does to a tensor: share rounded to zero, share subnormal, mean relative error."""
    f = fp8.fmt_info(fmt)
    zero = sub = 0
    err = 0.0
    for x in xs:
        code = fp8.encode(x * scale, fmt, saturate=True)
        v = fp8.decode(code, fmt) / scale
        if v == 0:
            zero += 1
        elif abs(v) * scale < f.min_normal:
            sub += 1
        err += abs(v - x) / abs(x)
    n = len(xs)
    return {"zero": zero / n, "subnormal": sub / n, "rel_error": err / n}


def scaling(sigma: float = 1e-3, n: int = 4000, fmt: str = "e4m3", bin_width: float = 0.5) -> Canvas:
    """Histogram of log2|x| of a bell-shaped tensor, cast as is and after s = fmax / amax, against the
    format's zones (rounds to zero, subnormal, normal, overflow)."""
    f = fp8.fmt_info(fmt)
    xs = _sample(n, sigma)
    amax = max(abs(x) for x in xs)
    s = f.max / amax
    cases = [("as is", 1.0), (f"× s = {num(f.max)} / amax", s)]
    lo_e = math.floor(math.log2(amax)) - 12
    hi_e = math.ceil(math.log2(f.max)) + 2
    tx = Scale(lo_e, hi_e, 40, 540)
    zero_below = math.log2(f.min_subnormal) - 1  # below half the smallest subnormal a value rounds to 0
    zones = [(lo_e, zero_below, "bad", "→ 0"), (zero_below, math.log2(f.min_normal), "warn", "sub"),
             (math.log2(f.min_normal), math.log2(f.max), "good", "normal"), (math.log2(f.max), hi_e, "bad", "over")]
    c = Canvas(560, 100)
    y = 10
    for label, scale in cases:
        st = quantize_stats(xs, fmt, scale)
        c.text(8, y + 16, label, bold=True, size=16)
        c.text(552, y + 16, f"amax → {num(amax * scale) if scale != 1 else f'{amax:.2g}'}", anchor="end", fill="muted")
        y += 28
        top, hgt = y, 110
        for a, b, col, name in zones:
            c.rect(tx(max(a, lo_e)), top, tx(min(b, hi_e)) - tx(max(a, lo_e)), hgt, fill=col,
                   title=f"{name}: 2^{a:.1f} to 2^{b:.1f}")
        c.raw(f'<rect x="{tx.a}" y="{top}" width="{tx.b - tx.a}" height="{hgt}" class="fi-bg" fill-opacity="0.78"/>')
        for a, b, col, name in zones:
            if tx(min(b, hi_e)) - tx(max(a, lo_e)) > 34:
                c.text((tx(max(a, lo_e)) + tx(min(b, hi_e))) / 2, top + 18, name, anchor="middle", fill=col, bold=True)
        counts: dict[int, int] = {}
        for x in xs:
            k = math.floor(math.log2(abs(x) * scale) / bin_width)
            counts[k] = counts.get(k, 0) + 1
        peak = max(counts.values())
        for k, cnt in sorted(counts.items()):
            x0 = tx(max(k * bin_width, lo_e))
            x1 = tx(min((k + 1) * bin_width, hi_e))
            bh = cnt / peak * (hgt - 30)
            c.rect(x0, top + hgt - bh, x1 - x0, bh, fill="s1", stroke="bg",
                   title=f"{cnt} of {n} elements with |x| in 2^{k * bin_width:g} to 2^{(k + 1) * bin_width:g}")
        c.line(tx.a, top + hgt, tx.b, top + hgt, stroke="fg")
        y = top + hgt + 22
        c.text(8, y, f"round to 0: {st['zero']:.0%}", fill="bad" if st["zero"] > 0.005 else "fg", bold=True)
        c.text(200, y, f"subnormal: {st['subnormal']:.0%}", fill="muted")
        c.text(552, y, f"mean relative error {st['rel_error']:.1%}", anchor="end")
        y += 30
    for e in range(lo_e, hi_e + 1):
        if e % 4 == 0:
            c.line(tx(e), y - 22, tx(e), y - 16, stroke="fg")
            text_pow(c, tx(e), y + 4, f"2^{e}".replace("-", "−"), size=16, anchor="middle", fill="muted")
    c.text(290, y + 26, "value cast, |s·x|, log scale", anchor="middle")
    c.height = y + 36
    return c
