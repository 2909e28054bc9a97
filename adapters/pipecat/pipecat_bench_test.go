package pipecat_test

import (
	"bytes"
	"context"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/voicetest-go/voicetest/adapters/internal/adaptertest"
	"github.com/voicetest-go/voicetest/adapters/pipecat"
	"github.com/voicetest-go/voicetest/adapters/pipecat/pipecatpb"
	"github.com/voicetest-go/voicetest/internal/peers/peerkit"
	"github.com/voicetest-go/voicetest/voicetest"
	"google.golang.org/protobuf/proto"
)

// minimalBot is a Pipecat bot for benchmarks that does next to no work: it
// discards what it reads and, for every n sent on blast, sends n
// AudioRawFrames of 20 ms at 24 kHz as fast as it can.
func minimalBot(b *testing.B) (url string, blast chan int) {
	b.Helper()
	blast = make(chan int, 1)
	audio, err := proto.Marshal(&pipecatpb.Frame{Frame: &pipecatpb.Frame_Audio{Audio: &pipecatpb.AudioRawFrame{Audio: make([]byte, 960), SampleRate: 24000, NumChannels: 1}}})
	if err != nil {
		b.Fatal(err)
	}
	srv := adaptertest.BenchServer(b, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w, _ = adaptertest.BigReads(w)
		ws, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer ws.CloseNow()
		ctx, cancel := context.WithCancel(r.Context())
		defer cancel()
		go func() {
			defer cancel() // the client left: stop blasting
			for {
				if _, _, err := ws.Read(ctx); err != nil {
					return
				}
			}
		}()
		for {
			select {
			case n := <-blast:
				for range n {
					if ws.Write(ctx, websocket.MessageBinary, audio) != nil {
						return
					}
				}
			case <-ctx.Done():
				return
			}
		}
	}))
	return srv.WSURL("/ws"), blast
}

// BenchmarkPipecatSendFrame measures SendAudio of one 20 ms frame at
// 24 kHz: resampling to the wire rate, then a protobuf AudioRawFrame
// (16 kHz PCM16) or a Twilio media message (8 kHz µ-law in base64 JSON),
// and the loopback write. Bytes are the PCM16 input.
func BenchmarkPipecatSendFrame(b *testing.B) {
	for _, ser := range []pipecat.Serializer{pipecat.Protobuf, pipecat.Twilio} {
		b.Run(ser.String(), func(b *testing.B) {
			url, _ := minimalBot(b)
			conn := adaptertest.BenchConn(b, pipecat.New(url, ser), 24000)
			adaptertest.BenchSendFrame(b, conn, adaptertest.Tone(24000, 440, 20*time.Millisecond, 9000))
		})
	}
}

// BenchmarkPipecatRecvAudio measures receiving one protobuf AudioRawFrame
// of 20 ms at 24 kHz: the loopback read, protobuf decoding, PCM16
// decoding and the queue. Bytes are the frame's audio.
func BenchmarkPipecatRecvAudio(b *testing.B) {
	url, blast := minimalBot(b)
	conn := adaptertest.BenchConn(b, pipecat.New(url, pipecat.Protobuf), 24000)
	b.SetBytes(960)
	b.ReportAllocs()
	b.ResetTimer()
	blast <- b.N
	for range b.N {
		ev, err := conn.Recv(b.Context())
		if err != nil || ev.Kind != voicetest.AgentAudio || ev.Audio.Len() != 480 {
			b.Fatalf("Recv: %v %v", ev.Kind, err)
		}
	}
}

// minimalRTVIBot is a Pipecat bot for the per-turn benchmark that does next
// to no work: it counts the AudioRawFrames it reads (without decoding
// them) and, after every turnFrames of them (the user's speech and the
// silence EndUtterance sends, which a real bot's VAD waits for), answers
// at once as Pipecat's RTVI observer and transport do: MessageFrames
// holding bot-started-speaking, bot-tts-text and bot-stopped-speaking
// around one 20 ms AudioRawFrame at 24 kHz (frames.proto; RTVI 2.1.0), in
// one write. It answers client-ready with bot-ready. It speaks WebSocket
// itself (rawWS), so that its own reading costs next to nothing; with
// coderPeer, through coder/websocket's server side as the other protocols'
// minimal peers do (adaptertest.BigReads and ReadLoop), which costs it
// about a microsecond a message.
func minimalRTVIBot(tb testing.TB, turnFrames int, coderPeer bool) (url string, got *atomic.Int64) {
	tb.Helper()
	got = new(atomic.Int64)
	msg := func(f *pipecatpb.Frame) []byte {
		m, err := proto.Marshal(f)
		if err != nil {
			tb.Fatal(err)
		}
		return m
	}
	rtvi := func(data string) []byte {
		return msg(&pipecatpb.Frame{Frame: &pipecatpb.Frame_Message{Message: &pipecatpb.MessageFrame{Data: data}}})
	}
	reply := [][]byte{
		rtvi(`{"label":"rtvi-ai","type":"bot-started-speaking"}`),
		rtvi(`{"label":"rtvi-ai","type":"bot-tts-text","data":{"text":"Okay."}}`),
		msg(&pipecatpb.Frame{Frame: &pipecatpb.Frame_Audio{Audio: &pipecatpb.AudioRawFrame{Audio: make([]byte, 960), SampleRate: 24000, NumChannels: 1}}}),
		rtvi(`{"label":"rtvi-ai","type":"bot-stopped-speaking"}`),
	}
	ready := rtvi(`{"label":"rtvi-ai","type":"bot-ready","id":"1","data":{"version":"2.1.0"}}`)
	// stop ends a call the client has not closed when the test ends; calls
	// counts the calls in progress, and failed what went wrong in them.
	stop, cancel := context.WithCancel(context.Background())
	var calls sync.WaitGroup
	failed := make(chan error, 16)
	fail := func(err error) {
		select {
		case failed <- err:
		default: // enough to fail the test already
		}
	}
	// read is the bot's side of a call: it takes every message the client
	// sends, and answers through send (the messages in one write).
	read := func(send func(msgs ...[]byte)) func(op byte, data []byte) {
		n := 0
		return func(op byte, data []byte) {
			// An AudioRawFrame (field 2 of Frame) starts with its tag, 0x12.
			if op != opBinary || !bytes.HasPrefix(data, []byte{0x12}) {
				if bytes.Contains(data, []byte(`"client-ready"`)) {
					send(ready)
				}
				return
			}
			got.Add(1)
			if n++; n%turnFrames == 0 {
				send(reply...)
			}
		}
	}
	srv := peerkit.Start(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		defer calls.Done()
		adaptertest.LabelPeer(r)
		if coderPeer {
			w, burst := adaptertest.BigReads(w)
			ws, err := websocket.Accept(w, r, nil)
			if err != nil {
				fail(err)
				return
			}
			defer ws.CloseNow()
			defer context.AfterFunc(stop, func() { ws.CloseNow() })()
			f := read(func(msgs ...[]byte) {
				burst.Begin()
				for _, m := range msgs {
					ws.Write(context.Background(), websocket.MessageBinary, m) // no timer per write
				}
				burst.End()
			})
			adaptertest.ReadLoop(ws, func(data []byte) { f(opBinary, data) })
			return
		}
		ws, err := acceptRaw(w, r)
		if err != nil {
			fail(err)
			return
		}
		defer ws.Close()
		defer context.AfterFunc(stop, func() { ws.Close() })()
		isAudio := func(first byte) bool { return first == 0x12 }
		err = ws.ReadLoop(isAudio, read(func(msgs ...[]byte) {
			for _, m := range msgs {
				ws.Append(opBinary, m)
			}
			ws.Flush()
		}))
		if err != nil && stop.Err() == nil {
			fail(err) // not the closing handshake
		}
	}))
	tb.Cleanup(func() { // after srv.Close: no call starts any more
		cancel()
		calls.Wait()
		close(failed)
		for err := range failed {
			tb.Errorf("minimal bot: %v", err)
		}
	})
	tb.Cleanup(srv.Close)
	return srv.WSURL("/ws"), got
}

// TestMinimalRTVIBot runs the benchmark's turn against its bot a few times,
// with keepalive pings every few milliseconds, and closes: the bot must
// complete the handshake, count every frame, answer each turn (its
// AgentTurnEnd), the pings (or the connection dies and the next turn
// fails) and the closing handshake (its loop must end at the client's
// close frame, not at the connection's end).
func TestMinimalRTVIBot(t *testing.T) {
	for _, coderPeer := range []bool{false, true} {
		t.Run(map[bool]string{false: "rawWS", true: "coder"}[coderPeer], func(t *testing.T) { testMinimalRTVIBot(t, coderPeer) })
	}
}

func testMinimalRTVIBot(t *testing.T, coderPeer bool) {
	const turnFrames = 80
	url, got := minimalRTVIBot(t, turnFrames, coderPeer)
	a := pipecat.New(url, pipecat.Protobuf)
	a.RTVI = true
	a.PingInterval, a.PongTimeout = 2*time.Millisecond, 100*time.Millisecond
	conn, err := a.Connect(t.Context(), adaptertest.Session(t, 24000))
	if err != nil {
		t.Fatal(err)
	}
	frames := adaptertest.BenchTurnFrames(24000)
	for i := range 5 {
		if err := adaptertest.SendUtterance(t.Context(), conn, frames); err != nil {
			t.Fatal(err)
		}
		r := adaptertest.RecvUntil(t, t.Context(), conn, adaptertest.IsKind(voicetest.AgentTurnEnd))
		if _, deltas := adaptertest.TurnText(r.Events, voicetest.AgentTranscript); deltas != "Okay." || r.Audio == 0 {
			t.Errorf("turn %d: text %q, %d audio events", i, deltas, r.Audio)
		}
		time.Sleep(40 * time.Millisecond) // pings, each to be answered within 100 ms
	}
	if err := conn.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if got.Load() != 5*turnFrames {
		t.Errorf("the bot counted %d audio frames in 5 turns, want %d", got.Load(), 5*turnFrames)
	}
}

// BenchmarkPipecatTurnMinimalPeer measures the harness's overhead per turn
// on loopback under the Protobuf serializer with RTVI: 600 ms of user
// audio at 24 kHz (30 frames, resampled to 16 kHz AudioRawFrames), then
// EndUtterance's second of silence (50 more frames, as a bot's VAD needs
// it), and the bot's reply (bot-started-speaking, bot-tts-text, 20 ms of
// audio, bot-stopped-speaking) received to its AgentTurnEnd, against a bot
// that answers at once and does no work of its own (its WebSocket is
// rawWS). ns/op is wall time; cpu-ns/op is the CPU time of the whole
// process (adapter and bot) per turn.
func BenchmarkPipecatTurnMinimalPeer(b *testing.B) { benchTurn(b, false) }

// BenchmarkPipecatTurnCoderPeer is BenchmarkPipecatTurnMinimalPeer against
// the same bot reading through coder/websocket, as the other protocols'
// minimal peers do: the figure to compare with theirs.
func BenchmarkPipecatTurnCoderPeer(b *testing.B) { benchTurn(b, true) }

func benchTurn(b *testing.B, coderPeer bool) {
	const turnFrames = 80 // (600 ms + 1 s) / 20 ms
	url, got := minimalRTVIBot(b, turnFrames, coderPeer)
	a := pipecat.New(url, pipecat.Protobuf)
	a.RTVI = true
	conn := adaptertest.BenchConn(b, a, 24000)
	frames := adaptertest.BenchTurnFrames(24000)
	adaptertest.BenchTurns(b, conn, func(ctx context.Context) error { return adaptertest.SendUtterance(ctx, conn, frames) },
		adaptertest.IsKind(voicetest.AgentTurnEnd))
	if want := int64(b.N) * turnFrames; got.Load() != want {
		b.Fatalf("the bot read %d audio frames in %d turns, want %d: turns and replies are out of step", got.Load(), b.N, want)
	}
}
