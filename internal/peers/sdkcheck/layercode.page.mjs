// Conformance page: drives the layercodepeer test double with LayerCode's
// official browser SDK (@layercode/js-sdk, its ES module build) in
// Chromium: the authorize request to the page's own backend (proxied to
// the double, as a customer backend does), the WebSocket, the SDK's
// recorder worklet (fed by the fake microphone) and its stream player.
// Run by layercode_test.go.
//
// Parameters: ws and wsptt (the doubles' WebSocket URLs; the authorize
// endpoints are /api/authorize and /api/authorize-ptt on this origin),
// rate (of the speech files), files hello.pcm, specials.pcm, barge.pcm.

import LayercodeClient from '/node_modules/@layercode/js-sdk/dist/layercode-js-sdk.esm.js';
import { page, run, params, fetchPCM, installFakeMic } from './browser.mjs';
import { pcm16, rms } from './report.mjs';

const r = page('@layercode/js-sdk');
const mic = installFakeMic(Number(params.get('rate')));

// silentSent counts the client.audio messages the SDK has sent in a row
// that carry only silence (the SDK's own sends, watched, not changed).
let silentSent = 0;
const wsSend = WebSocket.prototype.send;
WebSocket.prototype.send = function (data) {
  if (typeof data === 'string' && data.startsWith('{"type":"client.audio"')) {
    const b = atob(JSON.parse(data).content);
    const bytes = new Uint8Array(b.length);
    for (let i = 0; i < b.length; i++) bytes[i] = b.charCodeAt(i);
    silentSent = rms(pcm16(bytes)) < 50 ? silentSent + 1 : 0;
    r.wake();
  }
  return wsSend.call(this, data);
};

// connect starts a client on the double whose authorize endpoint is
// endpoint, recording what it reports under prefix.
async function connect(prefix, endpoint, ws) {
  let agentSpeaking = false;
  const client = new LayercodeClient({
    agentId: 'agent-test',
    authorizeSessionEndpoint: endpoint,
    metadata: { guest: 'Sam' },
    // The SDK's VAD loads its model from assets.layercode.com, which a
    // test cannot reach; without it the SDK sends all microphone audio
    // and the server's turn detection decides, as the SDK does when its
    // VAD fails to load.
    enableVAD: false,
    onConnect: ({ conversationId, config }) => {
      r.set(`${prefix}conversation`, conversationId);
      r.set(`${prefix}config`, config);
    },
    onDisconnect: () => r.count(`${prefix}disconnect`),
    onError: (e) => r.fail(`${prefix}onError: ${e?.message ?? e}`),
    onMessage: (m) => {
      const key = m.role ? `${m.type}/${m.role}` : m.type;
      r.count(`${prefix}${key}`);
      if (['response.text', 'user.transcript', 'turn.end', 'turn.start'].includes(m.type)) {
        r.push(`${prefix}messages`, { type: m.type, role: m.role, content: m.content, turn_id: m.turn_id });
      }
      if (m.type === 'response.text.delta') r.push(`${prefix}deltas`, m.content);
      r.log(prefix, key, m.content ?? '');
    },
    onDataMessage: (m) => r.push(`${prefix}data`, m.content),
    onAgentSpeakingChange: (s) => {
      agentSpeaking = s;
      r.count(`${prefix}agent_speaking:${s}`);
    },
  });
  client._websocketUrl = ws; // the SDK's default is LayerCode's own
  await client.connect();
  r.check(client.status === 'connected' || client.status === 'connecting', `${prefix}status ${client.status} after connect`);
  return { client, speaking: () => agentSpeaking };
}

run(r, async () => {
  const rate = Number(params.get('rate'));
  // The speech files load while the SDK connects.
  const speech = Promise.all(['hello.pcm', 'specials.pcm', 'barge.pcm'].map(fetchPCM));

  // Automatic turn taking.
  const { client, speaking } = await connect('', '/api/authorize', params.get('ws'));
  r.log('connected');
  const [hello, specials, barge] = await speech;
  await r.seen('turn.end/assistant', 1, 20000); // the greeting played and was acknowledged
  r.log('greeting played');

  await mic.say(hello, rate);
  await r.seen('turn.end/assistant', 2, 20000);
  r.log('spoken turn done');

  // The user speaks over the long reply as soon as the SDK plays it: the
  // double has sent all of it, and takes voiced audio while the reply is
  // unacknowledged for a barge-in. Its response.text shows the user's
  // turn over: speech before it would belong to that turn.
  await mic.say(specials, rate);
  await r.until('the long reply to play', () => (r.counts['response.text'] ?? 0) >= 3 && speaking(), 20000);
  await mic.say(barge, rate);
  await r.seen('turn.end/assistant', 3, 20000); // the reply to the barge-in
  r.log('barge-in done');

  // client.response.data goes first: the double takes the client's
  // messages in order, so the text turn's reply shows that it has it.
  await client.sendClientResponseData({ seat: 'window' });
  await client.sendClientResponseText('When do you close?');
  await r.seen('turn.end/assistant', 4, 20000);
  await client.disconnect();
  await r.seen('disconnect', 1, 5000);

  // Push to talk.
  r.log('disconnected');
  const ptt = await connect('ptt:', '/api/authorize-ptt', params.get('wsptt'));
  r.log('ptt: connected');
  // connect() resolves with the recorder running but before the WebSocket
  // opens, and the SDK drops a message sent before then: the button goes
  // down once onConnect has come. The recorder keeps what it records from
  // the first sound on, so the speech that follows is sent whole.
  await r.until('the push-to-talk WebSocket to open', () => 'ptt:conversation' in r.values, 20000);
  await ptt.client.triggerUserTurnStarted();
  await mic.say(hello, rate);
  // Let the recorder deliver the last of the speech before the button is
  // let go, as a person does: the SDK sends what it records only while
  // the button is down, in chunks of 1638 samples (205 ms at its 8 kHz),
  // and on a loaded machine the recorder lags. Two silent chunks sent
  // after the speech has played are past its end.
  silentSent = 0;
  await r.until('the SDK to send the end of the speech', () => silentSent >= 2, 20000);
  await ptt.client.triggerUserTurnFinished();
  await r.seen('ptt:turn.end/assistant', 1, 20000);
  await ptt.client.disconnect();
});
