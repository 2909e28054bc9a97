// Package wscodec reaches any agent that exchanges audio over a plain
// WebSocket, as the agent under test, in the format a Codec describes:
// RawPCM for bare PCM16 binary frames, JSONBase64 for JSON messages with
// base64 audio, or a Codec of your own (New, Agent).
package wscodec
