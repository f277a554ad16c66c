"""C03 kv_fragmentation: where the memory of a KV pool goes under a serving workload, contiguous slots against
pages.

A pool of CAPACITY token slots serves a queue of requests (prompt length, output length, both drawn at random;
the server knows only the request's max_new_tokens limit in advance, never its real output length). Each step
every running request appends one token; a request leaves when its output is done; the queue is admitted first
come, first served. Three ways to hold the cache:

  contiguous_max   one fixed slot of MAX_LEN tokens per request (a static cache): no holes, much unused slot
  contiguous_fit   prompt + max_new_tokens reserved in one contiguous range, first fit: holes appear
  paged_b16/_b32   pages of 16 or 32 token slots taken one at a time as the sequence grows (PagedAttention);
                   when no page is free the newest request is preempted (its pages freed, it rejoins the queue
                   at its head and its cache is recomputed from its tokens when it is admitted again)
  paged_b16_wm5    pages of 16 with an admission watermark: a request is admitted only if at least 5% of the
                   pages stay free after it is (fewer preemptions, a smaller batch)

At every step while requests are waiting, the pool splits into: used (slots holding a token's K and V),
internal (allocated to a request but holding nothing: the unused end of a slot, reservation or last page),
external (free, but in holes too small for the request at the head of the queue), free (the rest).
Checked: the four parts sum to the pool at every step, every running request's pages cover its tokens (exactly
the pages they need), paged internal waste is below one page per request, at least one step was accounted, the
allocator never hands out a slot twice, and every request ends with exactly its output; the prefix-sharing
count is checked against its closed form, also for two system prompts that differ only in their first page.
Also counted: the preemptions, the tokens they make the server recompute (a preempted request's whole cache,
prompt and output so far, is prefilled again; the simulation charges no step for it), and the mean running
batch over all steps and over the steps with a request waiting.

    python labs/C03/python/kv_fragmentation.py            checks, then the table
    python labs/C03/python/kv_fragmentation.py --bench    the same, and one record per scheme and part
"""

from __future__ import annotations

import os
import random
import re
import sys
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "common", "python"))
import torch  # noqa: E402

import tutor_lab as tl  # noqa: E402

LAB = "kv_fragmentation"
CAPACITY = 65536  # token slots in the pool (fractions are what matter; Llama 3.1 8B: 128 KiB per slot, 8 GiB)
MAX_LEN = 2048  # the model's context limit the static cache sizes every slot for
MAX_NEW = 1024  # the max_new_tokens every request declares
PAGES = (16, 32)
WATERMARK = 5  # per cent of the pages the watermark variant keeps free after an admission
SCHEMES = ("contiguous_max", "contiguous_fit") + tuple(f"paged_b{p}" for p in PAGES) + (f"paged_b16_wm{WATERMARK}",)


def workload(n: int, seed: int) -> list[tuple[int, int]]:
    """(prompt, output) pairs: prompts uniform in 16..1024, outputs uniform in 8..MAX_NEW (synthetic)."""
    rng = random.Random(seed)
    return [(rng.randint(16, 1024), rng.randint(8, MAX_NEW)) for _ in range(n)]


def first_fit(free: list[list[int]], need: int) -> int | None:
    """Take `need` contiguous slots from the first free range [start, end) long enough; None if none is."""
    for i, (start, end) in enumerate(free):
        if end - start >= need:
            if end - start == need:
                free.pop(i)
            else:
                free[i][0] = start + need
            return start
    return None


def release(free: list[list[int]], start: int, size: int) -> None:
    """Give [start, start + size) back, merging it with the free ranges either side (kept sorted)."""
    free.append([start, start + size])
    free.sort()
    merged = [free[0]]
    for s, e in free[1:]:
        if s < merged[-1][1]:
            raise AssertionError(f"slot {s} freed twice or overlapping [{merged[-1][0]}, {merged[-1][1]})")
        if s == merged[-1][1]:
            merged[-1][1] = e
        else:
            merged.append([s, e])
    free[:] = merged


def pages_for(tokens: int, page: int) -> int:
    """Pages a sequence of `tokens` tokens occupies."""
    return -(-tokens // page)


def ceil_div(a: int, b: int) -> int:
    """The checks' own ceiling division (they never trust the pages_for under test)."""
    return (a + b - 1) // b


def simulate(scheme: str, reqs: list[tuple[int, int]], capacity: int = CAPACITY) -> dict:
    """Run the queue to the end. Returns the time-averaged parts of the pool (fractions) over the steps with a
    request waiting, the steps taken, the mean running batch over all steps and over the steps with a request
    waiting, the preemptions and the tokens they make the server recompute."""
    page = int(re.search(r"_b(\d+)", scheme).group(1)) if scheme.startswith("paged") else 0
    wm = re.search(r"_wm(\d+)", scheme)
    reserve = ceil_div((capacity // page) * int(wm.group(1)), 100) if page and wm else 0  # pages kept free
    queue = [[i, p, 0] for i, (p, _) in enumerate(reqs)]  # [request, tokens held, tokens generated]
    running = []  # [request, length, generated, start slot or page list, reserved slots]
    free = [[0, capacity]]
    free_pages = list(range(capacity // page)) if page else []
    sums = {"used": 0.0, "internal": 0.0, "external": 0.0, "free": 0.0}
    steps = loaded = batch_sum = waiting_sum = preempted = recomputed = 0
    done = 0
    while queue or running:
        # Admit from the head of the queue while it fits.
        while queue:
            rid, length, gen = queue[0]
            prompt = reqs[rid][0]
            if page:
                need = pages_for(length + 1, page)  # room for its cache and the next token
                if len(free_pages) - need < reserve:  # reserve = 0: it fits; else the watermark stays free
                    break
                held = [free_pages.pop() for _ in range(pages_for(length, page))]
                running.append([rid, length, gen, held, 0])
            else:
                size = MAX_LEN if scheme == "contiguous_max" else prompt + MAX_NEW
                start = first_fit(free, size)
                if start is None:
                    break
                running.append([rid, length, gen, start, size])
            queue.pop(0)
        if queue and not running:  # nothing will ever leave to make room: fail instead of spinning
            why = (f"it needs {pages_for(queue[0][1] + 1, page)} of the {capacity // page} pages" if page else
                   f"first_fit found no free range for its slots in the empty pool of {capacity}")
            raise AssertionError(f"{scheme}: request {queue[0][0]} cannot be admitted into an empty pool ({why})")
        if page:  # every running request holds exactly the pages its tokens need (checked without pages_for)
            for r in running:
                held, want = len(r[3]), ceil_div(r[1], page)
                if held != want:
                    why = (f"its tokens do not fit (they need {want})" if held * page < r[1] else
                           f"{held - want} more than its tokens need ({want})")
                    raise AssertionError(f"{scheme}: request {r[0]} holds {held} page(s) of {page} for its {r[1]} "
                                         f"tokens: {why}")
        # Account the pool as it stands, while someone waits.
        if queue:
            used = sum(r[1] for r in running)
            if page:
                allocated = sum(len(r[3]) for r in running) * page
                external = 0  # any free page serves any request
            else:
                allocated = sum(r[4] for r in running)
                head = MAX_LEN if scheme == "contiguous_max" else reqs[queue[0][0]][0] + MAX_NEW
                external = sum(e - s for s, e in free if e - s < head)
            parts = {"used": used, "internal": allocated - used, "external": external,
                     "free": capacity - allocated - external}
            if sum(parts.values()) != capacity or min(parts.values()) < 0:
                raise AssertionError(f"{scheme}: the parts {parts} do not make up the pool of {capacity}")
            if page and parts["internal"] >= page * max(1, len(running)):
                raise AssertionError(f"{scheme}: internal waste {parts['internal']} is a page or more per request")
            for key in sums:
                sums[key] += parts[key] / capacity
            loaded += 1
            waiting_sum += len(running)
        # One decode step: every running request appends a token.
        steps += 1
        batch_sum += len(running)
        for r in list(running):
            if r not in running:  # preempted earlier in this step
                continue
            if page and r[1] % page == 0 and len(r[3]) * page == r[1]:  # its last page is full
                while not free_pages:  # preempt the newest other request; its pages come back
                    victim = running[-1] if running[-1] is not r else running[-2]
                    running.remove(victim)
                    free_pages += victim[3]
                    queue.insert(0, [victim[0], victim[1], victim[2]])  # recomputed from its tokens later
                    preempted += 1
                    recomputed += victim[1]  # its whole cache is prefilled again when it is readmitted
                r[3].append(free_pages.pop())
            r[1] += 1
            r[2] += 1
            if r[2] == reqs[r[0]][1]:
                running.remove(r)
                done += 1
                if page:
                    free_pages += r[3]
                else:
                    release(free, r[3], r[4])
    if done != len(reqs):
        raise AssertionError(f"{scheme}: {done} of {len(reqs)} requests finished")
    if (page and sorted(free_pages) != list(range(capacity // page))) or (not page and free != [[0, capacity]]):
        raise AssertionError(f"{scheme}: the pool is not whole again after the last request")
    if loaded == 0:
        raise AssertionError(f"{scheme}: no step had a request waiting, so nothing was accounted (in this pool some "
                             f"request must wait: does each admitted request take the room its tokens need?)")
    out = {k: v / loaded for k, v in sums.items()}
    out.update(steps=steps, batch=batch_sum / steps, batch_waiting=waiting_sum / loaded, preempted=preempted,
               recomputed=recomputed, prompt_tokens=sum(p for p, _ in reqs))
    return out


def prefix_pages(shared: int, users: list[int], page: int, seed: int, forked: bool = False) -> tuple[int, int]:
    """Pages for requests that all start with the same `shared`-token system prompt followed by their own
    tokens: (without sharing, with sharing). Sharing as vLLM's prefix cache does it: a full page is
    identified by a hash of its parent page's hash and its own token ids, so equal prefixes give equal hashes.
    forked: two system prompts that differ only in their first page (the odd requests get the second), so
    their later pages hold the same tokens behind different prefixes and must not be shared."""
    rng = random.Random(seed)
    system = [rng.randrange(128256) for _ in range(shared)]  # token ids (Llama 3's vocabulary size)
    other = ([(t + 1) % 128256 for t in system[:page]] + system[page:]) if forked else system
    plain, seen = 0, set()
    for i, n in enumerate(users):
        tokens = (other if i % 2 else system) + [rng.randrange(128256) for _ in range(n)]
        plain += pages_for(len(tokens), page)
        parent = None
        for j in range(0, len(tokens), page):
            block = tuple(tokens[j:j + page])
            if len(block) < page:  # a partial last page is private (it is still being written)
                seen.add(("private", i))
                break
            parent = hash((parent, block))
            seen.add(parent)
    return plain, len(seen)


def prefix_closed_form(shared: int, users: list[int], page: int, forked: bool = False) -> tuple[int, int]:
    """The shared prompt's full pages are stored once (once per system prompt when forked: they differ from
    the first page on, so no page of one is a page of the other); the rest of every request is its own.
    Computed with the checks' own ceil_div, not with pages_for."""
    plain = sum(ceil_div(shared + n, page) for n in users)
    common = shared // page
    prompts = 2 if forked and len(users) > 1 else 1
    return plain, prompts * common + sum(ceil_div(shared + n, page) - common for n in users)


N_REQUESTS = 2000
WORKLOAD_SEED = 2023  # fixed: the records are the same workload on every machine
PREFIX = dict(shared=1000, users=64, page=16)  # a 1,000-token system prompt before 64 requests


def _failed(exc: Exception) -> str:
    """An exception as one line, with the line of this file it came from (no traceback)."""
    here = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == os.path.abspath(__file__)]
    where = f" (at line {here[-1].lineno}: {here[-1].line})" if here and not isinstance(exc, AssertionError) else ""
    return (str(exc) if isinstance(exc, AssertionError) else f"{type(exc).__name__}: {exc}") + where


def run_checks(args) -> None:
    # A small pool and fresh random requests (from the run's seed), so holes and preemption happen.
    reqs = workload(60, args.seed)
    for scheme in SCHEMES:
        try:
            r = simulate(scheme, reqs, capacity=8192)
            ok, err = True, ""
        except Exception as exc:  # the simulation's own assertions, or an error in a TODO: a failed check
            ok, err = False, _failed(exc)
        tl.emit({"event": "check", "lab": LAB, "variant": scheme, "size": "60 requests, 8192 slots", "ok": ok,
                 "seed": args.seed, **({"error": err} if err else {"steps": r["steps"]})})
        if not ok:
            tl._failures += 1
    rng = random.Random(args.seed)
    users = [rng.randint(1, 300) for _ in range(17)]
    for page in PAGES:
        for forked in (False, True):
            variant = f"prefix_b{page}" + ("_forked" if forked else "")
            size = "333 shared, 17 requests" + (", two system prompts differing in their first page" if forked else "")
            want = prefix_closed_form(333, users, page, forked)
            try:
                got = prefix_pages(333, users, page, args.seed, forked)
                ok, err = got == want, ""
            except Exception as exc:
                got, ok, err = None, False, _failed(exc)
            if not ok and not err:
                err = f"(without sharing, with sharing) = {list(got)}, want {list(want)}"
                if got[0] != want[0]:
                    err += "; without sharing every request holds its own pages: sum of pages_for(its tokens)"
                elif forked and got[1] < want[1]:
                    err += ("; too few pages with sharing: a page's keys and values depend on every token before "
                            "it, so the same tokens behind different earlier pages are different pages")
                else:
                    err += "; with sharing each distinct full page counts once, each partial last page per request"
            tl.emit({"event": "check", "lab": LAB, "variant": variant, "size": size, "ok": ok,
                     "got": list(got) if got else None, "want": list(want), "seed": args.seed,
                     **({"error": err} if err else {})})
            if not ok:
                tl._failures += 1


def table(n: int) -> dict:
    reqs = workload(n, WORKLOAD_SEED)
    return {scheme: simulate(scheme, reqs) for scheme in SCHEMES}


def batch_ceiling(reqs: list[tuple[int, int]], capacity: int = CAPACITY) -> float:
    """The most requests the pool can run on average: its slots over the mean tokens a running request holds
    (each of a request's output steps holds its prompt plus the tokens generated so far). No scheme's mean
    batch over all steps can exceed it: every step's running requests hold at most `capacity` tokens."""
    held = sum(p * o + o * (o - 1) // 2 for p, o in reqs)  # sum over every request-step of its tokens held
    return capacity * sum(o for _, o in reqs) / held


def main() -> int:
    args = tl.parse_args()
    run_checks(args)
    if tl._failures:  # the table would run on the same code: its numbers would mean nothing
        print(f"{LAB}: fix the failing checks first (each check line above says what went wrong); "
              f"the table and the records come after", file=sys.stderr)
        return tl.finish(LAB)
    n = 300 if args.quick else N_REQUESTS
    try:
        rows = table(n)
    except Exception as exc:  # checked code that still fails on the big pool: a failed check, not a traceback
        tl.emit({"event": "check", "lab": LAB, "variant": "table", "size": f"{n} requests, {CAPACITY} slots",
                 "ok": False, "seed": WORKLOAD_SEED, "error": _failed(exc)})
        tl._failures += 1
        return tl.finish(LAB)
    for scheme, r in rows.items():
        print(f"{scheme:15s} used {r['used']:6.1%}  internal {r['internal']:6.1%}  external {r['external']:6.1%}  "
              f"free {r['free']:6.1%}  batch {r['batch']:6.1f}  steps {r['steps']}  preempted {r['preempted']}",
              file=sys.stderr)
    for scheme, r in rows.items():
        print(f"{scheme:15s} batch while a request waits {r['batch_waiting']:6.2f}  preempted {r['preempted']}  "
              f"recomputed {r['recomputed']} tokens ({r['recomputed'] / r['prompt_tokens']:.1%} of the "
              f"{r['prompt_tokens']} prompt tokens)", file=sys.stderr)
    plain, shared = prefix_pages(PREFIX["shared"], [256] * PREFIX["users"], PREFIX["page"], WORKLOAD_SEED)
    print(f"prefix sharing: {plain} pages without, {shared} with ({1 - shared / plain:.1%} saved)", file=sys.stderr)
    if args.bench:
        if args.quick:  # the records are of the full workload; --quick only shows that the code runs
            print(f"{LAB}: --quick: no records (they are of the {N_REQUESTS}-request workload)", file=sys.stderr)
        reqs = workload(n, WORKLOAD_SEED)
        pool = {"name": f"the KV pool ({CAPACITY} token slots)", "value": 100.0, "unit": "%"}
        most = {"name": "the pool in requests of the mean length a running request holds (no mean batch over all "
                        "steps can exceed it)", "value": batch_ceiling(reqs), "unit": "requests"}
        prompts = sum(p for p, _ in reqs)
        record = (lambda *a: None) if args.quick else tl.measure
        for scheme, r in rows.items():
            for part in ("used", "internal", "external", "free"):
                record(LAB, f"{scheme}_{part}", "pool_share", 100.0 * r[part], "%", pool)
            record(LAB, f"{scheme}_batch", "batch", r["batch"], "requests", most)
            record(LAB, f"{scheme}_batch_waiting", "batch", r["batch_waiting"], "requests", most)
            if scheme.startswith("paged"):
                record(LAB, f"{scheme}_preempted", "preemptions", float(r["preempted"]), "requests",
                       {"name": "requests in the workload (one may be preempted more than once)",
                        "value": float(len(reqs)), "unit": "requests"})
                record(LAB, f"{scheme}_recomputed", "recomputed", float(r["recomputed"]), "tokens",
                       {"name": "prompt tokens in the workload", "value": float(prompts), "unit": "tokens"})
                record(LAB, f"{scheme}_recomputed_share", "prompt_share", 100.0 * r["recomputed"] / prompts, "%",
                       {"name": "all prompt tokens of the workload", "value": 100.0, "unit": "%"})
        record(LAB, "prefix_saved", "pool_share", 100.0 * (1 - shared / plain), "%",
               {"name": f"pages of {PREFIX['users']} requests without sharing", "value": 100.0, "unit": "%"})
    return tl.finish(LAB)


if __name__ == "__main__":
    torch.set_num_threads(1)
    sys.exit(main())
