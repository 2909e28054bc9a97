// Package openaioracle holds no code: its tests check the requests of the
// module's OpenAI clients against openai-go, the OpenAI SDK those clients
// used before they sent their requests themselves
// (voicetest/internal/openaihttp). voicetest/llm's chat request, encoded
// by the Client, must be the JSON openai-go encoded for it;
// voicetest/speech's speech and transcription requests must be, on the
// wire, the requests openai-go sent, and both clients must retry, wait and
// fail as openai-go did.
//
// The checks live in one package of their own so that openai-go, whose
// objects are ~330 MB, is linked into one test binary at every
// `go test ./...` instead of two (llm's and speech's), and into none of
// the module's packages (adapters/deps_test.go checks both).
package openaioracle
