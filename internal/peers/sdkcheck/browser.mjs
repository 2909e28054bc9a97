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
// with a microphone the page speaks into: a Web Audio graph whose
// MediaStream is silent until say() plays samples into it. The SDK under
// test records it with its own AudioContext and worklets, as it would a
// real microphone. Every getUserMedia call gets clones of the track, so an
// SDK that stops a preliminary stream does not silence the next one. The
// graph runs at rate, the speech's, so that it resamples nothing itself.
export function installFakeMic(rate = 48000) {
  const ctx = new AudioContext({ sampleRate: rate });
  const dest = ctx.createMediaStreamDestination();
  const real = navigator.mediaDevices.getUserMedia.bind(navigator.mediaDevices);
  let calls = 0;
  navigator.mediaDevices.getUserMedia = async (constraints) => {
    if (!constraints?.audio) return real(constraints);
    calls++;
    await ctx.resume();
    return new MediaStream(dest.stream.getAudioTracks().map((t) => t.clone()));
  };
  return {
    get calls() {
      return calls;
    },
    // say plays Int16 samples at rate into the microphone and resolves
    // when they have played.
    async say(samples, rate) {
      await ctx.resume();
      const buf = ctx.createBuffer(1, samples.length, rate);
      const ch = buf.getChannelData(0);
      for (let i = 0; i < samples.length; i++) ch[i] = samples[i] / 32768;
      const src = ctx.createBufferSource();
      src.buffer = buf;
      src.connect(dest);
      await new Promise((resolve) => {
        src.onended = resolve;
        src.start();
      });
      src.disconnect();
    },
  };
}

export const sleep = (ms) => new Promise((res) => setTimeout(res, ms));
