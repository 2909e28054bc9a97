// Package judges provides verdicts for voicetest scenarios: an LLM criteria
// judge, a per-message intent judge, and deterministic checks (text, regex,
// tool calls, latency budgets, interruption handling) that need no LLM.
package judges
