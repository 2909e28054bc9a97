// Package adapters holds one package per way of reaching the agent under
// test; import the one your agent speaks, and nothing else is compiled
// into your test:
//
//	adapters/handler     in-process Go agents written as event handlers (handler.New)
//	adapters/composable  an in-process STT → LLM → TTS reference agent (composable.New)
//	adapters/twilio      bots that serve Twilio Media Streams (twilio.New)
//	adapters/realtime    servers of the OpenAI Realtime protocol (realtime.New)
//	adapters/gemini      Gemini Live models, the Live protocol over adapters/wire,
//	                     configured with google.golang.org/genai's types (gemini.New)
//	adapters/elevenlabs  ElevenLabs Conversational AI agents (elevenlabs.New)
//	adapters/layercode   LayerCode agents (layercode.New)
//	adapters/pipecat     Pipecat bots over their WebSocket transport, protobuf
//	                     (adapters/pipecat/pipecatpb) or Twilio serializer, RTVI (pipecat.New)
//	adapters/vapi        Vapi assistants over Vapi's WebSocket transport (vapi.New)
//	adapters/livekit     LiveKit agents, through a room of a LiveKit server, with
//	                     LiveKit's Go SDK (livekit.New; cgo: libopus, libopusfile, libsoxr)
//	adapters/webrtc      agents reached over WebRTC with an HTTP offer/answer, as
//	                     Pipecat's SmallWebRTC transport serves them (webrtc.New; cgo: libopus)
//	adapters/twiliophone agents at a phone number, called (or calling) through
//	                     Twilio's REST API, TwiML webhooks and Media Streams (twiliophone.Agent)
//	adapters/wscodec     any WebSocket agent, in a format a Codec describes (wscodec.New)
//	adapters/wire        what the WebSocket adapters share: WSOptions, FrameError,
//	                     wire captures, tool answers, the connection itself
//
// Three internal packages hold what some adapters share beyond
// adapters/wire: adapters/internal/evqueue, the bounded receive queue of
// the adapters that do not read through wire's connection (WebRTC, phone
// numbers); adapters/internal/rtvi, RTVI message decoding (Pipecat,
// WebRTC); and adapters/internal/silencegate, which keeps a never-silent
// line's silence out of the agent's audio (WebRTC, phone numbers).
//
// Every protocol package has the same shape: New returns an *Agent whose
// fields tune it (a handler agent is tuned by options instead, and a
// twiliophone.Agent, whose mode its fields choose, is a struct literal),
// and the Agent's Connect returns the voicetest.Conn of one conversation.
//
// The rule that keeps the rooms apart: a protocol package imports the
// module's shared packages (voicetest, pcm, voicetest/scrub, adapters/wire
// and the internal ones above) and that protocol's own libraries, never
// another protocol package; and only adapters/<protocol> imports a
// protocol's SDK. The in-process adapters
// compile without any WebSocket library or OpenAI SDK. TestDependencyRule
// in this package checks it for every package under adapters/, so a new
// protocol added here is held to it.
//
// Every wire adapter runs the same conformance suite
// (adapters/internal/conformance) from its own package's TestConformance,
// against its loopback peer.
//
// This package itself has no code: its tests are the ones that run over
// every wire adapter at once (secrets in captures and logs, AfterWords on
// remote protocols, the wire fuzzers, dial and TLS checks, and the live
// tests against the real services, TestLive<Protocol>).
package adapters
