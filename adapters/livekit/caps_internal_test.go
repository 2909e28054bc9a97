package livekit

import (
	"testing"

	"github.com/voicetest-go/voicetest/adapters/internal/adaptertest/readmecaps"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/scrub"
)

// TestREADMECapabilities: the README's capabilities row of livekit says
// what a Conn declares, with the settings that change it. The Conn is
// made as Connect makes it, before it joins a room (TestRoomDeletedMidReply
// checks one joined to a real livekit-server).
func TestREADMECapabilities(t *testing.T) {
	for _, tc := range []struct {
		name  string
		set   func(*Agent)
		conds []string
	}{
		{"default", func(*Agent) {}, nil},
		{"NoTranscripts", func(a *Agent) { a.NoTranscripts = true }, []string{"NoTranscripts"}},
		{"NoAgentState", func(a *Agent) { a.NoAgentState = true }, []string{"NoAgentState"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := &settings{Agent: Agent{MaxQueueBytes: DefaultMaxQueueBytes, MaxFrameBytes: DefaultMaxFrameBytes}}
			tc.set(&st.Agent)
			c, err := newConn(st, voicetest.Session{Name: t.Name(), Rate: 24000, Logf: t.Logf}, scrub.New())
			if err != nil {
				t.Fatal(err)
			}
			readmecaps.Check(t, "`livekit`", c.Capabilities(), tc.conds...)
		})
	}
}
