// Conformance page: drives the elevenpeer test double with ElevenLabs'
// official browser SDK (@elevenlabs/client, its web build) in Chromium:
// the SDK's own WebSocket connection, microphone worklet (fed by the fake
// microphone) and playback worklet. Run by elevenlabs_test.go.
//
// Parameters: url (the double's signed URL), rate (of the speech files),
// bytesPerWord (of the double's speech), files hello.pcm, specials.pcm,
// barge.pcm (fake speech the double decodes).

import { page, run, params, fetchPCM, installFakeMic } from './browser.mjs';

const r = page('@elevenlabs/client');
const mic = installFakeMic(Number(params.get('rate')));
const { Conversation } = globalThis.ElevenLabsClient;

run(r, async () => {
  const rate = Number(params.get('rate'));
  // The speech files load while the SDK connects.
  const speech = Promise.all(['hello.pcm', 'specials.pcm', 'barge.pcm'].map(fetchPCM));
  let mode = 'listening';
  let lastAudio = 0;
  let audioAfterInterrupt = 0;
  // quiet resolves once the whole of the agent's last reply has come (the
  // double speaks bytesPerWord a word), none has come for 300 ms, and the
  // SDK is listening: the reply has been received and played.
  const bytesPerWord = Number(params.get('bytesPerWord'));
  let replyEnd = 0;
  const quiet = (what) => r.until(what, () => (r.counts.audio_bytes ?? 0) >= replyEnd &&
    mode === 'listening' && Date.now() - lastAudio > 300, 30000);
  const tick = setInterval(() => r.wake(), 100);
  let interrupted = false;
  const conv = await Conversation.startSession({
    signedUrl: params.get('url'),
    connectionType: 'websocket',
    dynamicVariables: { guest: 'Sam' },
    clientTools: {
      lookup_table: async (p) => {
        r.push('tool_params', p);
        return { table: 7 };
      },
    },
    onConnect: ({ conversationId }) => r.set('conversation_id', conversationId),
    onMessage: (m) => {
      r.push('messages', { role: m.role, message: m.message, event_id: m.event_id });
      if (m.role === 'agent') replyEnd = (r.counts.audio_bytes ?? 0) + m.message.split(/\s+/).length * bytesPerWord;
      r.count(`message:${m.role}`);
      r.log('message', m.role, m.message, m.event_id);
    },
    onModeChange: ({ mode: m }) => {
      mode = m;
      r.count(`mode:${m}`);
    },
    onInterruption: (e) => {
      interrupted = true;
      r.push('interruptions', e.event_id);
      r.count('interruption');
      r.log('interruption', e.event_id);
    },
    onAgentResponseCorrection: (e) => r.push('corrections', e),
    onAudio: (b64) => {
      const n = atob(b64).length;
      lastAudio = Date.now();
      r.count('audio_bytes', n);
      if (interrupted) audioAfterInterrupt += n;
    },
    onIncomingEvent: (e) => r.count(`in:${e.type}`),
    onOutgoingEvent: (e) => r.count(`out:${e.type ?? (e.user_audio_chunk !== undefined ? 'user_audio_chunk' : 'untyped')}`),
    onError: (message, context) => r.fail(`onError: ${message} ${JSON.stringify(context ?? null)}`),
    onDisconnect: (d) => r.set('disconnect', d),
  });
  r.log('session started', conv.getId());
  const [hello, specials, barge] = await speech;

  // The first message plays; the SDK goes back to listening after it.
  await r.seen('message:agent', 1);
  await quiet('the first message to play');
  r.log('first message played');

  // A spoken turn: transcript, a client tool call, the reply.
  await mic.say(hello, rate);
  await r.seen('message:agent', 2, 20000);
  await quiet('the reply to play');
  r.log('tool turn done');

  // A long reply, interrupted by the user's speech as soon as it plays
  // (the double streams it for seconds). Its agent_response, which the
  // double sends with its first audio, shows the user's turn over: speech
  // before it would belong to that turn (a stale mode change once let the
  // barge-in join "the specials").
  await mic.say(specials, rate);
  await r.until('the long reply to play', () => (r.counts['message:agent'] ?? 0) >= 3 && mode === 'speaking', 20000);
  await mic.say(barge, rate);
  await r.seen('interruption', 1, 20000);
  await r.seen('message:agent', 4, 20000);
  await r.until('the reply to the barge-in to play', () => audioAfterInterrupt > 0, 20000);
  await quiet('the reply to the barge-in to play out');
  r.set('audio_after_interrupt', audioAfterInterrupt);
  r.log('barge-in done');

  // Feedback on the last reply, the other client messages, then a text
  // turn: the double takes the client's messages in order, so the text
  // turn's reply shows that it has them all.
  r.check(conv.canSendFeedback, 'canSendFeedback is false while connected');
  conv.sendFeedback(true);
  conv.sendContextualUpdate('The guest is on the terrace.');
  conv.sendUserActivity();
  conv.sendUserMessage('When do you close?');
  await r.seen('message:agent', 5, 20000);
  await r.seen('in:ping', 1, 20000);
  await r.seen('out:pong', 1);
  r.set('mic_calls', mic.calls);
  clearInterval(tick);
  await conv.endSession();
  await r.until('onDisconnect', () => r.values.disconnect !== undefined, 5000);
});
