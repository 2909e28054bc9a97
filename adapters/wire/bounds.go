package wire

// The bounds of what adapters hold of an agent's output besides the
// Conn's queue (WSOptions.MaxQueueBytes): each is a fixed limit on a
// protocol's bookkeeping that no well-behaved agent comes near, so that an
// agent that floods it fails with an error rather than exhausting memory.
const (
	// MaxLoggedOnce bounds the distinct keys (unknown event types) an
	// adapter remembers in order to log each once.
	MaxLoggedOnce = 64
	// MaxPendingMarks bounds the marks a Twilio bot may have waiting for
	// their audio to play.
	MaxPendingMarks = 4096
	// MaxResponseCalls bounds the tool calls of one Realtime response.
	MaxResponseCalls = 1024
)

// LogOnce reports whether key should be logged: the first time it is
// seen, while seen holds fewer than MaxLoggedOnce keys. Past that bound
// nothing new is logged or remembered, so an agent that sends endless
// distinct unknown event types grows neither the set nor the log.
func LogOnce(seen map[string]bool, key string) bool {
	if seen[key] || len(seen) >= MaxLoggedOnce {
		return false
	}
	seen[key] = true
	return true
}
