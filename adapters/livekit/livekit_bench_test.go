package livekit_test

import (
	"context"
	"testing"
	"time"

	"github.com/voicetest-go/voicetest/adapters/internal/adaptertest"
	"github.com/voicetest-go/voicetest/adapters/livekit"
	"github.com/voicetest-go/voicetest/internal/peers/lkagent"
	"github.com/voicetest-go/voicetest/internal/peers/lkserver"
	"github.com/voicetest-go/voicetest/voicetest"
)

// benchAgent starts the Go agent double in the package's livekit-server
// for a benchmark.
func benchAgent(b *testing.B, cfg lkagent.Config) voicetest.Agent {
	b.Helper()
	srv := server.Get(b)
	cfg.URL, cfg.APIKey, cfg.APISecret, cfg.AgentName = srv.URL, lkserver.DefaultKey, lkserver.DefaultSecret, agentName("bench")
	lkagent.New(b, cfg)
	return livekit.New(srv.URL, lkserver.DefaultKey, lkserver.DefaultSecret, cfg.AgentName)
}

// BenchmarkLiveKitConnect measures Connect and Close through a real
// livekit-server on loopback: the caller's token, joining a new room,
// publishing the microphone, dispatching the agent by name, the agent
// double's job (it joins and subscribes to the microphone), then leaving
// and deleting the room. ns/op is the connect-and-close time;
// connect-ns/op the Connect alone, until the agent hears the caller.
func BenchmarkLiveKitConnect(b *testing.B) {
	a := benchAgent(b, lkagent.Config{})
	ctx := context.Background()
	var connect time.Duration
	for b.Loop() {
		t0 := time.Now()
		conn, err := a.Connect(ctx, adaptertest.BenchSession(24000))
		if err != nil {
			b.Fatal(err)
		}
		connect += time.Since(t0)
		if err := conn.Close(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(connect)/float64(b.N), "connect-ns/op")
}

// BenchmarkLiveKitTurn measures one turn through the server: the user's
// fake speech ("hello", about 0.4 s) sent paced as it plays, the agent
// double's VAD waiting 250 ms of silence, its reply ("Okay.", about
// 0.5 s) until its turn end. ns/op is the turn's wall time, mostly
// real-time audio; first-audio-ns/op the time from the end of the user's
// audio to the agent's first audible frame (the agent's 250 ms of VAD
// silence included); cpu-ns/op the CPU time per turn of this process,
// which holds the adapter, the SDK's Opus codec and resampler on both
// sides, and the agent double (the server runs in a process of its own).
func BenchmarkLiveKitTurn(b *testing.B) {
	a := benchAgent(b, lkagent.Config{Turns: []lkagent.Turn{{Reply: "Okay."}}})
	conn := adaptertest.BenchConn(b, a, 24000)
	frames := adaptertest.FakeSpeech("hello", 24000).Frames(20 * time.Millisecond)
	ctx := context.Background()
	b.ReportAllocs()
	cpu0 := adaptertest.CPUTime(b)
	var first time.Duration
	for b.Loop() {
		if err := adaptertest.SendUtterance(ctx, conn, frames); err != nil {
			b.Fatal(err)
		}
		sent := time.Now()
		heard := false
		for {
			ev, err := conn.Recv(ctx)
			if err != nil {
				b.Fatal(err)
			}
			if ev.Kind == voicetest.AgentAudio && !heard {
				heard = true
				first += time.Since(sent)
			}
			if ev.Kind == voicetest.AgentTurnEnd {
				break
			}
		}
	}
	b.ReportMetric(float64(first)/float64(b.N), "first-audio-ns/op")
	b.ReportMetric(float64(adaptertest.CPUTime(b)-cpu0)/float64(b.N), "cpu-ns/op")
}
