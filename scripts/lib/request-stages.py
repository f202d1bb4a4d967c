#!/usr/bin/env python3
"""Splits a `perf record -g` profile of the example app into the stages of a request.

Usage: request-stages.py PERF_DATA CPU_US_PER_REQUEST [STAGE]
Reads `perf script` of PERF_DATA, demangles its Swift symbols (`swift demangle`), gives each
sample to the first stage below whose rule its stack matches, and prints one row per stage: the
share of the app's samples, that share of CPU_US_PER_REQUEST (µs of app CPU per request, from the
load test's run) and the threads the samples ran on. With STAGE (part of a stage's name), also
the functions on the stacks of that stage's samples, by inclusive share. A stage is a function of the library or the
example (and what it calls), so the table reads the same for every route.
"""
import collections
import subprocess
import sys

# (stage, rule): the rule is a list of substrings, any of which in a frame's demangled name
# matches; the first stage (top to bottom) with a matching frame takes the sample.
STAGES = [
    ("cookie open (VisitorCookies.read)", ["VisitorCookies.read"]),
    ("cookie seal (state changed)", ["setCookieHeader", "VisitorStateCodec.seal"]),
    ("request object (forRequest, RequestOptions)", ["OptimizationService.forRequest", "RequestOptions.init"]),
    ("profile hold (ProfileCallSerializer)", ["ProfileCallSerializer"]),
    ("JS call: gate and build (requestDocument)", ["BridgeChannel.requestDocument"]),
    ("HTTP exchange, request thread (ExperienceSender, HTTPFetchTransport)", ["ExperienceSender", "HTTPFetchTransport", "HTTPClient.execute"]),
    ("JS call: interpret the answer (deliver)", ["OptimizationRequest.deliver"]),
    ("adopt the answer", ["OptimizationRequest.adopt", "OptimizationRequest.experienceOutcome"]),
    ("resolve (resolveOptimizedEntry)", ["resolveOptimizedEntry"]),
    ("merge tags (getMergeTagValue)", ["getMergeTagValue"]),
    ("Insights queue: accept (enqueue)", ["ServiceDelivery.enqueue", "InsightsQueue.accept", "InsightsQueue.enqueue"]),
    ("Insights queue: batches and delivery", ["InsightsQueue", "FlightLoop", "InsightsEvent"]),
    ("event call glue (OptimizationRequest.call, exchange)", ["OptimizationRequest.call", "OptimizationRequest.exchange", "OptimizationRequest.record", "EventRecording"]),
    ("render (PageRenderer)", ["PageRenderer", "EntryRenderer", "RichTextRenderer", "html(_:)"]),
    ("floor route (FloorRoute)", ["FloorRoute", "FloorExchange"]),
    ("response handed to the event loop (NIOAsyncWriter, EventLoop.execute)", ["NIOAsyncWriter", "EventLoop.execute", "eventfd_write"]),
    ("page handler, rest (the example's PageRoutes)", ["PageRoutes", "EntryExplanation", "DebugPanel"]),
]
EVENT_LOOP_CLIENT = ["HTTP1Connection", "HTTPConnectionPool", "RequestBag", "HTTPClient", "Transaction", "HTTP1ClientChannelHandler"]


def classify(comm, frames):
    if comm.startswith("JITWorker") or comm.startswith("JSC "):
        return "JavaScriptCore's compiler and collector threads"
    if comm.startswith("NIO-"):
        if any(any(key in frame for key in EVENT_LOOP_CLIENT) for frame in frames):
            return "HTTP client I/O (event loop)"
        return "HTTP server I/O (event loop)"
    for stage, rule in STAGES:
        if any(any(key in frame for key in rule) for frame in frames):
            return stage
    if frames and all(frame == "[unknown]" for frame in frames):
        return "JavaScript JIT code (no stack)"
    if any("Hummingbird" in frame or "HTTPServer" in frame or "Router" in frame for frame in frames):
        return "HTTP server, request thread (Hummingbird)"
    if any(key in frame for frame in frames for key in ("finish_task_switch", "futex", "schedule", "dispatch_semaphore", "_dispatch_worker_thread")) and not any("Optimization" in frame for frame in frames):
        return "task scheduling: Dispatch workers, kernel scheduler, futex"
    return "other (Swift runtime, Dispatch, kernel)"


def samples(path):
    out = subprocess.run(["perf", "script", "-i", path, "-F", "comm,tid,ip,sym", "--no-demangle"],
                         capture_output=True, text=True, check=True).stdout
    current = None
    for line in out.splitlines():
        if line.startswith("\t"):  # a frame: address and symbol
            if current is not None:
                fields = line.strip().split(None, 1)
                current[1].append(fields[1] if len(fields) > 1 else "[unknown]")
            continue
        if current:
            yield current
        parts = line.split()
        current = (" ".join(parts[:-1]), []) if len(parts) > 1 else None
    if current:
        yield current


def main():
    path, cpu = sys.argv[1], float(sys.argv[2])
    detail = sys.argv[3] if len(sys.argv) > 3 else None
    collected = list(samples(path))
    names = sorted({frame for _, frames in collected for frame in frames})
    demangled = subprocess.run(["swift", "demangle", "--simplified"], input="\n".join(names), capture_output=True, text=True).stdout.splitlines()
    table = dict(zip(names, demangled)) if len(demangled) == len(names) else {name: name for name in names}
    counts = collections.Counter()
    inclusive = collections.Counter()
    threads = collections.defaultdict(collections.Counter)
    for comm, frames in collected:
        names_of_frames = [table.get(frame, frame) for frame in frames]
        stage = classify(comm, names_of_frames)
        counts[stage] += 1
        if detail and detail in stage:
            for name in set(names_of_frames):
                inclusive[name] += 1
        threads[stage]["event loop" if comm.startswith("NIO-") else ("request thread (Swift concurrency)" if "qos" in comm else comm)] += 1
    total = sum(counts.values()) or 1
    print(f"| stage | share of app CPU | µs per request | thread |")
    print(f"|---|---|---|---|")
    for stage, count in counts.most_common():
        where = ", ".join(name for name, _ in threads[stage].most_common(2))
        print(f"| {stage} | {100 * count / total:.1f} % | {cpu * count / total:.0f} | {where} |")
    print(f"| total ({total} samples) | 100 % | {cpu:.0f} | |")
    if detail:
        print(f"\nframes of the samples of '{detail}' (share of all samples, inclusive):")
        for name, count in inclusive.most_common(40):
            print(f"  {100 * count / total:5.1f} %  {name[:150]}")


if __name__ == "__main__":
    main()
