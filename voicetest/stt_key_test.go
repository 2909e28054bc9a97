package voicetest_test

import (
	"context"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/voicetest-go/voicetest/pcm"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/cache"
	"github.com/voicetest-go/voicetest/voicetest/fixtures"
)

// burstyAgent is a test double of a remote agent that streams its speech
// in bursts: after each utterance of the user it says the same reply
// (WordTones of its text), cut into 20 ms frames sent a few at a time with
// random pauses between the bursts, after a random number of silent frames
// (an agent that keeps the line busy while it thinks). The randomness is
// seeded, so each seed is one repeatable way for the same audio to arrive.
type burstyAgent struct {
	seed    uint64
	replies []string
}

func (a *burstyAgent) VirtualTime() bool { return true }

func (a *burstyAgent) Connect(ctx context.Context, s voicetest.Session) (voicetest.Conn, error) {
	c := &burstyConn{rate: s.Rate, events: make(chan voicetest.AgentEvent, 4096), ends: make(chan struct{}, 16), done: make(chan struct{})}
	rng := rand.New(rand.NewPCG(a.seed, 7))
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		for _, text := range a.replies {
			select {
			case <-c.ends:
			case <-c.done:
				return
			}
			frames := slices.Concat(
				pcm.Silence(s.Rate, time.Duration(rng.IntN(8))*voicetest.FrameDuration).Frames(voicetest.FrameDuration),
				fixtures.WordTones(text, s.Rate).Frames(voicetest.FrameDuration),
				pcm.Silence(s.Rate, time.Duration(rng.IntN(8))*voicetest.FrameDuration).Frames(voicetest.FrameDuration),
			)
			time.Sleep(200 * time.Millisecond)
			for len(frames) > 0 {
				n := min(1+rng.IntN(8), len(frames))
				for _, f := range frames[:n] {
					c.events <- voicetest.AgentEvent{Kind: voicetest.AgentAudio, Audio: f}
				}
				frames = frames[n:]
				time.Sleep(time.Duration(rng.IntN(150)) * time.Millisecond)
			}
		}
	}()
	return c, nil
}

type burstyConn struct {
	rate   int
	events chan voicetest.AgentEvent
	ends   chan struct{}
	done   chan struct{}
	once   sync.Once
	wg     sync.WaitGroup
}

func (c *burstyConn) Capabilities() voicetest.Capabilities {
	return voicetest.Capabilities{Adapter: "bursty", Audio: true, VirtualTime: true}
}
func (c *burstyConn) SendAudio(context.Context, pcm.Chunk) error { return nil }
func (c *burstyConn) EndUtterance(context.Context) error {
	select {
	case c.ends <- struct{}{}:
	default:
	}
	return nil
}
func (c *burstyConn) SendText(context.Context, string) error { return nil }
func (c *burstyConn) SendDTMF(context.Context, string) error { return nil }
func (c *burstyConn) Interrupt(context.Context) error        { return nil }
func (c *burstyConn) Recv(ctx context.Context) (voicetest.AgentEvent, error) {
	select {
	case ev := <-c.events:
		return ev, nil
	case <-ctx.Done():
		return voicetest.AgentEvent{}, ctx.Err()
	case <-c.done:
		return voicetest.AgentEvent{}, &voicetest.TransportClosedError{Adapter: "bursty"}
	}
}
func (c *burstyConn) Close() error {
	c.once.Do(func() { close(c.done) })
	c.wg.Wait()
	return nil
}

// keySTT is a test double of an STT engine behind the cache: it records
// the cache key of the audio it is asked to transcribe.
type keySTT struct {
	mu   sync.Mutex
	keys []string
}

func (k *keySTT) Transcribe(ctx context.Context, req voicetest.TranscriptionRequest) (voicetest.Transcription, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.keys = append(k.keys, cache.AudioDigest(req.Audio.Rate, req.Audio.Bytes()))
	return voicetest.Transcription{Text: "reply"}, nil
}

// TestAgentSTTKeyIgnoresArrivalTiming: the audio that keys the
// transcription of an agent turn is what the agent sent, not where it
// landed on the clock. The same replies, streamed in bursts with different
// pauses and different silent padding (one seed each), give the same STT
// keys turn by turn, so a recorded cache replays them all.
func TestAgentSTTKeyIgnoresArrivalTiming(t *testing.T) {
	var first []string
	for seed := range uint64(6) {
		stt := &keySTT{}
		_, err := runVirtual(t, voicetest.Config{
			Agent:     &burstyAgent{seed: seed, replies: []string{"Welcome to the bistro", "Seven it is"}},
			UserVoice: &toneTTS{}, AgentSTT: stt, Rate: 16000,
			Script: []voicetest.Step{
				voicetest.UserSays("hello"), voicetest.AgentTurn(),
				voicetest.UserSays("at seven"), voicetest.AgentTurn(),
			},
		})
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if len(stt.keys) != 2 {
			t.Fatalf("seed %d: %d transcriptions, want one per agent turn (2)", seed, len(stt.keys))
		}
		if seed == 0 {
			first = stt.keys
			continue
		}
		for i := range first {
			if stt.keys[i] != first[i] {
				t.Errorf("seed %d: agent turn %d keys its transcription by %s, seed 0 by %s: the key depends on when the audio arrived", seed, i+1, stt.keys[i], first[i])
			}
		}
	}
}
