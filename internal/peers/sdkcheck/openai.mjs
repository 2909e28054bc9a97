// Conformance script: drives the fakeopenai test double with OpenAI's
// official Node SDK (openai) as voice-agent frameworks use it: chat
// completions with tools, plain and streamed (the stream helper checks
// every chunk as it accumulates them), speech in the SDK's default format
// and others, and transcriptions plain, verbose with word timestamps, and
// streamed. Run by openai_test.go, which starts the double and checks its
// side.
//
// Environment: SDKCHECK_BASE_URL (the double's /v1/ base URL), SDKCHECK_KEY.

import OpenAI, { toFile } from 'openai';
import { Report } from './report.mjs';
import { runScript } from './node.mjs';

const r = new Report('openai');
const log = (...a) => console.error(r.elapsed(), ...a);
const client = new OpenAI({ apiKey: process.env.SDKCHECK_KEY, baseURL: process.env.SDKCHECK_BASE_URL, maxRetries: 0 });

const tools = [{
  type: 'function',
  function: {
    name: 'book_table',
    description: 'Books a table.',
    parameters: { type: 'object', properties: { party: { type: 'integer' } }, required: ['party'] },
  },
}];

// wav wraps PCM16 mono bytes in a WAV header.
function wav(pcm, rate) {
  const h = Buffer.alloc(44);
  h.write('RIFF', 0);
  h.writeUInt32LE(36 + pcm.length, 4);
  h.write('WAVEfmt ', 8);
  h.writeUInt32LE(16, 16);
  h.writeUInt16LE(1, 20);
  h.writeUInt16LE(1, 22);
  h.writeUInt32LE(rate, 24);
  h.writeUInt32LE(rate * 2, 28);
  h.writeUInt16LE(2, 32);
  h.writeUInt16LE(16, 34);
  h.write('data', 36);
  h.writeUInt32LE(pcm.length, 40);
  return Buffer.concat([h, pcm]);
}

async function chat() {
  // A plain completion that calls the tool, then the answer to its result.
  const first = await client.chat.completions.create({
    model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'A table for two.' }], tools,
  });
  const call = first.choices[0].message.tool_calls?.[0];
  r.check(call?.function?.name === 'book_table', `plain completion: tool call ${JSON.stringify(first.choices[0].message)}`);
  r.set('plain_tool_args', call?.function?.arguments);
  const second = await client.chat.completions.create({
    model: 'gpt-4o-mini',
    messages: [
      { role: 'user', content: 'A table for two.' },
      first.choices[0].message,
      { role: 'tool', tool_call_id: call.id, content: 'booked' },
    ],
    tools,
  });
  r.set('plain_text', second.choices[0].message.content);

  // Streamed: raw chunks, as the agent frameworks read them.
  const stream = await client.chat.completions.create({
    model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Greet me.' }], stream: true,
    stream_options: { include_usage: true },
  });
  let text = '';
  let chunks = 0;
  let usage = null;
  let finish = null;
  for await (const chunk of stream) {
    chunks++;
    r.check(chunk.object === 'chat.completion.chunk', `chunk object ${chunk.object}`);
    if (chunk.usage) usage = chunk.usage;
    for (const c of chunk.choices) {
      text += c.delta?.content ?? '';
      finish = c.finish_reason ?? finish;
    }
  }
  r.set('stream_text', text);
  r.set('stream_chunks', chunks);
  r.set('stream_finish', finish);
  r.check(usage !== null && typeof usage.total_tokens === 'number', `no usage chunk (include_usage): ${JSON.stringify(usage)}`);

  // Streamed through the SDK's helper, which accumulates and checks the
  // chunks, with a tool call streamed in pieces.
  const runner = client.chat.completions.stream({
    model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Book for four.' }], tools,
  });
  runner.on('tool_calls.function.arguments.done', (ev) => r.push('stream_tool_done', { name: ev.name, arguments: ev.arguments }));
  const final = await runner.finalChatCompletion();
  r.set('stream_tool_final', final.choices[0].message.tool_calls?.[0]?.function ?? null);
  r.set('stream_tool_finish', final.choices[0].finish_reason);

  // A refused request: the SDK's typed error carries the API's message.
  try {
    await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [] });
    r.fail('an empty messages array was accepted');
  } catch (e) {
    r.set('bad_request', { status: e.status, name: e.constructor.name, message: e.message, param: e.param });
  }
  try {
    await new OpenAI({ apiKey: 'sk-wrong', baseURL: process.env.SDKCHECK_BASE_URL, maxRetries: 0 })
      .chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x' }] });
    r.fail('a wrong key was accepted');
  } catch (e) {
    r.set('bad_key', { status: e.status, name: e.constructor.name, code: e.code });
  }
}

async function speech() {
  // The formats are asked for at once: the double encodes the compressed
  // ones with ffmpeg, a process each, which on a loaded machine is most of
  // this script's time.
  await Promise.all([mp3Speech(), sseSpeech(), ...['wav', 'opus', 'aac', 'flac', 'pcm'].map(formatSpeech)]);
}

// mp3Speech asks for speech in the SDK's default format, mp3.
async function mp3Speech() {
  const mp3 = Buffer.from(await (await client.audio.speech.create({ model: 'gpt-4o-mini-tts', voice: 'coral', input: 'Hello there.' })).arrayBuffer());
  r.set('mp3', { bytes: mp3.length, head: mp3.subarray(0, 4).toString('hex') });
}

// formatSpeech asks for speech in format.
async function formatSpeech(format) {
  try {
    const res = await client.audio.speech.create({ model: 'tts-1', voice: 'nova', input: 'Hello there.', response_format: format });
    const b = Buffer.from(await res.arrayBuffer());
    r.set(`speech_${format}`, { bytes: b.length, head: b.subarray(0, 4).toString('hex'), type: res.headers.get('content-type') });
  } catch (e) {
    r.fail(`speech in ${format}: ${e.message}`);
  }
}

// sseSpeech asks for speech streamed as server-sent events of audio deltas.
async function sseSpeech() {
  const sse = await client.audio.speech.create({ model: 'gpt-4o-mini-tts', voice: 'coral', input: 'Hello there.', response_format: 'pcm', stream_format: 'sse' });
  let deltas = 0;
  let bytes = 0;
  let done = false;
  const text = await sse.text();
  for (const line of text.split('\n')) {
    if (!line.startsWith('data: ')) continue;
    const ev = JSON.parse(line.slice(6));
    if (ev.type === 'speech.audio.delta') {
      deltas++;
      bytes += Buffer.from(ev.audio, 'base64').length;
    } else if (ev.type === 'speech.audio.done') {
      done = true;
    }
  }
  r.set('speech_sse', { deltas, bytes, done });
}

async function transcription() {
  // The double transcribes audio it synthesized itself.
  const pcm = Buffer.from(await (await client.audio.speech.create({ model: 'tts-1', voice: 'nova', input: 'a table for two please', response_format: 'pcm' })).arrayBuffer());
  const file = () => toFile(wav(pcm, 24000), 'speech.wav', { type: 'audio/wav' });

  const plain = await client.audio.transcriptions.create({ file: await file(), model: 'gpt-4o-mini-transcribe' });
  r.set('stt_plain', plain.text);

  const verbose = await client.audio.transcriptions.create({
    file: await file(), model: 'whisper-1', response_format: 'verbose_json', timestamp_granularities: ['word', 'segment'],
  });
  r.set('stt_verbose', verbose);

  const stream = await client.audio.transcriptions.create({ file: await file(), model: 'gpt-4o-mini-transcribe', stream: true });
  const events = [];
  for await (const ev of stream) events.push(ev);
  r.set('stt_stream', events);

  // mp3 the double produced transcribes too.
  const mp3 = Buffer.from(await (await client.audio.speech.create({ model: 'tts-1', voice: 'nova', input: 'see you at seven' })).arrayBuffer());
  const fromMP3 = await client.audio.transcriptions.create({ file: await toFile(mp3, 'speech.mp3', { type: 'audio/mpeg' }), model: 'whisper-1', response_format: 'text' });
  r.set('stt_mp3_text', fromMP3);
}

// main runs the three parts at once (they share nothing but the client);
// a part that throws fails on its own.
async function main() {
  await Promise.all([['chat', chat], ['speech', speech], ['transcription', transcription]].map(async ([name, f]) => {
    try {
      await f();
      log(`${name} done`);
    } catch (e) {
      r.fail(`${name}: ${e?.stack ?? e}`);
    }
  }));
}

runScript(r, main);
