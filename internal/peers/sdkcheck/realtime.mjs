// Conformance script: drives the realtimepeer test double with OpenAI's
// official Agents SDK for Realtime (@openai/agents-realtime, its
// OpenAIRealtimeWebSocket transport as a Node server uses it) through a
// whole conversation, and reports what the SDK saw. Run by
// realtime_test.go, which starts the double and checks its side.
//
// Environment: SDKCHECK_URL (the double's ws:// URL with ?model=),
// SDKCHECK_KEY (the API key the double expects), SDKCHECK_SPEECH (raw
// PCM16 24 kHz mono of the user's utterance, fake speech the double can
// decode).

import { readFileSync } from 'node:fs';
import { RealtimeAgent, RealtimeSession, OpenAIRealtimeWebSocket, tool } from '@openai/agents-realtime';
import { Report } from './report.mjs';
import { runScript } from './node.mjs';

// The SDK parses each server event with its zod schemas and treats one that
// fails them as an unknown, generic event: it drops it without a word. The
// schemas are not exported, so the script loads the SDK's own module by
// path and reports every known event type that does not pass them.
const { realtimeServerEventSchema } = await import(
  new URL('./node_modules/@openai/agents-realtime/dist/openaiRealtimeEvents.mjs', import.meta.url)
);
const knownTypes = new Set(realtimeServerEventSchema.options.map((o) => o.shape.type.value));

const r = new Report('agents-realtime');
const log = (...a) => console.error(r.elapsed(), ...a);
const speech = readFileSync(process.env.SDKCHECK_SPEECH);
const RATE = 24000;

// lookup_table is the client-side tool the double's script calls.
const lookupTable = tool({
  name: 'lookup_table',
  description: 'Looks up a free table.',
  parameters: {
    type: 'object',
    properties: { party: { type: 'integer' } },
    required: ['party'],
    additionalProperties: false,
  },
  strict: true,
  execute: async (args) => {
    r.push('tool_args', args);
    return 'table 7 is free';
  },
});

const agent = new RealtimeAgent({
  name: 'Host',
  instructions: 'You book tables.',
  tools: [lookupTable],
});

const session = new RealtimeSession(agent, {
  transport: new OpenAIRealtimeWebSocket({ url: process.env.SDKCHECK_URL }),
  model: 'gpt-realtime',
  config: {
    audio: {
      input: {
        // The server cancels the response itself on barge-in; the SDK
        // then only truncates what was not heard.
        turnDetection: { type: 'server_vad', silenceDurationMs: 400, interruptResponse: true },
      },
      output: { voice: 'marin' },
    },
  },
});

// What the SDK reports.
session.on('transport_event', (ev) => {
  r.count(`event:${ev.type}`);
  if (!knownTypes.has(ev.type)) {
    r.push('unknown_types', ev.type);
    return;
  }
  const parsed = realtimeServerEventSchema.safeParse(ev);
  if (!parsed.success) {
    r.fail(`${ev.type} fails the SDK's schema (the SDK drops it): ${JSON.stringify(parsed.error.issues)} in ${JSON.stringify(ev).slice(0, 400)}`);
  }
});
session.on('audio', (ev) => {
  if (!r.counts.audio_bytes) r.set('first_audio_at', Date.now());
  r.count('audio_bytes', ev.data.byteLength);
});
session.on('audio_interrupted', () => r.count('audio_interrupted'));
session.on('agent_end', (_ctx, _agent, text) => {
  r.push('agent_end', text);
  r.count('agent_end');
});
session.on('agent_tool_end', (_ctx, _agent, t, result) => r.push('tool_end', { name: t.name, result }));
session.on('error', (e) => {
  const err = e?.error;
  const msg = err?.error?.message ?? err?.message ?? String(err);
  r.push('errors', msg);
  r.count('error');
  log('error event:', JSON.stringify(err?.error ?? err?.message ?? String(err)));
});
session.on('history_updated', (h) => r.set('history', h));

// sendSpeech streams the utterance in 100 ms appends, then silence the
// double's turn detection hears as the end of the turn.
async function sendSpeech(silenceMs = 1200) {
  const chunk = (RATE / 10) * 2;
  for (let off = 0; off < speech.length; off += chunk) {
    const part = speech.subarray(off, Math.min(off + chunk, speech.length));
    session.sendAudio(part.buffer.slice(part.byteOffset, part.byteOffset + part.byteLength));
    await new Promise((res) => setTimeout(res, 5));
  }
  const silence = new ArrayBuffer(chunk);
  for (let t = 0; t < silenceMs; t += 100) session.sendAudio(silence);
}

const transcript = (item) =>
  (item?.content ?? []).map((c) => c.transcript ?? c.text ?? '').join('');

async function main() {
  await session.connect({ apiKey: process.env.SDKCHECK_KEY });
  log('connected');
  await r.seen('event:session.updated');

  // 1. The agent speaks first.
  session.transport.sendEvent({ type: 'response.create' });
  await r.seen('agent_end', 1);
  r.check(r.counts.audio_bytes > 0, 'no audio from the greeting');
  // The SDK takes audio to be played in real time from its first delta,
  // and truncates an item still "playing" when the server detects speech.
  // The double sends audio faster than real time, so wait until the
  // greeting has played out, counted from its first delta as the SDK
  // counts; otherwise whether step 2 truncates it depends on the
  // machine's speed.
  const playedOut = r.values.first_audio_at + (r.counts.audio_bytes / (RATE * 2)) * 1000 + 200;
  await new Promise((res) => setTimeout(res, Math.max(0, playedOut - Date.now())));
  log('greeting done');

  // 2. The user speaks; the server detects the turn, transcribes it
  // (the SDK retrieves the item), calls the tool, and answers.
  await sendSpeech();
  await r.seen('agent_end', 3, 20000); // the tool call's response, then the answer
  await r.until('the user item\'s transcript', () =>
    (r.values.history ?? []).some((i) => i.role === 'user' && transcript(i) !== ''));
  log('audio turn done');

  // 3. A text turn, interrupted by the user's speech while the agent
  // speaks: the server cancels, the SDK truncates the unheard audio.
  const before = r.counts.audio_bytes;
  session.sendMessage('Tell me about the specials.');
  await r.until('audio of the long reply', () => r.counts.audio_bytes > before + RATE * 2 * 0.3);
  await sendSpeech();
  await r.seen('audio_interrupted', 1);
  await r.seen('event:conversation.item.truncated', 1);
  await r.seen('agent_end', 5, 20000); // the cancelled reply, then the answer to the speech
  log('barge-in done');

  // 4. The client interrupts on its own (response.cancel + truncate).
  const before2 = r.counts.audio_bytes;
  const ends = r.counts.agent_end;
  session.sendMessage('And the desserts?');
  await r.until('audio of the next reply', () => r.counts.audio_bytes > before2 + RATE * 2 * 0.2);
  session.interrupt();
  await r.seen('agent_end', ends + 1);
  await r.seen('event:conversation.item.truncated', 2);
  log('client interrupt done');

  // 5. The history edited: an item deleted (conversation.item.delete).
  const textItem = session.history.find((i) => i.role === 'user' && i.content?.some((c) => c.type === 'input_text'));
  r.check(textItem !== undefined, 'no user text item in the history');
  session.updateHistory((h) => h.filter((i) => i.itemId !== textItem?.itemId));
  await r.seen('event:conversation.item.deleted', 1);
  log('history edited');

  // 6. Turn detection off: the SDK commits the buffer itself and asks for
  // the response.
  const updates = r.counts['event:session.updated'];
  const commits = r.counts['event:input_audio_buffer.committed'];
  session.transport.updateSessionConfig({ audio: { input: { turnDetection: null } } });
  await r.seen('event:session.updated', updates + 1);
  const ends6 = r.counts.agent_end;
  session.sendAudio(speech.buffer.slice(speech.byteOffset, speech.byteOffset + speech.byteLength), { commit: true });
  await r.seen('event:input_audio_buffer.committed', commits + 1);
  session.transport.requestResponse();
  await r.seen('agent_end', ends6 + 1);
  log('manual commit done');

  await r.until('the last retrieve answered', () =>
    (r.counts['event:conversation.item.retrieved'] ?? 0) >= 4);
  // The committed item's transcript, retrieved by the SDK: what the
  // double heard of the audio the SDK committed itself.
  await r.until('the committed item\'s transcript', () => {
    const audio = (r.values.history ?? []).filter((i) => i.role === 'user' && i.content?.some((c) => c.type === 'input_audio'));
    return audio.length >= 3 && transcript(audio[audio.length - 1]) !== '';
  });
  r.set('final_history', session.history);
  session.close();
}

runScript(r, main);
