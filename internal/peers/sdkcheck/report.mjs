// The report a conformance script gives back to its Go test: what the SDK
// saw and did (counts and values) and every check that failed. The same
// module runs in Node and in the browser pages.

export class Report {
  constructor(name) {
    this.name = name;
    this.failures = [];
    this.counts = {};
    this.values = {};
    this.waiters = [];
    this.started = Date.now();
  }

  // fail records a failed check.
  fail(msg) {
    this.failures.push(`${this.elapsed()} ${msg}`);
  }

  // check records a failure when cond is false, and returns cond.
  check(cond, msg) {
    if (!cond) this.fail(msg);
    return Boolean(cond);
  }

  // count counts one occurrence of key and wakes the waiters.
  count(key, n = 1) {
    this.counts[key] = (this.counts[key] ?? 0) + n;
    this.wake();
  }

  // set records a value under key.
  set(key, value) {
    this.values[key] = value;
    this.wake();
  }

  // push appends a value to the list under key.
  push(key, value) {
    (this.values[key] ??= []).push(value);
    this.wake();
  }

  // until resolves when cond() holds, and rejects after ms naming what it
  // waited for.
  until(what, cond, ms = 15000) {
    if (cond()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const w = { cond, resolve };
      w.timer = setTimeout(() => {
        this.waiters = this.waiters.filter((x) => x !== w);
        reject(new Error(`timed out after ${ms} ms waiting for ${what} (counts so far: ${JSON.stringify(this.counts)})`));
      }, ms);
      this.waiters.push(w);
    });
  }

  // seen resolves once key has been counted n times in all.
  seen(key, n = 1, ms = 15000) {
    return this.until(`${key} ×${n}`, () => (this.counts[key] ?? 0) >= n, ms);
  }

  wake() {
    for (const w of [...this.waiters]) {
      if (w.cond()) {
        clearTimeout(w.timer);
        this.waiters = this.waiters.filter((x) => x !== w);
        w.resolve();
      }
    }
  }

  elapsed() {
    return `[${((Date.now() - this.started) / 1000).toFixed(2)}s]`;
  }

  json() {
    return JSON.stringify({ name: this.name, failures: this.failures, counts: this.counts, values: this.values });
  }
}

// pcm16 returns the Int16 samples of a little-endian PCM16 byte buffer.
export function pcm16(bytes) {
  const b = new Uint8Array(bytes);
  const out = new Int16Array(b.length >> 1);
  const dv = new DataView(b.buffer, b.byteOffset, b.byteLength);
  for (let i = 0; i < out.length; i++) out[i] = dv.getInt16(2 * i, true);
  return out;
}

// rms returns the root mean square of Int16 samples.
export function rms(samples) {
  if (samples.length === 0) return 0;
  let sum = 0;
  for (const v of samples) sum += v * v;
  return Math.sqrt(sum / samples.length);
}
