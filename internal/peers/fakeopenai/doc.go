// Package fakeopenai is a TEST DOUBLE: an OpenAI-compatible HTTP server on
// loopback for voicetest's own tests. It is not OpenAI and not a mock of any
// model; it exists so that the code paths that talk to OpenAI-compatible
// servers (openai-go clients for TTS, STT and chat completions) can be
// tested offline, with the requests checked the way the real API checks
// them.
//
// It serves three endpoints under /v1/:
//
//   - POST /v1/audio/speech: validates model, input, voice, speed and
//     response_format (only "pcm" is produced) and answers deterministic
//     24 kHz PCM16 audio derived from the request, so equal requests give
//     equal bytes.
//   - POST /v1/audio/transcriptions: validates the multipart form (a file
//     part with a filename, a known audio extension and a content type;
//     model; optional language, prompt, temperature and response_format) and
//     answers the transcript from a handler, or the text of speech this
//     server synthesized itself (it remembers the audio it produced), or a
//     400 error when it has no answer.
//   - POST /v1/chat/completions: validates messages, tools, tool_choice
//     (including a forced function), response_format (json_schema) and the
//     sampling fields, and answers from a queue of scripted replies or from
//     a handler function, including tool calls.
//
// Bad requests get HTTP 400 with an OpenAI-shaped error body
// ({"error": {"message", "type", "param", "code"}}); a missing or wrong
// bearer key gets 401. Every request is recorded, so a test can assert on
// exactly what a client sent.
package fakeopenai
