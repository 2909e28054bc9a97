// Package llm is voicetest's chat-completions client for any
// OpenAI-compatible endpoint (OpenAI, Ollama, vLLM, LM Studio), with tools,
// forced tool choice and JSON-schema output. Every call goes through the
// voicetest cache.
//
// A Client implements voicetest.LLM. New reads OPENAI_API_KEY,
// OPENAI_BASE_URL and VOICETEST_LLM_MODEL (default gpt-4o-mini); WithAPIKey,
// WithBaseURL and WithModel override them, so
//
//	OPENAI_BASE_URL=http://localhost:11434/v1/ VOICETEST_LLM_MODEL=llama3.2 go test ./...
//
// records against a local Ollama. Use WithProvider to give such an endpoint
// its own name in cache keys.
//
// ChatRequest maps onto the Chat Completions API: messages (system, user,
// assistant with tool calls, tool results), tools as function tools,
// ToolChoice "auto", "none", "required" or a tool's name (a forced
// function call), JSONSchema as response_format json_schema, temperature,
// seed and max_tokens. Requests are validated before they reach the cache
// or the network (Validate). Tool call arguments the model returns must be
// valid JSON, or Complete fails saying so.
//
// # Cache
//
// With WithCache (ForTest uses cache.ForTest(t)) each completion is keyed
// by kind "llm", the provider, the model and the whole request, and
// answered from the store when it holds it; a miss in replay mode is a
// *cache.MissError naming the command that records it. Keys and stored
// entries never hold the API key. In replay mode no key is needed and
// retries are off.
package llm
