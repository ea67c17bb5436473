"""Installed into the worker's site-packages by probe.py, with a .pth that imports it.

The judge starts the worker as `python -I -m socratic.evaluator.worker` from its own process,
so nothing patched in probe.py's process reaches it; .pth files do run there. When this
process is the worker and FLAG names a variant, the worker is patched and its main run from
here (the interpreter exits before `-m` runs it again). Research only."""
import sys

FLAG = "/tmp/launch_order_variant"   # "VARIANT OUTDIR", written by probe.py for one evaluation
POOL = 4                             # variant pool: input sets per copy of a sample


def _probe() -> None:
    if "socratic.evaluator.worker" not in getattr(sys, "orig_argv", ()):
        return
    try:
        variant, out = open(FLAG).read().split()
    except (OSError, ValueError):
        return
    import ctypes
    import json
    from functools import partial

    import socratic.evaluator.candidate_context as CC
    import socratic.evaluator.gpu as G
    import socratic.evaluator.worker as W

    V = set(variant.split("+"))
    open(f"{out}/applied.{variant}", "w").close()
    orig = W.WorkerRun._enqueue

    def _enqueue(self, role, slots, ids, salt, events, marked=False):
        if events is not None and "prewarm" in V:   # the sample's own replay once, untimed, first
            if role == "base":
                self.plan.launch(self._chain("base", slots, tuple(ids), marked), self.gpu.stream_handle)
            else:
                with self.cctx.current():
                    self.plan.launch(self._chain("cand", slots, tuple(ids), marked), self.cctx.stream_handle)
        if events is None or not V & {"own", "long", "wide"}:
            return orig(self, role, slots, ids, salt, events, marked)
        gpu, cctx = self.gpu, self.cctx
        if "own" in V:   # the other context idle, one op of this one run and synced
            if role == "base":
                cctx.sync()
                gpu.delay(5e-6)
                gpu.sync()
            else:
                gpu.sync()
                with cctx.current():
                    cctx.delay(5e-6)
                    cctx.sync()
        secs = 1e-3 if "long" in V else 100e-6
        saved = gpu.delay, cctx.delay
        if "wide" in V:   # the spin on every SM (4 blocks of 128 each), in each context
            def gpu_wide(seconds=secs):
                G.launch(gpu.stream, G.LaunchConfig(grid=gpu.info.sms * 4, block=128), gpu.kernels["spin"],
                         G.np.int64(int(seconds * 2.0e9)), int(gpu._scratch.handle))

            def cctx_wide(seconds=secs):
                cycles, scratch = ctypes.c_int64(int(seconds * 2.0e9)), ctypes.c_uint64(cctx._scratch)
                args = (ctypes.c_void_p * 2)(ctypes.addressof(cycles), ctypes.addressof(scratch))
                CC.check(CC.driver.cuLaunchKernel(cctx.spin_kernel, gpu.info.sms * 4, 1, 1, 128, 1, 1, 0,
                                                  cctx.stream, ctypes.addressof(args), 0))
            gpu.delay, cctx.delay = gpu_wide, cctx_wide
        else:
            gpu.delay = partial(type(gpu).delay, gpu, secs)
            cctx.delay = partial(type(cctx).delay, cctx, secs)
        try:
            return orig(self, role, slots, ids, salt, events, marked)
        finally:
            gpu.delay, cctx.delay = saved

    W.WorkerRun._enqueue = _enqueue
    verdict = W.speed_verdict

    def speed_verdict(base_ms, cand_ms, **kw):   # which role moves with the order
        def m(x):
            return float(G.np.median(x)) * 1e3
        with open(f"{out}/orders.{variant}", "a") as f:
            f.write(f"copies {kw['copies']} base-first: base {m(base_ms[0::2]):.3f} cand {m(cand_ms[0::2]):.3f} us;"
                    f" cand-first: base {m(base_ms[1::2]):.3f} cand {m(cand_ms[1::2]):.3f} us\n")
        with open(f"{out}/samples.{variant}.jsonl", "a") as f:   # every timed sample, for estimators offline
            f.write(json.dumps({"copies": kw["copies"], "placements": kw.get("placements", 1),
                                "base": list(map(float, base_ms)),
                                "cand": list(map(float, cand_ms))}) + "\n")
        return verdict(base_ms, cand_ms, **kw)

    W.speed_verdict = speed_verdict
    if "gap" in V:   # 200 us of the candidate context's own work after the input copies
        copy_inputs = W.WorkerRun._copy_inputs

        def _copy_inputs(self, slots, v, own_stream=False):
            copy_inputs(self, slots, v, own_stream)
            with self.cctx.current():
                self.cctx.delay(200e-6)
                self.cctx.sync()
        W.WorkerRun._copy_inputs = _copy_inputs
    if "l2x2" in V:   # each lead-in flushes L2 twice
        for cls in (G.Gpu, CC.CandidateContext):
            def twice(self, f=cls.flush_l2):
                f(self)
                f(self)
            cls.flush_l2 = twice
    if "malloc" in V:   # the judge's buffers from cuMemAlloc, never freed (s24: gpu.DirectMemory, freed,
        from cuda.core import Buffer  # is the judge's own since)

        def alloc(self, nbytes):
            n = max(int(nbytes), 256)
            return Buffer.from_handle(int(G.check(G.driver.cuMemAlloc(n))), n)
        G.Gpu.alloc = alloc
    if "mempool" in V:   # the judge's buffers from cuda.core's stream-ordered pool (as before s24)
        def pool_alloc(self, nbytes):
            return self.device.allocate(max(int(nbytes), 256), stream=self.stream)
        G.Gpu.alloc = pool_alloc
    if "allmarked" in V:   # marks between the copies of every pair, the verdict's too (as before s24)
        W.MARKED_SHARE = 1.0
    if "upload" in V:   # each chain uploaded to the stream it runs in (plan_chain uploads it to
        chain = W.WorkerRun._chain   # the plan's capture stream, which neither role launches in)

        def _chain(self, who, slots, ids, marked=False):
            new = (who, tuple(id(slots[i]) for i in ids), marked) not in self.chains
            exec_ = chain(self, who, slots, ids, marked)
            if new and who == "cand":
                with self.cctx.current():
                    CC.check(CC.driver.cuGraphUpload(CC.driver.CUgraphExec(exec_), self.cctx.stream))
                    self.cctx.sync()
            elif new:
                G.check(G.driver.cuGraphUpload(G.driver.CUgraphExec(exec_), self.gpu.stream.handle))
                self.gpu.sync()
            return exec_
        W.WorkerRun._chain = _chain
    if "early" in V:   # the timing-only input sets allocated right after the correctness ones
        run_, slot_ = W.WorkerRun._run, W.WorkerRun._slot

        def _run(self, sc, slots, ref):
            per_slot = sum(self._bytes(b, sc.values) for b in self.task.buffers)
            n = W.MAX_COPIES - len(W.timing_slots([d.name for d in self.set_dists], W.MAX_COPIES))
            self._early = [slot_(self, sc.values, self.set_dists[0], ref.outputs)
                           for _ in range(n if per_slot * n < (256 << 20) else 0)]
            try:
                return run_(self, sc, slots, ref)
            finally:
                self._early = []   # released with the scenario's slots

        def _slot(self, v, dist, ref_out):
            early = getattr(self, "_early", [])
            return early.pop(0) if early else slot_(self, v, dist, ref_out)
        W.WorkerRun._run, W.WorkerRun._slot = _run, _slot
    if "onectx" in V:   # the candidate's "context" is the judge's: both roles in one context, each
        cc_init = CC.CandidateContext.__init__   # with its own module instance, stream, events, allocations

        def init(self, judge_ctx, device_ordinal=0, l2_bytes=64 << 20):
            real = CC.driver.cuCtxCreate

            def create(*_args):   # pushed, as a new context is made current: __init__ pops it
                CC.check(CC.driver.cuCtxPushCurrent(CC.driver.CUcontext(judge_ctx)))
                return (CC.driver.CUresult.CUDA_SUCCESS, CC.driver.CUcontext(judge_ctx))
            CC.driver.cuCtxCreate = create
            try:
                cc_init(self, judge_ctx, device_ordinal, l2_bytes)
            finally:
                CC.driver.cuCtxCreate = real
        CC.CandidateContext.__init__ = init
        CC.CandidateContext.close = lambda self: None   # never the judge's context
    if "swap" in V:   # every other two pairs the kernels on each other's buffers (worker.SWAP_PLACES)
        W.SWAP_PLACES = True
    if "candcopy" in V:   # the candidate's inputs copied at the head of its sample, on its stream
        W.INPUTS_COPIED_IN = "candidate"
    if "judgecopy" in V:   # ... on the judge's stream right after their fill (def9da3's default)
        W.INPUTS_COPIED_IN = "judge"
    if "warm" in V:   # every page of a sample's buffers read in its own context before its lead-in
        W.WARM_PAGES = True
    if "flush" in V:   # an L2 flush between a sample's copies, outside their events
        W.FLUSH_BETWEEN_COPIES = True
    if "noevents" in V:   # no event nodes between a sample's copies (as before 2026-12-06): their cost
        W.WorkerRun._make_copy_marks = lambda self: None
        W.WorkerRun._copy_times = lambda self, who, copies: []
    if "oneset" in V or "pool" in V:   # which buffers a sample's copies run on
        pair_ = W.WorkerRun._pair
        pools: dict = {}

        def _pair(self, st, i, timed):
            if "oneset" in V:   # every copy on the first copy's buffers (the design before s17)
                st.slots = [st.slots[0]] * len(st.slots)
            else:   # POOL x copies input sets, each pair's copies drawn from them at random
                if id(st) not in pools:
                    extra = [self._slot(st.v, self.set_dists[0], st.ref.outputs)
                             for _ in range((POOL - 1) * len(st.slots))]
                    failures = self._prepare(extra, st.v)
                    assert not failures, failures
                    pools.clear()
                    pools[id(st)] = st.slots + extra
                pool = pools[id(st)]
                st.slots = [pool[j] for j in self.rng.choice(len(pool), size=len(st.slots), replace=False)]
            return pair_(self, st, i, timed)
        W.WorkerRun._pair = _pair
    sys.exit(W.main())


_probe()
