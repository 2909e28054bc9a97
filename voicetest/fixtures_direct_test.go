package voicetest_test

import (
	"testing"

	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/fixtures"
)

// TestFixturesConnIsTakenDirectly: the fixtures' fake agents keep the
// runner's in-process protocol (TryRecv and Notify), so that on virtual
// time the runner takes their events on its own goroutine. A fake that
// drifts from that interface still works, through a receive goroutine,
// and only the benchmarks would show it (session 7: 975 → 1121
// allocations and about 20 % more time a ten-turn voice run, when the
// interface's Ready became Notify and the fake kept Ready).
func TestFixturesConnIsTakenDirectly(t *testing.T) {
	for name, a := range map[string]voicetest.Agent{
		"EchoAgent":     fixtures.EchoAgent(),
		"ScriptedAgent": fixtures.ScriptedAgent(fixtures.Reply{Text: "hello"}),
		"TextAgent":     fixtures.TextAgent(fixtures.Reply{Text: "hello"}),
	} {
		conn, err := a.Connect(t.Context(), voicetest.Session{Name: t.Name(), Rate: 24000})
		if err != nil {
			t.Fatalf("%s: Connect: %v", name, err)
		}
		if !voicetest.TakesEventsDirectly(conn) {
			t.Errorf("%s: the runner would read its Conn (%T) through a receive goroutine: it no longer implements the runner's queuedConn (TryRecv, Notify)", name, conn)
		}
		if err := conn.Close(); err != nil {
			t.Errorf("%s: Close: %v", name, err)
		}
	}
}
