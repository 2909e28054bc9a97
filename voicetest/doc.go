// Package voicetest is a Go test framework for voice AI agents.
//
// A scenario lets a simulated caller talk to the agent under test, in process
// or over the protocol the agent already speaks; it records audio, transcript
// and a timeline, measures latency, asks judges for verdicts, and compares the
// transcript and timeline with golden files.
//
// This package defines the runner and the interfaces (Agent, Conn, User,
// Judge, TTS, STT, LLM); concrete implementations live in the adapters,
// personas, judges, speech and llm packages.
package voicetest
