// Package keepalive is the HTTP client voicetest's model clients
// (voicetest/llm, voicetest/speech's OpenAI engines) use when their caller
// gives none: it keeps connections alive between calls, outside and inside
// a testing/synctest bubble, with no goroutine of its own while a request
// is out and none waiting on an idle connection inside a bubble, so that a
// bubble's virtual clock keeps running and the bubble can end.
package keepalive
