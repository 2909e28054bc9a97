// Package openaihttp posts requests to one endpoint of an OpenAI-compatible
// server and reads its answer, for voicetest's model clients
// (voicetest/llm's chat completions, voicetest/speech's speech and
// transcriptions), so that neither needs openai-go in its non-test code:
// the bearer key, OpenAI's retry policy (the one openai-go applies: a
// connection error or a 408, 409, 429 or 5xx answer retried after the
// server's Retry-After or an exponential backoff), error statuses decoded
// from OpenAI's error object into an *APIError, bounded response bodies,
// and no redirect to another origin than the endpoint's, so that the key
// never leaves it.
//
// What each endpoint sends and receives (the request's JSON or multipart
// body, the answer's decoding) is its client's; the clients' tests check
// it against openai-go as their oracle.
package openaihttp
