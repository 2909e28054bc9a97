// Package handler runs the agent under test in process: a Go function
// (Func) called once per event (the start of the call, each user message,
// DTMF, a timeout, an interruption, the end) that answers through a Call
// (Say, Play, ToolCall, HangUp …). New makes it a voicetest.Agent.
//
// It exchanges text (the default, TextMode) or, with AudioMode, speaks
// through a TTS and hears the caller through an STT, as a deployed voice
// agent would. It waits on channels and timers only, so inside a
// testing/synctest bubble (voicetest.Scenario) it runs on virtual time and
// its timeline is the same on every run; WithThinkTime gives it a fixed
// latency, WithVAD a voice activity detector that learns a noisy line's
// noise floor.
package handler
