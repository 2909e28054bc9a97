// Package realtime reaches an agent that speaks the OpenAI Realtime
// protocol over WebSocket (OpenAI's own speech-to-speech models, or any
// server that implements the protocol), as the agent under test:
// voicetest plays the client (New, Agent). Conn adds the protocol's own
// requests (SendEvent) to voicetest.Conn.
package realtime
