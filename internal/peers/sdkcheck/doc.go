// Package sdkcheck holds the conformance tests of voicetest's loopback test
// doubles (internal/peers): each drives a double with the vendor's own
// client SDK from npm, at the exact versions package.json pins (installed
// as package-lock.json locks them), so that a misunderstanding of a
// protocol shared by a double and voicetest's adapters cannot pass
// unnoticed. The package has no API; it exists for its tests.
//
//   - TestRealtimeDoubleWithAgentsSDK: realtimepeer with
//     @openai/agents-realtime 0.20.0 (its WebSocket transport, under Node,
//     as a server uses it; realtime.mjs). Every event the double sends is
//     checked against the SDK's own zod schemas, which the SDK would
//     otherwise fail silently. Untested: the SDK's WebRTC and SIP
//     transports, which the double does not serve.
//   - TestFakeOpenAIWithOpenAISDK: fakeopenai with openai 7.57.0 under
//     Node (openai.mjs; the package asks for Node 22, and runs on 20).
//   - TestElevenLabsDoubleWithClientSDK: elevenpeer with @elevenlabs/client
//     1.25.0, its web build in headless Chromium (elevenlabs.html), the
//     SDK's own microphone and playback worklets on a fake microphone.
//     ...TextOnly drives the same SDK in text-only mode under Node, with
//     the ws package as the WebSocket Node 20 lacks (elevenlabs-text.mjs).
//     Untested: a real microphone and speaker, and the WebRTC connection
//     type, which the double does not serve.
//   - TestLayerCodeDoubleWithJSSDK: layercodepeer with @layercode/js-sdk
//     2.8.10 in headless Chromium (layercode.html), its recorder and stream
//     player worklets on a fake microphone. Untested: the SDK's voice
//     activity detection, whose model loads from assets.layercode.com.
//
// The browser pages replace navigator.mediaDevices.getUserMedia with a
// microphone the page speaks into (browser.mjs): fake speech
// (fixtures.FakeTTS) that the SDK records with its own worklets as it
// would a real microphone, and that the doubles decode (fixtures.FakeSTT).
// The SDK's source node of the microphone's stream is a node of the SDK's
// own AudioContext that the speech plays into: Chromium's hop of a
// MediaStream from one AudioContext to another drops a 10 ms frame now
// and then on a loaded machine, which the fake speech does not survive.
//
// The tests skip with the install command when Node.js, Chromium or the
// packages are absent, and fail instead when VOICETEST_SDKCHECK_REQUIRED=1,
// as in CI: .ci/run installs the packages with npm ci.
package sdkcheck
