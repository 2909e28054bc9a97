// Package personas provides simulated callers for voicetest scenarios:
// scripted lines, recorded audio files, LLM-played personas with a library of
// ready caller profiles, and red-team attackers.
package personas
