// What the browser pages share: the page's parameters, a log the Go test
// prints, the report posted back when the page is done, and a fake
// microphone the page speaks into.

import { Report, pcm16 } from './report.mjs';

export const params = new URLSearchParams(location.search);

// page returns the page's report, with its log and its end wired to the
// Go test's server: finish() posts the report once, at the end, on an
// uncaught error or after ms.
export function page(name, ms = 90000) {
  const r = new Report(name);
  r.log = (...a) => {
    const line = `${r.elapsed()} ${a.map((x) => (typeof x === 'string' ? x : JSON.stringify(x))).join(' ')}`;
    fetch('/log', { method: 'POST', body: line }).catch(() => {});
  };
  // Where the page's time goes before its first line: navigation to the
  // page's modules (the SDK's among them) loaded and run.
  r.log(`page started ${(performance.now() / 1000).toFixed(2)} s after navigation`);
  let done = false;
  r.finish = async () => {
    if (done) return;
    done = true;
    await fetch('/report', { method: 'POST', body: r.json() });
  };
  const timer = setTimeout(() => {
    r.fail(`the page ran out of time (${ms / 1000} s)`);
    r.finish();
  }, ms);
  const end = r.finish;
  r.finish = async () => {
    clearTimeout(timer);
    await end();
  };
  addEventListener('error', (e) => {
    r.fail(`uncaught: ${e.message} at ${e.filename}:${e.lineno}`);
  });
  addEventListener('unhandledrejection', (e) => {
    r.fail(`unhandled rejection: ${e.reason?.stack ?? e.reason}`);
  });
  return r;
}

// run runs main, recording a thrown error, then posts the report.
export async function run(r, main) {
  try {
    await main();
  } catch (e) {
    r.fail(`page: ${e?.stack ?? e}`);
  }
  await r.finish();
}

// fetchPCM returns the Int16 samples of a raw PCM16 file the Go test serves.
export async function fetchPCM(name) {
  const res = await fetch(`/files/${name}`);
  if (!res.ok) throw new Error(`/files/${name}: HTTP ${res.status}`);
  return pcm16(await res.arrayBuffer());
}

// installFakeMic replaces navigator.mediaDevices.getUserMedia for audio
// with a microphone the page speaks into. getUserMedia returns a live
// MediaStream (clones of a Web Audio destination's track, so that an SDK
// that stops a preliminary stream does not silence the next one); when the
// SDK under test makes a source node of it in its own AudioContext
// (createMediaStreamSource), it gets a node of that context that say()
// plays the speech into, and records it with its own worklets as it would
// a real microphone.
//
// The speech does not cross from one AudioContext to another through the
// MediaStream: on a loaded machine that hop, Chromium's own, now and then
// put 10 ms of silence into the middle of a 50 ms symbol of the fake
// speech and the rest of it 10 ms later (an audio frame that came late,
// replaced by zeros), and FakeSTT refused the line: the "(inaudible)" of
// these tests under load. Within one context the samples reach the SDK's
// worklet whole and in order, however late the context renders. What
// stays untested is that hop, which is the browser's, not the SDK's.
export function installFakeMic(rate = 48000) {
  const ctx = new AudioContext({ sampleRate: rate });
  const dest = ctx.createMediaStreamDestination();
  const real = navigator.mediaDevices.getUserMedia.bind(navigator.mediaDevices);
  const ours = new WeakSet(); // the tracks getUserMedia handed out
  let sinks = []; // the SDKs' source nodes of them
  let calls = 0;
  navigator.mediaDevices.getUserMedia = async (constraints) => {
    if (!constraints?.audio) return real(constraints);
    calls++;
    await ctx.resume();
    const tracks = dest.stream.getAudioTracks().map((t) => t.clone());
    for (const t of tracks) ours.add(t);
    return new MediaStream(tracks);
  };
  const createSource = AudioContext.prototype.createMediaStreamSource;
  AudioContext.prototype.createMediaStreamSource = function (stream) {
    if (!stream.getAudioTracks().some((t) => ours.has(t))) return createSource.call(this, stream);
    const node = this.createGain();
    Object.defineProperty(node, 'mediaStream', { value: stream });
    // Silence when nothing is said, as a microphone's stream carries: the
    // SDKs' recorders send (and the doubles count) silent chunks too.
    const silence = this.createConstantSource();
    silence.offset.value = 0;
    silence.connect(node);
    silence.start();
    sinks = sinks.filter((n) => n.context.state !== 'closed');
    sinks.push(node);
    return node;
  };
  return {
    get calls() {
      return calls;
    },
    // say plays Int16 samples at rate into the microphone, that is into
    // every source node of it whose context runs, and resolves when they
    // have played.
    async say(samples, rate) {
      const live = sinks.filter((n) => n.context.state === 'running');
      if (live.length === 0) throw new Error('say: no running AudioContext has a source node of the microphone');
      await Promise.all(live.map((node) => new Promise((resolve) => {
        const c = node.context;
        const buf = c.createBuffer(1, samples.length, rate);
        const ch = buf.getChannelData(0);
        for (let i = 0; i < samples.length; i++) ch[i] = samples[i] / 32768;
        const src = c.createBufferSource();
        src.buffer = buf;
        src.connect(node);
        src.onended = () => {
          src.disconnect();
          resolve();
        };
        src.start();
      })));
    },
  };
}

export const sleep = (ms) => new Promise((res) => setTimeout(res, ms));
