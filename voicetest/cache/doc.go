// Package cache is voicetest's record/replay store for LLM, TTS and STT
// answers.
//
// Every answer is stored on disk under the calling test package's
// testdata/voicetest/cache/ directory, keyed by a SHA-256 over a canonical
// encoding of exactly the inputs that determine it, so a committed cache
// replays a whole suite offline, byte for byte, with no API key.
package cache
