package pipecat_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/voicetest-go/voicetest/adapters/internal/adaptertest"
	"github.com/voicetest-go/voicetest/adapters/pipecat"
	"github.com/voicetest-go/voicetest/adapters/pipecat/pipecatpb"
	"github.com/voicetest-go/voicetest/adapters/wire"
	"github.com/voicetest-go/voicetest/internal/peers/peerkit"
	"github.com/voicetest-go/voicetest/pcm"
	"github.com/voicetest-go/voicetest/voicetest"
	"google.golang.org/protobuf/proto"
)

// recorder is a Pipecat bot that only records the messages it reads.
type recorder struct {
	url  string
	mu   sync.Mutex
	msgs [][]byte
	done chan struct{} // closed when the client's connection ends
}

func newRecorder(t *testing.T) *recorder {
	t.Helper()
	rec := &recorder{done: make(chan struct{})}
	srv := peerkit.Start(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer close(rec.done)
		defer ws.CloseNow()
		ws.SetReadLimit(1 << 20)
		for {
			_, data, err := ws.Read(context.Background())
			if err != nil {
				return
			}
			rec.mu.Lock()
			rec.msgs = append(rec.msgs, data)
			rec.mu.Unlock()
		}
	}))
	t.Cleanup(srv.Close)
	rec.url = srv.WSURL("/ws")
	return rec
}

// closeAndCollect closes the adapter's connection, waits for the recorder
// to see it end, and returns every message the recorder read.
func (rec *recorder) closeAndCollect(t *testing.T, conn voicetest.Conn) [][]byte {
	t.Helper()
	if err := conn.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-rec.done:
	case <-time.After(10 * time.Second):
		t.Fatal("the recorder's connection did not end")
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return rec.msgs
}

// utterance is what a test sends in one utterance: chunks of these sizes
// (samples at the session rate) of a signal, then EndUtterance.
type utterance struct {
	sizes []int
	quiet bool // all zeros (otherwise noise and a tone)
}

// signal returns n samples of the utterance's signal.
func (u utterance) signal(rng *rand.Rand, n int) []int16 {
	s := make([]int16, n)
	if u.quiet {
		return s
	}
	for i := range s {
		s[i] = int16(rng.IntN(20001) - 10000)
	}
	return s
}

// modelAudio is the audio, in 20 ms frames at the wire rate, that the
// adapter must send for utterances (the audio at rate, already drawn):
// per utterance, the audio resampled to the wire rate by a fresh resampler
// (flushed at its end), then endSilence samples of silence, in frames of
// 20 ms, the last one padded with silence; nothing for an utterance with
// no audio.
func modelAudio(t *testing.T, rate, wireRate, endSilence int, audio [][][]int16) [][]int16 {
	t.Helper()
	size := wireRate / 50
	var frames [][]int16
	for _, chunks := range audio {
		var s []int16
		if rate == wireRate {
			for _, c := range chunks {
				s = append(s, c...)
			}
		} else {
			r, err := pcm.NewResampler(rate, wireRate)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range chunks {
				s = r.Process(s, c)
			}
			s = r.Flush(s)
		}
		spoke := len(chunks) > 0
		if !spoke && len(s) == 0 {
			continue
		}
		s = append(s, make([]int16, endSilence)...)
		if n := len(s) % size; n > 0 {
			s = append(s, make([]int16, size-n)...)
		}
		for ; len(s) > 0; s = s[size:] {
			frames = append(frames, s[:size])
		}
	}
	return frames
}

// modelFrames is what the Protobuf serializer must send for utterances:
// each frame of modelAudio as proto.Marshal of an AudioRawFrame.
func modelFrames(t *testing.T, rate, wireRate, endSilence int, audio [][][]int16) [][]byte {
	t.Helper()
	var frames [][]byte
	for _, s := range modelAudio(t, rate, wireRate, endSilence, audio) {
		b, err := proto.Marshal(&pipecatpb.Frame{Frame: &pipecatpb.Frame_Audio{Audio: &pipecatpb.AudioRawFrame{
			Audio: wire.AppendPCM16(nil, s), SampleRate: uint32(wireRate), NumChannels: 1}}})
		if err != nil {
			t.Fatal(err)
		}
		frames = append(frames, b)
	}
	return frames
}

// sendRecorded connects a to rec with a session at rate, sends the
// utterances (drawn from rng) and closes, and returns the audio it drew
// and the AudioRawFrames rec read (under Twilio, every message).
func sendRecorded(t *testing.T, a *pipecat.Agent, rec *recorder, rate int, utts []utterance, rng *rand.Rand) ([][][]int16, [][]byte) {
	t.Helper()
	ctx := t.Context()
	conn, err := a.Connect(ctx, adaptertest.Session(t, rate))
	if err != nil {
		t.Fatal(err)
	}
	var audio [][][]int16
	for _, u := range utts {
		var chunks [][]int16
		for _, n := range u.sizes {
			c := u.signal(rng, n)
			chunks = append(chunks, c)
			if err := conn.SendAudio(ctx, pcm.Chunk{Rate: rate, Samples: c}); err != nil {
				t.Fatal(err)
			}
		}
		if err := conn.EndUtterance(ctx); err != nil {
			t.Fatal(err)
		}
		audio = append(audio, chunks)
	}
	msgs := rec.closeAndCollect(t, conn)
	if a.Serializer == pipecat.Twilio {
		return audio, msgs
	}
	var frames [][]byte
	for _, m := range msgs {
		if len(m) > 0 && m[0] == 0x12 { // Frame.audio
			frames = append(frames, m)
		}
	}
	return audio, frames
}

// TestProtobufAudioOnTheWire wants the AudioRawFrames the adapter sends
// under the Protobuf serializer to be exactly modelFrames' (the frames
// Pipecat reads: 20 ms each, the trailing silence in whole frames), for
// utterances of speech and of silence in chunks of random sizes, at
// session rates that are and are not the wire rate, with EndSilence of
// the default, none, and lengths that are and are not whole frames.
func TestProtobufAudioOnTheWire(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 2))
	for _, tc := range []struct {
		rate, wireRate int
		endSilence     time.Duration
	}{
		{24000, 16000, 0},
		{24000, 16000, -1},
		{24000, 16000, 1010 * time.Millisecond},
		{24000, 16000, 5 * time.Millisecond},
		{16000, 16000, 0},
		{16000, 16000, 33 * time.Millisecond},
		{48000, 8000, 250 * time.Millisecond},
	} {
		t.Run(fmt.Sprintf("%d-%d-%v", tc.rate, tc.wireRate, tc.endSilence), func(t *testing.T) {
			rec := newRecorder(t)
			a := pipecat.New(rec.url, pipecat.Protobuf)
			a.InputRate, a.EndSilence = tc.wireRate, tc.endSilence
			var utts []utterance
			for i := range 6 {
				var u utterance
				u.quiet = i%3 == 2
				for range rng.IntN(8) {
					u.sizes = append(u.sizes, rng.IntN(tc.rate/25)+1)
				}
				utts = append(utts, u)
			}
			utts = append(utts, utterance{}) // nothing said: nothing sent
			audio, got := sendRecorded(t, a, rec, tc.rate, utts, rng)
			endSilence := 0
			switch {
			case tc.endSilence == 0:
				endSilence = pcm.SamplesFor(tc.wireRate, pipecat.DefaultEndSilence)
			case tc.endSilence > 0:
				endSilence = pcm.SamplesFor(tc.wireRate, tc.endSilence)
			}
			want := modelFrames(t, tc.rate, tc.wireRate, endSilence, audio)
			if len(got) != len(want) {
				t.Fatalf("%d AudioRawFrames on the wire, want %d", len(got), len(want))
			}
			for i := range got {
				if !bytes.Equal(got[i], want[i]) {
					t.Fatalf("AudioRawFrame %d of %d differs from the model's:\n%x\nwant\n%x", i, len(got), got[i][:min(len(got[i]), 48)], want[i][:min(len(want[i]), 48)])
				}
			}
		})
	}
}

// benchTurnWire is the SHA-256 of the messages the benchmark turn
// (BenchmarkPipecatTurnMinimalPeer: adaptertest.BenchTurnFrames at 24 kHz,
// then EndUtterance with the default second of silence) puts on the wire,
// each preceded by its length as four bytes, as recorded at main 4b69ae1
// before the per-turn work of pipecat2.
const benchTurnWire = "4f608cae34fcc570809aa56cab95c5f6d5af276c83bc8bc6da893158af688067"

// TestBenchTurnOnTheWire pins the bytes of the benchmark's turn, twice in
// a row, to those main sent before this session's changes.
func TestBenchTurnOnTheWire(t *testing.T) {
	rec := newRecorder(t)
	a := pipecat.New(rec.url, pipecat.Protobuf)
	conn, err := a.Connect(t.Context(), adaptertest.Session(t, 24000))
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := adaptertest.SendUtterance(t.Context(), conn, adaptertest.BenchTurnFrames(24000)); err != nil {
			t.Fatal(err)
		}
	}
	msgs := rec.closeAndCollect(t, conn)
	h := sha256.New()
	for _, m := range msgs {
		fmt.Fprintf(h, "%04d", len(m))
		h.Write(m)
	}
	if len(msgs) != 160 {
		t.Errorf("%d messages for two turns, want 160 (80 a turn)", len(msgs))
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != benchTurnWire {
		t.Errorf("the turn's bytes hash to %s, want %s", got, benchTurnWire)
	}
}

// TestTwilioAudioOnTheWire is TestProtobufAudioOnTheWire under the Twilio
// serializer: the media messages carry modelAudio's frames at 8 kHz in
// µ-law, numbered one after the other (sequenceNumber after connected and
// start, chunk, timestamp 20 ms apart), with an utterance_end mark after
// each utterance that sent any.
func TestTwilioAudioOnTheWire(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 8))
	for _, endSilence := range []time.Duration{0, -1, 1010 * time.Millisecond, 5 * time.Millisecond} {
		t.Run(endSilence.String(), func(t *testing.T) {
			rec := newRecorder(t)
			a := pipecat.New(rec.url, pipecat.Twilio)
			a.EndSilence = endSilence
			var utts []utterance
			for i := range 5 {
				u := utterance{quiet: i%3 == 2}
				for range 1 + rng.IntN(6) {
					u.sizes = append(u.sizes, rng.IntN(960)+1)
				}
				utts = append(utts, u)
			}
			audio, msgs := sendRecorded(t, a, rec, 24000, utts, rng)
			n := 0
			switch {
			case endSilence == 0:
				n = pcm.SamplesFor(8000, pipecat.DefaultEndSilence)
			case endSilence > 0:
				n = pcm.SamplesFor(8000, endSilence)
			}
			var want []string
			for _, chunks := range audio { // one utterance at a time, then its mark
				for _, f := range modelAudio(t, 24000, 8000, n, [][][]int16{chunks}) {
					want = append(want, base64.StdEncoding.EncodeToString(pcm.EncodeMulaw(nil, f)))
				}
				want = append(want, "mark")
			}
			var got []string
			seq, chunk := 1, 0           // start is sequenceNumber 1
			for _, m := range msgs[2:] { // after connected and start
				var v struct {
					Event, SequenceNumber string
					Media                 struct{ Chunk, Timestamp, Payload string }
					Mark                  struct{ Name string }
				}
				if err := json.Unmarshal(m, &v); err != nil {
					t.Fatal(err)
				}
				if v.SequenceNumber != strconv.Itoa(seq+1) {
					t.Fatalf("sequenceNumber %q after %d", v.SequenceNumber, seq)
				}
				seq++
				switch v.Event {
				case "media":
					chunk++
					if v.Media.Chunk != strconv.Itoa(chunk) || v.Media.Timestamp != strconv.Itoa(20*(chunk-1)) {
						t.Fatalf("media chunk %q at %q, want %d at %d", v.Media.Chunk, v.Media.Timestamp, chunk, 20*(chunk-1))
					}
					got = append(got, v.Media.Payload)
				case "mark":
					if v.Mark.Name != "utterance_end" {
						t.Fatalf("mark %q", v.Mark.Name)
					}
					got = append(got, "mark")
				case "stop":
				default:
					t.Fatalf("event %q", v.Event)
				}
			}
			if len(got) != len(want) {
				t.Fatalf("%d media messages and marks, want %d", len(got), len(want))
			}
			for i := range got {
				if got[i] != want[i] {
					t.Fatalf("message %d of %d: %.40s…, want %.40s…", i, len(got), got[i], want[i])
				}
			}
		})
	}
}
