// Package composable is an in-process reference voice agent built from
// three engines: speech to text, a chat model and text to speech (New).
// Each turn it transcribes the caller, asks the model (running its tools),
// and speaks the answer in 20 ms frames at the pace they play, reporting
// the parts of its response time. See Agent.
package composable
