// Package llm is voicetest's chat-completions client for any
// OpenAI-compatible endpoint (OpenAI, Ollama, vLLM, LM Studio), with tools,
// forced tool choice and JSON-schema output. Every call goes through the
// voicetest cache.
package llm
