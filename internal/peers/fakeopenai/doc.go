// Package fakeopenai is a TEST DOUBLE: an OpenAI-compatible HTTP server on
// loopback for voicetest's own tests. It is not OpenAI and not a mock of any
// model; it exists so that the code paths that talk to OpenAI-compatible
// servers (openai-go clients for TTS, STT and chat completions) can be
// tested offline, with the requests checked the way the real API checks
// them. OpenAI's own Node SDK (openai 7.57.0) drives it in
// internal/peers/sdkcheck (TestFakeOpenAIWithOpenAISDK).
//
// It serves three endpoints under /v1/, following the API reference
// (platform.openai.com/docs/api-reference/audio and /chat) and the
// request and event types of the openai SDKs:
//
//   - POST /v1/audio/speech: validates model, input, voice, speed,
//     response_format and stream_format, and answers deterministic speech
//     derived from the request (equal requests give equal bytes) in the
//     asked format: mp3 (the API's default), opus (Ogg), aac (ADTS) and
//     flac encoded by ffmpeg, wav and pcm (24 kHz PCM16) written directly.
//     stream_format "sse" answers speech.audio.delta events of base64 audio
//     and a speech.audio.done with the usage; like the API, it refuses "sse"
//     for tts-1 and tts-1-hd.
//   - POST /v1/audio/transcriptions: validates the multipart form (a file
//     part with a filename, a known audio extension and a content type;
//     model; optional language, prompt, temperature, response_format,
//     stream, timestamp_granularities[] and include[]) and answers the
//     transcript from a handler, or the text of speech this server
//     synthesized itself (it remembers its last 256 syntheses, as samples
//     and as the file it served), or a 500 error when it has no answer.
//     Answers come as json (with usage), text, srt, vtt, or verbose_json
//     with the audio's duration, a segment and, when
//     timestamp_granularities[] asks, words timed in order across the
//     audio. stream=true streams transcript.text.delta events and a
//     transcript.text.done, except for whisper-1, for which the API
//     reference says streaming "is not supported ... and will be ignored":
//     whisper-1 answers as if stream were false. Formats the model does not
//     produce are refused as the API refuses them (whisper-1: json, text,
//     srt, vtt, verbose_json; gpt-4o(-mini)-transcribe: json only); models
//     the double does not know take any format.
//   - POST /v1/chat/completions: validates messages (string content or
//     content parts: "text", and "input_audio" in user messages, whose
//     base64 data and format "wav" or "mp3" are checked and kept in
//     ChatMessage.Audio; see chat_audio.go), tools, tool_choice
//     (including a forced function), response_format (json_schema), the
//     sampling fields and stream/stream_options, and answers from a queue
//     of scripted replies or from a handler function, including tool
//     calls. stream=true answers chat.completion.chunk server-sent events
//     (the role, the content word by word or each tool call's id and name
//     and then its arguments in pieces, the finish_reason), a usage chunk
//     when stream_options.include_usage is set, and "data: [DONE]".
//     Every completion and chunk names Model ("fakeopenai-double") as the
//     model that answered, whatever model was asked for, so an answer a
//     client keeps (voicetest.ChatResponse.Model, the llm cache) says the
//     double produced it; tests that commit its answers record them under
//     Provider and Model, never a real model's name
//     (TestCommittedLLMEntriesNameTheirProducer checks every committed
//     entry).
//
// Bad requests get HTTP 400 with an OpenAI-shaped error body
// ({"error": {"message", "type", "param", "code"}}); a missing or wrong
// bearer key gets 401. Every request is recorded, so a test can assert on
// exactly what a client sent. Token counts in usage are stand-ins (words),
// not a tokenizer's.
package fakeopenai
