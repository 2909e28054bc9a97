package twilio_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/voicetest-go/voicetest/adapters/internal/adaptertest"
	"github.com/voicetest-go/voicetest/adapters/twilio"
	"github.com/voicetest-go/voicetest/internal/peers/twiliobot"
	"github.com/voicetest-go/voicetest/voicetest"
)

// benchPeer is a minimal Media Streams bot for benchmarks: it reads and
// discards everything, and on request sends n media frames of 20 ms as
// fast as it can, so that the adapter's own costs dominate.
type benchPeer struct {
	url   string
	blast chan int
	// turnFrames, when positive, makes the peer answer every turnFrames
	// user media frames with one 20 ms media frame and a mark, at once
	// and without parsing JSON: an agent that costs next to nothing.
	turnFrames int
}

func newBenchPeer(b *testing.B, turnFrames int) *benchPeer {
	b.Helper()
	p := &benchPeer{blast: make(chan int, 1), turnFrames: turnFrames}
	frame := base64.StdEncoding.EncodeToString(make([]byte, 160))
	base := adaptertest.BenchServer(b, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		adaptertest.LabelPeer(r)
		ws, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer ws.CloseNow()
		ctx, cancel := context.WithCancel(r.Context())
		defer cancel()
		var sid string
		for sid == "" {
			_, data, err := ws.Read(ctx)
			if err != nil {
				return
			}
			var m struct{ StreamSid string }
			json.Unmarshal(data, &m)
			sid = m.StreamSid
		}
		msg := []byte(`{"event":"media","streamSid":"` + sid + `","media":{"payload":"` + frame + `"}}`)
		mark := []byte(`{"event":"mark","streamSid":"` + sid + `","mark":{"name":"r"}}`)
		go func() {
			defer cancel() // the client left: stop blasting
			media, n := []byte(`"event":"media"`), 0
			adaptertest.ReadLoop(ws, func(data []byte) {
				if p.turnFrames > 0 && bytes.Contains(data, media) {
					if n++; n%p.turnFrames == 0 {
						ws.Write(ctx, websocket.MessageText, msg)
						ws.Write(ctx, websocket.MessageText, mark)
					}
				}
			})
		}()
		adaptertest.BlastLoop(ctx, ws, p.blast, msg)
	}))
	p.url = base.WSURL("")
	return p
}

// BenchmarkTwilioSendFrame measures SendAudio of one 20 ms frame at 24 kHz:
// resampling to 8 kHz, µ-law encoding, base64, the media message and the
// loopback write. Bytes are the PCM16 input.
func BenchmarkTwilioSendFrame(b *testing.B) {
	p := newBenchPeer(b, 0)
	a := twilio.New(p.url)
	a.Pacing = twilio.Fast
	adaptertest.BenchSendFrame(b, adaptertest.BenchConn(b, a, 24000), adaptertest.Tone(24000, 440, 20*time.Millisecond, 9000))
}

// BenchmarkTwilioRecvFrame measures receiving one 20 ms media frame from
// the bot: the loopback read, JSON and base64 decoding, µ-law decoding,
// resampling to 24 kHz and the event queue.
func BenchmarkTwilioRecvFrame(b *testing.B) {
	p := newBenchPeer(b, 0)
	a := twilio.New(p.url)
	a.Pacing = twilio.Fast
	ctx := context.Background()
	conn, err := a.Connect(ctx, adaptertest.BenchSession(24000))
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	b.SetBytes(160)
	b.ReportAllocs()
	b.ResetTimer()
	p.blast <- b.N
	for i := 0; i < b.N; {
		ev, err := conn.Recv(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if ev.Kind != voicetest.AgentAudio || ev.Audio.IsEmpty() {
			b.Fatalf("event %d: %+v, want agent audio", i, ev)
		}
		i++ // every 20 ms frame yields one event (the resampler holds back only 3 ms)
	}
}

// BenchmarkTwilioTurn measures one whole conversational turn on loopback
// with Fast pacing against internal/peers/twiliobot: 300 ms of user speech and
// 300 ms of silence (30 media frames), the bot's end-of-speech detection,
// its 20 ms reply and mark, the mark echo, and receiving all of it. The bot
// runs in the same process, so this is an upper bound of the harness's
// overhead per turn.
func BenchmarkTwilioTurn(b *testing.B) {
	bot := twiliobot.New(b, twiliobot.Config{ReplyDuration: 20 * time.Millisecond})
	a := twilio.New(bot.URL)
	a.Pacing = twilio.Fast
	conn := adaptertest.BenchConn(b, a, 24000)
	frames := adaptertest.BenchTurnFrames(24000)
	turn, want := 0, ""
	adaptertest.BenchTurns(b, conn, func(ctx context.Context) error {
		turn++
		want = `{"name":"reply-` + strconv.Itoa(turn) + `"}`
		return adaptertest.SendUtterance(ctx, conn, frames)
	}, func(ev voicetest.AgentEvent) bool {
		return ev.Kind == voicetest.AgentData && string(ev.Data) == want
	})
}

// BenchmarkTwilioTurnMinimalPeer measures the harness's overhead per turn
// on loopback with Fast pacing: 300 ms of user speech and 300 ms of silence
// (30 media frames at 24 kHz) sent, then the agent's 20 ms reply and mark
// received (and the mark echoed), against a peer that answers at once and
// does no work of its own. ns/op is wall time (it includes the loopback
// round trip and goroutine wake-ups, and so the machine's load); cpu-ns/op
// is the CPU time of the whole process (adapter and peer) per turn.
func BenchmarkTwilioTurnMinimalPeer(b *testing.B) {
	const turnFrames = 30
	p := newBenchPeer(b, turnFrames)
	a := twilio.New(p.url)
	a.Pacing = twilio.Fast
	conn := adaptertest.BenchConn(b, a, 24000)
	frames := adaptertest.BenchTurnFrames(24000)
	adaptertest.BenchTurns(b, conn, func(ctx context.Context) error { return adaptertest.SendUtterance(ctx, conn, frames) },
		adaptertest.IsKind(voicetest.AgentData))
}
