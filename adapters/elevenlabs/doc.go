// Package elevenlabs reaches an ElevenLabs Conversational AI agent (Agents
// Platform) over its WebSocket, as the agent under test: voicetest plays
// the client side of the conversation (New, Agent).
package elevenlabs
