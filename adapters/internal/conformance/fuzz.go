package conformance

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/voicetest-go/voicetest/adapters/internal/adaptertest"
	"github.com/voicetest-go/voicetest/adapters/wire"
	"github.com/voicetest-go/voicetest/pcm"
	"github.com/voicetest-go/voicetest/voicetest"
)

// Fuzz fuzzes the adapter's inbound parser through its public Conn: the
// loopback peer sends one arbitrary frame (text or binary) and then the
// Subject's Echo of a sentinel, and the adapter must make of them well
// formed events and *wire.FrameErrors only — no panic (an adapter turns
// a decoder panic into a frame error naming it, which Fuzz rejects), no
// event of an unknown kind, no audio at another rate than the session's,
// no tool event without its Tool — and stay usable: the sentinel still
// arrives, unless the frame itself ended the call (a hang-up or a closed
// transport, which some protocols' messages mean). The seed corpus is the
// Subject's Malformed frames, a frame of its audio and an echo, so `go
// test` runs them every time; `go test -fuzz` explores from there. A
// Subject that is InMemory has each frame checked on virtual time, in a
// testing/synctest bubble with the peer on an in-memory network.
//
// Every adapter runs it beside Run, as FuzzXxx in its own package, so
// that each inbound parser of every adapter has a fuzz target.
func Fuzz(f *testing.F, s Subject) {
	if s.Rate == 0 {
		s.Rate = pcm.DefaultRate
	}
	for _, m := range s.Malformed {
		f.Add(m.Data, m.Binary)
	}
	a := s.Audio(160)
	f.Add(a.Data, a.Binary)
	e := s.Echo("hello")
	f.Add(e.Data, e.Binary)
	f.Fuzz(func(t *testing.T, data []byte, binary bool) {
		if !s.InMemory {
			fuzzOne(t, s, data, binary)
			return
		}
		// On virtual time, the peer in process (as Run's checks): a
		// frame that makes the agent speak or wait costs no wall time.
		synctest.Test(t, func(t *testing.T) {
			s := s
			s.net = adaptertest.NewMemNet(t)
			fuzzOne(t, s, data, binary)
		})
	})
}

// fuzzOne is Fuzz's check of one frame: the peer sends it and then the
// sentinel's echo, and the adapter must deliver the sentinel.
func fuzzOne(t *testing.T, s Subject, data []byte, binary bool) {
	conn := s.connect(t, Peer{Send: []Frame{{Data: data, Binary: binary}, s.Echo(sentinel)}})
	// A frame that is itself valid may make the agent speak or wait;
	// the bound only ends the read, it is not a timing assertion.
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	if err := Drain(t, ctx, conn, s.Rate, s.Adapter, func(ev voicetest.AgentEvent) bool { return mentions(ev, sentinel) }); err != nil {
		t.Fatalf("the sentinel after the fuzzed frame never arrived: %v", err)
	}
}

// Drain reads conn until until(ev) holds, the agent hangs up or the
// transport closes (nil), or ctx ends (its error), and fails t on what a
// fuzzed frame must never produce: a decoder panic, a frame error that
// does not name adapter (when adapter is not empty) or its cause, audio at
// another rate than rate, a tool event without its Tool, an event of an
// unknown kind. Frame errors and errors the agent reported are skipped:
// the Conn must stay usable after them.
func Drain(t testing.TB, ctx context.Context, conn voicetest.Conn, rate int, adapter string, until func(voicetest.AgentEvent) bool) error {
	t.Helper()
	for {
		ev, err := conn.Recv(ctx)
		if err != nil {
			var fe *wire.FrameError
			switch {
			case errors.As(err, &fe):
				if strings.Contains(err.Error(), "panicked") {
					t.Fatalf("the decoder panicked: %v", err)
				}
				if (adapter != "" && fe.Adapter != adapter) || fe.Adapter == "" || fe.Err == nil {
					t.Fatalf("frame error %#v: name the adapter and the cause", fe)
				}
				continue
			case errors.Is(err, voicetest.ErrTransportClosed):
				return nil
			case ctx.Err() != nil:
				return err
			default:
				// An error the agent reported passes through and leaves
				// the Conn usable.
				if err.Error() == "" {
					t.Fatal("an error with no message")
				}
				continue
			}
		}
		switch ev.Kind {
		case voicetest.AgentAudio:
			if ev.Audio.Rate != rate || ev.Audio.Validate() != nil {
				t.Fatalf("agent audio at %d Hz (session %d): %v", ev.Audio.Rate, rate, ev.Audio.Validate())
			}
		case voicetest.AgentToolCall, voicetest.AgentToolResult:
			if ev.Tool == nil {
				t.Fatalf("%s event without Tool", ev.Kind)
			}
		case voicetest.AgentHangUp:
			return nil
		case voicetest.AgentTranscript, voicetest.UserTranscript, voicetest.AgentData, voicetest.AgentTurnEnd,
			voicetest.AgentInterrupted, voicetest.AgentLog, voicetest.AgentTimings, voicetest.AgentHandoff:
		default:
			t.Fatalf("event of unknown kind %d", ev.Kind)
		}
		if until(ev) {
			return nil
		}
	}
}
