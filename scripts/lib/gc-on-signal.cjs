/**
 * A preload for bench nodes, not part of the node: `node --expose-gc --require scripts/lib/gc-on-signal.cjs
 * packages/server/...main`. On SIGUSR2 it runs a full garbage collection of the main thread's heap and
 * writes one line to stderr, `strata-bench-gc {json}`, with the memory after it (MiB), so a bench reads the
 * node's RSS once V8's room for garbage is given back (issue 28: the RSS at the end of a storm moved by
 * 60-80 MiB with the moment of V8's last major collection). Loaded by the bench from its own checkout,
 * so it works on any tree it measures (a baseline commit has no such code); the node that users start
 * has neither the flag nor the handler, and SIGUSR2 keeps node's default there. Without --expose-gc it
 * installs nothing. Worker threads (the index worker, off by default) keep their own heaps.
 */
'use strict';
const { isMainThread } = require('node:worker_threads');
const { performance } = require('node:perf_hooks');

if (isMainThread && typeof globalThis.gc === 'function') {
  const gc = globalThis.gc;
  const MiB = (b) => Math.round((b / 1048576) * 10) / 10;
  process.on('SIGUSR2', () => {
    const before = process.memoryUsage();
    const t0 = performance.now();
    // twice: the first collection's weak callbacks and finalizers free more for the second
    gc();
    gc();
    const after = process.memoryUsage();
    process.stderr.write(`strata-bench-gc ${JSON.stringify({
      gc_ms: Math.round((performance.now() - t0) * 10) / 10, heap_used_before: MiB(before.heapUsed), heap_used: MiB(after.heapUsed),
      heap_total: MiB(after.heapTotal), external: MiB(after.external), array_buffers: MiB(after.arrayBuffers), rss: MiB(after.rss),
    })}\n`);
  });
}
