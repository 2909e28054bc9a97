// Package adapters connects voicetest to the agent under test: in-process Go
// handler agents, and agents reached over the protocols they already speak
// (Twilio Media Streams, OpenAI Realtime, LayerCode, ElevenLabs ConvAI, generic
// WebSocket), plus a composable STT → LLM → TTS reference agent.
package adapters
