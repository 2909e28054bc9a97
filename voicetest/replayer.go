package voicetest

// Replayer is implemented by an Agent that plays back a conversation
// recorded earlier instead of reaching a live agent (voicetest/cassette
// does). When Replaying reports true, Scenario compares the scenario's
// golden files within tolerance under GoldenAuto even if the replay runs
// on virtual time: the conversation was recorded on the real clock, and
// its golden files may have been written then.
type Replayer interface {
	Replaying() bool
}

// replaying reports whether a replays a recorded conversation.
func replaying(a Agent) bool {
	r, ok := a.(Replayer)
	return ok && r.Replaying()
}
