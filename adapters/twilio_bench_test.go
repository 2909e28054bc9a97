package adapters_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/voicetest-go/voicetest/adapters"
	"github.com/voicetest-go/voicetest/internal/twiliobot"
	"github.com/voicetest-go/voicetest/pcm"
	"github.com/voicetest-go/voicetest/voicetest"
)

// benchPeer is a minimal Media Streams bot for benchmarks: it reads and
// discards everything, and on request sends n media frames of 20 ms as
// fast as it can, so that the adapter's own costs dominate.
type benchPeer struct {
	url   string
	blast chan int
}

func newBenchPeer(b *testing.B) *benchPeer {
	b.Helper()
	p := &benchPeer{blast: make(chan int, 1)}
	frame := base64.StdEncoding.EncodeToString(make([]byte, 160))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer ws.CloseNow()
		ctx := r.Context()
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
		go func() {
			for {
				if _, _, err := ws.Read(ctx); err != nil {
					return
				}
			}
		}()
		msg := []byte(`{"event":"media","streamSid":"` + sid + `","media":{"payload":"` + frame + `"}}`)
		for {
			select {
			case n := <-p.blast:
				for range n {
					if ws.Write(ctx, websocket.MessageText, msg) != nil {
						return
					}
				}
			case <-ctx.Done():
				return
			}
		}
	}))
	b.Cleanup(srv.Close)
	p.url = "ws" + strings.TrimPrefix(srv.URL, "http")
	return p
}

func benchSession(rate int) voicetest.Session {
	return voicetest.Session{Name: "bench", Rate: rate, Logf: func(string, ...any) {}}
}

// BenchmarkTwilioSendFrame measures SendAudio of one 20 ms frame at 24 kHz:
// resampling to 8 kHz, µ-law encoding, base64, the media message and the
// loopback write. Bytes are the PCM16 input.
func BenchmarkTwilioSendFrame(b *testing.B) {
	p := newBenchPeer(b)
	a := adapters.Twilio(p.url)
	a.Pacing = adapters.Fast
	ctx := context.Background()
	conn, err := a.Connect(ctx, benchSession(24000))
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	frame := tone(24000, 440, 20*time.Millisecond, 9000)
	b.SetBytes(int64(2 * frame.Len()))
	b.ReportAllocs()
	for b.Loop() {
		if err := conn.SendAudio(ctx, frame); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkTwilioRecvFrame measures receiving one 20 ms media frame from
// the bot: the loopback read, JSON and base64 decoding, µ-law decoding,
// resampling to 24 kHz and the event queue.
func BenchmarkTwilioRecvFrame(b *testing.B) {
	p := newBenchPeer(b)
	a := adapters.Twilio(p.url)
	a.Pacing = adapters.Fast
	ctx := context.Background()
	conn, err := a.Connect(ctx, benchSession(24000))
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
// with Fast pacing against internal/twiliobot: 300 ms of user speech and
// 300 ms of silence (30 media frames), the bot's end-of-speech detection,
// its 20 ms reply and mark, the mark echo, and receiving all of it. The bot
// runs in the same process, so this is an upper bound of the harness's
// overhead per turn.
func BenchmarkTwilioTurn(b *testing.B) {
	bot := twiliobot.New(b, twiliobot.Config{ReplyDuration: 20 * time.Millisecond})
	a := adapters.Twilio(bot.URL)
	a.Pacing = adapters.Fast
	ctx := context.Background()
	conn, err := a.Connect(ctx, benchSession(24000))
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	speech := tone(24000, 440, 300*time.Millisecond, 9000).Frames(20 * time.Millisecond)
	silence := pcm.Silence(24000, 300*time.Millisecond).Frames(20 * time.Millisecond)
	frames := append(speech, silence...)
	b.ReportAllocs()
	turn := 0
	for b.Loop() {
		turn++
		for _, f := range frames {
			if err := conn.SendAudio(ctx, f); err != nil {
				b.Fatal(err)
			}
		}
		want := `{"name":"reply-` + strconv.Itoa(turn) + `"}`
		for {
			ev, err := conn.Recv(ctx)
			if err != nil {
				b.Fatal(err)
			}
			if ev.Kind == voicetest.AgentData && string(ev.Data) == want {
				break
			}
		}
	}
}
