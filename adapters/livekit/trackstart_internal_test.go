package livekit

import (
	"context"
	"testing"
	"time"

	"github.com/livekit/media-sdk"
	"github.com/livekit/media-sdk/opus"
	protologger "github.com/livekit/protocol/logger"
	"github.com/voicetest-go/voicetest/internal/peers/lkserver"
	"github.com/voicetest-go/voicetest/pcm"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/scrub"
	"github.com/voicetest-go/voicetest/voicetest/speech"
)

// The agent's side of these tests is what the SDKs' PCMLocalTrack does:
// 10 ms frames at the source rate, resampled to 48 kHz, Opus-encoded
// (libopus, VoIP); the caller's side what PCMRemoteTrack does: a new
// decoder for the track, its frames into the adapter's agentAudio.
const (
	agentRate  = 24000 // the Go agent double's and LiveKit Agents' TTS rate
	frameDur   = 10 * time.Millisecond
	idleFrames = 300 // 3 s of a track published and silent
)

// packetSink collects what the encoder makes.
type packetSink struct{ packets [][]byte }

func (s *packetSink) WriteSample(p opus.Sample) error {
	s.packets = append(s.packets, append([]byte(nil), p...))
	return nil
}
func (s *packetSink) SampleRate() int { return wireRate }
func (s *packetSink) Close() error    { return nil }
func (s *packetSink) String() string  { return "packets" }

// encodeTrack returns the Opus packets of a track that carries audio (at
// agentRate), as the SDK's PCMLocalTrack sends them: frames shorter than
// 10 ms are padded with zeros.
func encodeTrack(t *testing.T, audio []int16) [][]byte {
	t.Helper()
	sink := &packetSink{}
	enc, err := opus.Encode(sink, 1, protologger.GetDiscardLogger())
	if err != nil {
		t.Fatal(err)
	}
	w := media.ResampleWriter(enc, agentRate)
	n := pcm.SamplesFor(agentRate, frameDur)
	for i := 0; i < len(audio); i += n {
		f := make(media.PCM16Sample, n)
		copy(f, audio[i:])
		if err := w.WriteSample(f); err != nil {
			t.Fatal(err)
		}
	}
	return sink.packets
}

// trackWriter is agentAudio as PCMRemoteTrack holds it.
type trackWriter struct{ *agentAudio }

func (w trackWriter) SampleRate() int { return wireRate }
func (w trackWriter) String() string  { return "agentAudio" }

// receive decodes packets with a new decoder, as the caller does when it
// subscribes to the agent's track with packets[0] the first to reach it,
// into a new conn, and returns the audio the conn queued for the runner
// (at agentRate) and the largest sample the decoder gave in its first
// frame.
func receive(t *testing.T, packets [][]byte) (audio time.Duration, firstPeak int) {
	t.Helper()
	st := &settings{Agent: Agent{MaxQueueBytes: DefaultMaxQueueBytes, MaxFrameBytes: DefaultMaxFrameBytes}}
	c, err := newConn(st, voicetest.Session{Name: t.Name(), Rate: agentRate, Logf: t.Logf}, scrub.New())
	if err != nil {
		t.Fatal(err)
	}
	first := true
	dec, err := opus.Decode(peekWriter{trackWriter{&agentAudio{c: c}}, func(s media.PCM16Sample) {
		if first {
			first = false
			for _, v := range s {
				firstPeak = max(firstPeak, int(v), -int(v))
			}
		}
	}}, 1, protologger.GetDiscardLogger())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range packets {
		if err := dec.WriteSample(p); err != nil {
			t.Fatal(err)
		}
	}
	c.mu.Lock()
	c.recv.flushLocked()
	c.mu.Unlock()
	c.q.finish(context.Canceled)
	for {
		ev, err := c.q.take(t.Context())
		if err != nil {
			break
		}
		if ev.Kind == voicetest.AgentAudio {
			audio += ev.Audio.Duration()
		}
	}
	return audio, firstPeak
}

// peekWriter shows each frame to peek before passing it on.
type peekWriter struct {
	trackWriter
	peek func(media.PCM16Sample)
}

func (w peekWriter) WriteSample(s media.PCM16Sample) error {
	w.peek(s)
	return w.trackWriter.WriteSample(s)
}

// A caller that subscribes to an agent's track while the agent is silent
// (it publishes its track, and sends silence, before it speaks) decodes
// the stream from wherever it joins it: its new decoder's first frames
// are a decaying noise louder than settled silence. That is not the
// agent speaking, wherever the caller joins (issue 21: the agent's
// "reply" came before the user's line, a mute agent seemed to answer).
func TestTrackStartIsNotSpeech(t *testing.T) {
	packets := encodeTrack(t, make([]int16, idleFrames*pcm.SamplesFor(agentRate, frameDur)))
	if audio, peak := receive(t, packets); audio != 0 {
		t.Fatalf("the whole silent track, decoded from its first packet (first frame's peak %d), gave %v of agent audio", peak, audio)
	}
	worst, loud := 0, 0
	for k := 1; k+50 <= len(packets); k += 2 {
		audio, peak := receive(t, packets[k:k+50])
		worst = max(worst, peak)
		if peak > silencePeak {
			loud++
		}
		if audio != 0 {
			t.Errorf("joining the silent track at packet %d (first frame's peak %d) gave %v of agent audio", k, peak, audio)
		}
	}
	t.Logf("joining a silent track: %d of %d starts decoded a first frame louder than silencePeak (%d); the loudest peaked at %d",
		loud, (len(packets)-50)/2, silencePeak, worst)
	if loud == 0 {
		t.Errorf("no start decoded a first frame louder than settled silence: this test no longer shows the decoder's start (worst peak %d)", worst)
	}
	if worst > warmUpPeak/2 {
		t.Errorf("a decoder's start peaked at %d, within a factor 2 of warmUpPeak (%d): measure again and raise it", worst, warmUpPeak)
	}
}

// Quiet real speech (flite, scaled to peak at -40 dBFS) is still the
// agent speaking, whether the caller joined the track before it or at
// its first packet: the decoder's warm-up costs at most 40 ms of it.
func TestQuietSpeechIsSpeech(t *testing.T) {
	if err := speech.Installed("flite"); err != nil {
		lkserver.Skip(t, err.Error())
	}
	line, err := speech.Flite().Synthesize(t.Context(), voicetest.SpeechRequest{Text: "Your table is ready.", Rate: agentRate})
	if err != nil {
		t.Fatal(err)
	}
	const peak = 328 // -40 dBFS
	loudest := 0
	for _, v := range line.Samples {
		loudest = max(loudest, int(v), -int(v))
	}
	quiet := make([]int16, len(line.Samples))
	for i, v := range line.Samples {
		quiet[i] = int16(int(v) * peak / loudest)
	}
	lead := 50 // frames of silence before the speech
	track := append(make([]int16, lead*pcm.SamplesFor(agentRate, frameDur)), quiet...)
	track = append(track, make([]int16, agentRate/2)...)
	packets := encodeTrack(t, track)

	settled, _ := receive(t, packets)
	t.Logf("%v of quiet speech; a decoder that saw the whole track took %v of it for the agent's audio", line.Duration(), settled)
	if settled < line.Duration()/2 {
		t.Fatalf("a settled decoder took only %v of %v of quiet speech for the agent's audio", settled, line.Duration())
	}
	const lost = 40 * time.Millisecond
	for _, k := range []int{lead - 20, lead - 2, lead} {
		audio, _ := receive(t, packets[k:])
		if audio < settled-lost {
			t.Errorf("joining %d frames before the speech: %v of agent audio, want at least %v (what a settled decoder took, less %v)", lead-k, audio, settled-lost, lost)
		}
	}
}
