package gemini_test

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
	"github.com/voicetest-go/voicetest/adapters/gemini"
	"github.com/voicetest-go/voicetest/adapters/internal/adaptertest"
	"github.com/voicetest-go/voicetest/adapters/wire"
	"github.com/voicetest-go/voicetest/pcm"
	"github.com/voicetest-go/voicetest/voicetest"
	"google.golang.org/genai"
)

// minimalLive is a Live server for benchmarks that does next to no work:
// it answers setup with setupComplete, discards what it reads, and for
// every n sent on blast sends n messages of 100 ms of 24 kHz audio as fast
// as it can. It answers each activityEnd at once as the Live API reference
// (ai.google.dev/api/live) has the server answer a turn, each message JSON
// in a binary frame: serverContent with 20 ms of audio in modelTurn, its
// outputTranscription (the session asks for it), generationComplete and
// turnComplete.
//
// Like the other protocols' minimal peers since issue 21's perturn3, it
// reads through a 64 KiB buffer (adaptertest.BigReads) and writes the
// reply's four messages in one system call (a server's transport writes a
// reply produced at once together), without a context timer per write.
// It looks for activityEnd in every message but the user's audio: a
// realtimeInput message whose first member is audio (the reference's
// BidiGenerateContentRealtimeInput.audio) is skipped unsearched, since
// searching its 34 KB of base64 for the word costs more than the rest of
// what the peer does with it.
func minimalLive(b *testing.B) (url string, blast chan int) {
	b.Helper()
	blast = make(chan int, 1)
	data := base64.StdEncoding.EncodeToString(make([]byte, 4800))
	audio := []byte(`{"serverContent":{"modelTurn":{"parts":[{"inlineData":{"mimeType":"audio/pcm;rate=24000","data":"` + data + `"}}]}}}`)
	audioInput := []byte(`{"realtimeInput":{"audio":`)
	reply := [][]byte{
		[]byte(`{"serverContent":{"modelTurn":{"parts":[{"inlineData":{"mimeType":"audio/pcm;rate=24000","data":"` + base64.StdEncoding.EncodeToString(make([]byte, 960)) + `"}}]}}}`),
		[]byte(`{"serverContent":{"outputTranscription":{"text":"Okay."}}}`),
		[]byte(`{"serverContent":{"generationComplete":true}}`),
		[]byte(`{"serverContent":{"turnComplete":true}}`),
	}
	srv := adaptertest.BenchServer(b, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		adaptertest.LabelPeer(r)
		w, burst := adaptertest.BigReads(w)
		ws, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer ws.CloseNow()
		ws.SetReadLimit(1 << 20)
		ctx, cancel := context.WithCancel(r.Context())
		defer cancel()
		go func() {
			defer cancel() // the client left: stop blasting
			adaptertest.ReadLoop(ws, func(msg []byte) {
				switch {
				case bytes.HasPrefix(msg, audioInput):
					// The user's audio, and nothing else: not searched.
				case bytes.HasPrefix(msg, []byte(`{"setup"`)):
					ws.Write(ctx, websocket.MessageBinary, []byte(`{"setupComplete":{}}`))
				case bytes.Contains(msg, []byte(`"activityEnd"`)):
					burst.Begin() // the reply's messages in one write
					for _, m := range reply {
						ws.Write(context.Background(), websocket.MessageBinary, m) // no timer per write
					}
					burst.End()
				}
			})
		}()
		adaptertest.BlastLoop(ctx, ws, blast, audio)
	}))
	return srv.WSURL(""), blast
}

func benchGeminiConn(b *testing.B, url string, rate int) voicetest.Conn {
	b.Helper()
	a := gemini.New("")
	a.BaseURL, a.APIKey = url, "bench-key"
	return adaptertest.BenchConn(b, a, rate)
}

// BenchmarkGeminiSendFrame measures SendAudio of one 20 ms frame at the
// session rate: resampling to 16 kHz, PCM16 encoding and the realtimeInput
// message (built by appending, the audio in base64). Bytes are the PCM16
// input.
func BenchmarkGeminiSendFrame(b *testing.B) {
	for _, rate := range []int{24000, 16000} {
		b.Run(strconv.Itoa(rate/1000)+"kHz", func(b *testing.B) {
			url, _ := minimalLive(b)
			adaptertest.BenchSendFrame(b, benchGeminiConn(b, url, rate), adaptertest.Tone(rate, 440, 20*time.Millisecond, 9000))
		})
	}
}

// BenchmarkGeminiRecvAudio measures receiving one server message of
// 100 ms of audio: the frame read, decoded once with encoding/json, PCM16
// decoding and the queue. Bytes are the message's audio.
func BenchmarkGeminiRecvAudio(b *testing.B) {
	url, blast := minimalLive(b)
	conn := benchGeminiConn(b, url, 24000)
	b.SetBytes(4800)
	b.ReportAllocs()
	b.ResetTimer()
	blast <- b.N
	for range b.N {
		ev, err := conn.Recv(b.Context())
		if err != nil || ev.Kind != voicetest.AgentAudio {
			b.Fatalf("Recv: %v %v", ev.Kind, err)
		}
	}
}

// BenchmarkGeminiTurnMinimalPeer measures one turn's harness overhead:
// 600 ms of user audio at 24 kHz in 30 frames (activityStart, 30
// realtimeInput audio messages, activityEnd) and the reply (20 ms of
// audio, its transcription, generationComplete and turnComplete) drained
// to AgentTurnEnd; the server answers at once.
//
// Its user audio is 600 ms of tone, all of which the 24 → 16 kHz resampler
// filters; the other protocols' TurnMinimalPeer benchmarks send
// adaptertest.BenchTurnFrames, half tone and half silence, whose silence
// the resampler skips (BenchmarkGeminiTurnHalfSilent is this turn with
// those frames).
func BenchmarkGeminiTurnMinimalPeer(b *testing.B) {
	benchGeminiTurn(b, adaptertest.Tone(24000, 440, 600*time.Millisecond, 9000).Frames(20*time.Millisecond))
}

// BenchmarkGeminiTurnHalfSilent is BenchmarkGeminiTurnMinimalPeer with the
// other protocols' user audio (adaptertest.BenchTurnFrames: 300 ms of tone
// and 300 ms of silence at 24 kHz), for comparing like with like.
func BenchmarkGeminiTurnHalfSilent(b *testing.B) {
	benchGeminiTurn(b, adaptertest.BenchTurnFrames(24000))
}

// benchGeminiTurn measures turns of frames (at 24 kHz) against minimalLive.
func benchGeminiTurn(b *testing.B, frames []pcm.Chunk) {
	b.Helper()
	url, _ := minimalLive(b)
	conn := benchGeminiConn(b, url, 24000)
	out0 := conn.(voicetest.WireStatsReporter).WireStats().FramesOut
	adaptertest.BenchTurns(b, conn, func(ctx context.Context) error {
		return adaptertest.SendUtterance(ctx, conn, frames)
	}, adaptertest.IsKind(voicetest.AgentTurnEnd))
	b.ReportMetric(float64(conn.(voicetest.WireStatsReporter).WireStats().FramesOut-out0)/float64(b.N), "msgs-out/op")
}

// BenchmarkGeminiSDKFloorTurn measures what the genai SDK alone costs for
// the turn of BenchmarkGeminiTurnMinimalPeer, with no adapter (the adapter
// spoke through the SDK until issue 21's gemini3; kept for comparison): the same
// minimal server, activityStart, the turn's 600 ms of user audio at
// 16 kHz as ONE realtimeInput message (the fewest an SDK client can send;
// no resampling), activityEnd, and Receive until turnComplete (4
// messages). No adapter built on the SDK can do a turn for less.
func BenchmarkGeminiSDKFloorTurn(b *testing.B) {
	url, _ := minimalLive(b)
	ctx := context.Background()
	client, err := genai.NewClient(ctx, &genai.ClientConfig{APIKey: "bench-key", Backend: genai.BackendGeminiAPI,
		HTTPOptions: genai.HTTPOptions{BaseURL: url, APIVersion: gemini.DefaultAPIVersion}})
	if err != nil {
		b.Fatal(err)
	}
	sess, err := client.Live.Connect(ctx, gemini.DefaultModel, &genai.LiveConnectConfig{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { sess.Close() })
	if _, err := sess.Receive(); err != nil { // the buffered setupComplete
		b.Fatal(err)
	}
	audio := make([]byte, 2*16000*600/1000)
	for i := range audio {
		audio[i] = byte(i * 7)
	}
	b.ReportAllocs()
	cpu0 := adaptertest.CPUTime(b)
	for b.Loop() {
		for _, in := range []genai.LiveRealtimeInput{
			{ActivityStart: &genai.ActivityStart{}},
			{Audio: &genai.Blob{MIMEType: "audio/pcm;rate=16000", Data: audio}},
			{ActivityEnd: &genai.ActivityEnd{}},
		} {
			if err := sess.SendRealtimeInput(in); err != nil {
				b.Fatal(err)
			}
		}
		for {
			msg, err := sess.Receive()
			if err != nil {
				b.Fatal(err)
			}
			if msg.ServerContent != nil && msg.ServerContent.TurnComplete {
				break
			}
		}
	}
	b.ReportMetric(float64(adaptertest.CPUTime(b)-cpu0)/float64(b.N), "cpu-ns/op")
}

// BenchmarkGeminiWireFloorTurn measures the same turn as
// BenchmarkGeminiSDKFloorTurn, against the same server, without the genai
// SDK: the three realtimeInput messages built by appending (the audio
// base64-encoded once) and written with coder/websocket, and the four
// server messages read and decoded once into the fields a client needs.
// In 24kHz the audio is BenchmarkGeminiTurnMinimalPeer's, 30 frames of
// 20 ms at 24 kHz resampled to 16 kHz as the adapter does (wire.Upstream,
// flushed at the end); in 16kHz it is 600 ms of PCM16 at 16 kHz as is. It
// is a measurement of what the protocol's bytes (and the resampling)
// cost, for comparison with the SDK's floor and the adapter's turn, not
// a client.
func BenchmarkGeminiWireFloorTurn(b *testing.B) {
	b.Run("24kHz", func(b *testing.B) { benchWireFloor(b, 24000) })
	b.Run("16kHz", func(b *testing.B) { benchWireFloor(b, 16000) })
}

func benchWireFloor(b *testing.B, rate int) {
	url, _ := minimalLive(b)
	ctx := context.Background()
	ws, _, err := websocket.Dial(ctx, url+"/ws/google.ai.generativelanguage.v1beta.GenerativeService.BidiGenerateContent", nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { ws.CloseNow() })
	ws.SetReadLimit(1 << 20)
	if err := ws.Write(ctx, websocket.MessageText, []byte(`{"setup":{"model":"models/`+gemini.DefaultModel+`"}}`)); err != nil {
		b.Fatal(err)
	}
	if _, _, err := ws.Read(ctx); err != nil { // setupComplete
		b.Fatal(err)
	}
	audio := make([]byte, 2*16000*600/1000)
	for i := range audio {
		audio[i] = byte(i * 7)
	}
	var up wire.Upstream
	frames := adaptertest.Tone(24000, 440, 600*time.Millisecond, 9000).Frames(20 * time.Millisecond)
	if rate != 16000 {
		if up.Resampler, err = pcm.NewResampler(rate, 16000); err != nil {
			b.Fatal(err)
		}
	}
	var msg []byte
	var m struct {
		ServerContent *struct {
			ModelTurn *struct {
				Parts []struct {
					InlineData *struct {
						MIMEType string `json:"mimeType"`
						Data     []byte `json:"data"`
					} `json:"inlineData"`
				} `json:"parts"`
			} `json:"modelTurn"`
			OutputTranscription *struct {
				Text string `json:"text"`
			} `json:"outputTranscription"`
			TurnComplete bool `json:"turnComplete"`
		} `json:"serverContent"`
	}
	b.ReportAllocs()
	cpu0 := adaptertest.CPUTime(b)
	for b.Loop() {
		if err := ws.Write(ctx, websocket.MessageText, []byte(`{"realtimeInput":{"activityStart":{}}}`)); err != nil {
			b.Fatal(err)
		}
		msg = append(msg[:0], `{"realtimeInput":{"audio":{"mimeType":"audio/pcm;rate=16000","data":"`...)
		if up.Resampler != nil {
			audio = audio[:0]
			for _, f := range frames {
				audio = wire.AppendPCM16(audio, up.Process(f.Samples))
			}
			audio = wire.AppendPCM16(audio, up.Flush())
		}
		msg = base64.StdEncoding.AppendEncode(msg, audio)
		msg = append(msg, `"}}}`...)
		if err := ws.Write(ctx, websocket.MessageText, msg); err != nil {
			b.Fatal(err)
		}
		if err := ws.Write(ctx, websocket.MessageText, []byte(`{"realtimeInput":{"activityEnd":{}}}`)); err != nil {
			b.Fatal(err)
		}
		for {
			_, data, err := ws.Read(ctx)
			if err != nil {
				b.Fatal(err)
			}
			m.ServerContent = nil
			if err := json.Unmarshal(data, &m); err != nil {
				b.Fatal(err)
			}
			if m.ServerContent != nil && m.ServerContent.TurnComplete {
				break
			}
		}
	}
	b.ReportMetric(float64(adaptertest.CPUTime(b)-cpu0)/float64(b.N), "cpu-ns/op")
}
