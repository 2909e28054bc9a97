package cassette_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/voicetest-go/voicetest/pcm"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/cache"
	"github.com/voicetest-go/voicetest/voicetest/cassette"
)

// Shape of the benchmark conversation: turns of the caller's audio, each
// answered by the agent with reply frames of 20 ms and a turn end.
const (
	benchTurns  = 10
	benchFrames = 100 // caller frames per turn (2 s)
	benchReply  = 150 // agent frames per turn (3 s)
	benchRate   = 24000
)

// instantAgent is a test double of an agent that answers each end of
// utterance at once with benchReply frames and a turn end.
type instantAgent struct{}

func (instantAgent) Connect(ctx context.Context, s voicetest.Session) (voicetest.Conn, error) {
	return &instantConn{events: make(chan voicetest.AgentEvent, benchReply+1)}, nil
}

type instantConn struct {
	events chan voicetest.AgentEvent
}

var benchFrame = pcm.Silence(benchRate, 20*time.Millisecond)

func (c *instantConn) Capabilities() voicetest.Capabilities {
	return voicetest.Capabilities{Adapter: "instant", Audio: true, TurnEnd: true}
}
func (c *instantConn) SendAudio(context.Context, pcm.Chunk) error { return nil }
func (c *instantConn) EndUtterance(context.Context) error {
	for range benchReply {
		c.events <- voicetest.AgentEvent{Kind: voicetest.AgentAudio, Audio: benchFrame}
	}
	c.events <- voicetest.AgentEvent{Kind: voicetest.AgentTurnEnd}
	return nil
}
func (c *instantConn) SendText(context.Context, string) error { return nil }
func (c *instantConn) SendDTMF(context.Context, string) error { return nil }
func (c *instantConn) Interrupt(context.Context) error        { return nil }
func (c *instantConn) Recv(ctx context.Context) (voicetest.AgentEvent, error) {
	select {
	case ev := <-c.events:
		return ev, nil
	case <-ctx.Done():
		return voicetest.AgentEvent{}, ctx.Err()
	}
}
func (c *instantConn) Close() error { return nil }

// converse drives one benchmark conversation through conn.
func converse(b *testing.B, conn voicetest.Conn) {
	ctx := context.Background()
	user := make([]int16, benchRate/50)
	for i := range user {
		user[i] = int16(i * 37)
	}
	frame := pcm.Chunk{Rate: benchRate, Samples: user}
	for range benchTurns {
		for range benchFrames {
			if err := conn.SendAudio(ctx, frame); err != nil {
				b.Fatal(err)
			}
		}
		if err := conn.EndUtterance(ctx); err != nil {
			b.Fatal(err)
		}
		for {
			ev, err := conn.Recv(ctx)
			if err != nil {
				b.Fatal(err)
			}
			if ev.Kind == voicetest.AgentTurnEnd {
				break
			}
		}
	}
}

var benchSession = voicetest.Session{Name: "bench", Rate: benchRate}

// connectAndConverse holds one benchmark conversation with a.
func connectAndConverse(b *testing.B, a *cassette.Agent) {
	conn, err := a.Connect(context.Background(), benchSession)
	if err != nil {
		b.Fatal(err)
	}
	converse(b, conn)
	conn.Close()
}

// reportPerCall reports the time per call of the caller or event of the
// agent.
func reportPerCall(b *testing.B) {
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(benchTurns*(benchFrames+1+benchReply+1)), "ns/call")
}

// BenchmarkRecord measures recording one conversation (10 turns, 1000
// caller frames, 1500 agent frames) through a cassette, against an agent
// that answers at once: the recorder's cost per conversation.
func BenchmarkRecord(b *testing.B) {
	a := cassette.New(b, instantAgent{}, cassette.WithDir(b.TempDir()), cassette.WithMode(cache.Record))
	b.ReportAllocs()
	for b.Loop() {
		connectAndConverse(b, a)
	}
	reportPerCall(b)
}

// BenchmarkReplay measures replaying that conversation: loading and
// checking the cassette (index and 10 WAV bodies, 30 s of agent audio)
// and serving it, call by call and event by event, on the real clock with
// the recorded delays set to zero (see below).
func BenchmarkReplay(b *testing.B) {
	dir := b.TempDir()
	b.Run("record", func(b *testing.B) {
		connectAndConverse(b, cassette.New(b, instantAgent{}, cassette.WithDir(dir), cassette.WithName("bench"), cassette.WithMode(cache.Record)))
		for b.Loop() {
		}
	})
	// The instant agent's events came microseconds after the calls they
	// followed; a replay on the real clock waits those out, one timer per
	// event, which would be all this measured. Zero them: each turn's
	// events are then due together, 1 µs after the caller's call.
	path := filepath.Join(dir, "bench", cassette.IndexFile)
	index, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	index = regexp.MustCompile(`"after_ms":[0-9.]+`).ReplaceAll(index, []byte(`"after_ms":0.000`))
	if err := os.WriteFile(path, index, 0o644); err != nil {
		b.Fatal(err)
	}
	b.Run("replay", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			connectAndConverse(b, cassette.New(b, nil, cassette.WithDir(dir), cassette.WithName("bench"), cassette.WithMode(cache.Replay)))
		}
		reportPerCall(b)
	})
}
