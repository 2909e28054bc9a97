// Conformance script: drives the elevenpeer test double with ElevenLabs'
// SDK (@elevenlabs/client) in text-only mode under Node, as a server-side
// client uses it: the WebSocket connection, the first message, text turns,
// contextual updates, feedback. Node 20 has no global WebSocket, so the
// `ws` package stands in for it (Node 22 has one built in). Run by
// elevenlabs_test.go.
//
// Environment: SDKCHECK_URL (the double's signed URL).

import { WebSocket } from 'ws';
import { Report } from './report.mjs';
import { runScript } from './node.mjs';

// The SDK listens for events only once the metadata has set the session
// up (WebSocketConnection.create). The ws package emits every message of
// one read at once, so the SDK drops a message read in the same chunk as
// the metadata. Seen, the ws socket the SDK gets under Node 20, tells that
// apart from a message never sent: it listens on the socket before the
// SDK does, fails a message that came in the same read as the metadata
// (before the microtasks that set the SDK up ran), and reports how long
// after the metadata the next message came (after_metadata_ms).
class Seen extends WebSocket {
  constructor(...args) {
    super(...args);
    let sameRead = false;
    let metadataAt;
    this.on('message', (data) => {
      const type = JSON.parse(data.toString()).type;
      if (sameRead) r.fail(`${type} came in the same read as the metadata, and the SDK, not yet listening, dropped it`);
      if (metadataAt !== undefined && r.values.after_metadata_ms === undefined) {
        r.set('after_metadata_ms', Math.round(performance.now() - metadataAt));
      }
      if (type === 'conversation_initiation_metadata') {
        metadataAt = performance.now();
        sameRead = true;
        queueMicrotask(() => (sameRead = false));
      }
    });
  }
}
globalThis.WebSocket ??= Seen;
const { Conversation } = await import('@elevenlabs/client');

const r = new Report('@elevenlabs/client text-only');
const log = (...a) => console.error(r.elapsed(), ...a);

async function main() {
  const conv = await Conversation.startSession({
    signedUrl: process.env.SDKCHECK_URL,
    textOnly: true,
    onMessage: (m) => {
      r.push('messages', { role: m.role, message: m.message, event_id: m.event_id });
      r.count(`message:${m.role}`);
      log('message', m.role, m.message);
    },
    onAudio: () => r.count('audio'),
    onIncomingEvent: (e) => r.count(`in:${e.type}`),
    onError: (message, context) => r.fail(`onError: ${message} ${JSON.stringify(context ?? null)}`),
    onDisconnect: (d) => r.set('disconnect', d),
  });
  r.check(conv.type === 'text', `a ${conv.type} conversation, want text`);
  await r.seen('message:agent', 1, 10000);
  conv.sendUserMessage('A table for two, please.');
  await r.seen('message:agent', 2, 10000);
  conv.sendContextualUpdate('The guest is on the terrace.', { contextId: 'terrace' });
  conv.sendFeedback(false);
  conv.sendUserMessage('Thanks.');
  await r.seen('message:agent', 3, 10000);
  await conv.endSession();
}

runScript(r, main, 30000);
