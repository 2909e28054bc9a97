package voicetest

// WireStatsReporter is implemented by a Conn that counts what crossed its
// wire (the adapters built on adapters/wire do). The runner asks once,
// after Close, and puts the answer in Result.Metrics.Wire, so a protocol
// problem (marks never echoed, audio dropped, a clear for every turn)
// shows without reading the capture. WireStats must be safe to call
// after Close.
type WireStatsReporter interface {
	WireStats() WireStats
}

// WireStats counts what crossed an adapter's wire in one conversation.
// Counts an adapter's protocol does not have stay zero.
type WireStats struct {
	// Adapter names the adapter.
	Adapter string `json:"adapter"`
	// FramesIn and FramesOut count the frames (WebSocket messages)
	// received from and sent to the agent; BytesIn and BytesOut their
	// payload bytes.
	FramesIn  int64 `json:"frames_in"`
	FramesOut int64 `json:"frames_out"`
	BytesIn   int64 `json:"bytes_in"`
	BytesOut  int64 `json:"bytes_out"`
	// MarksReceived counts the playback marks the agent sent to learn
	// when its audio has played (Twilio "mark"); MarksEchoed those the
	// caller echoed back once the audio before them had played, with
	// MarkDelay the time from a mark's arrival to its echo.
	MarksReceived int64       `json:"marks_received"`
	MarksEchoed   int64       `json:"marks_echoed"`
	MarkDelay     Percentiles `json:"mark_delay"`
	// MarksSent counts the marks the caller sent of its own (Twilio with
	// CallerMarks).
	MarksSent int64 `json:"marks_sent"`
	// Clears counts the agent telling the caller to drop the audio it
	// queued (Twilio "clear", an ElevenLabs interruption, a cancelled
	// Realtime response, LayerCode's user turn start over the agent).
	Clears int64 `json:"clears"`
	// Cancels counts the caller cancelling the agent's response through
	// the protocol (Realtime "response.cancel", a WebSocket codec's
	// interrupt frames).
	Cancels int64 `json:"cancels"`
	// DroppedFrames counts the agent's frames the adapter did not pass on:
	// audio of a response already interrupted (dropped as the vendor's own
	// client drops it) and anything sent after the agent hung up.
	DroppedFrames int64 `json:"dropped_frames"`
}
