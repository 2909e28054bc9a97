package pipecatpeer_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/voicetest-go/voicetest/adapters/pipecat/pipecatpb"
	"github.com/voicetest-go/voicetest/internal/peers/pipecatpeer"
	"github.com/voicetest-go/voicetest/pcm"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/fixtures"
	"google.golang.org/protobuf/proto"
)

func dial(t *testing.T, url string) *websocket.Conn {
	t.Helper()
	ws, _, err := websocket.Dial(t.Context(), url, nil)
	if err != nil {
		t.Fatal(err)
	}
	ws.SetReadLimit(1 << 20)
	t.Cleanup(func() { ws.CloseNow() })
	return ws
}

func speech(t *testing.T, text string, rate int) []int16 {
	t.Helper()
	c, err := fixtures.FakeTTS().Synthesize(t.Context(), voicetest.SpeechRequest{Text: text, Rate: rate})
	if err != nil {
		t.Fatal(err)
	}
	return append(c.Samples, make([]int16, rate/2)...) // and 500 ms of silence
}

// Under the protobuf serializer: client-ready is answered with bot-ready,
// AudioRawFrames of the user's speech with RTVI transcripts, the bot's
// speaking state and AudioRawFrames of its reply.
func TestProtobuf(t *testing.T) {
	bot := pipecatpeer.New(t, pipecatpeer.Config{RTVI: true})
	ws := dial(t, bot.URL)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	send := func(f *pipecatpb.Frame) {
		b, _ := proto.Marshal(f)
		if err := ws.Write(ctx, websocket.MessageBinary, b); err != nil {
			t.Fatal(err)
		}
	}
	send(&pipecatpb.Frame{Frame: &pipecatpb.Frame_Message{Message: &pipecatpb.MessageFrame{Data: `{"label":"rtvi-ai","type":"client-ready","id":"1","data":{"version":"2.1.0","about":{"library":"test"}}}`}}})
	samples := speech(t, "hi there", 16000)
	for i := 0; i < len(samples); i += 320 {
		send(&pipecatpb.Frame{Frame: &pipecatpb.Frame_Audio{Audio: &pipecatpb.AudioRawFrame{Audio: pcm.EncodePCM16(nil, samples[i:min(i+320, len(samples))]), SampleRate: 16000, NumChannels: 1}}})
	}
	var types []string
	var audio int
	for {
		_, data, err := ws.Read(ctx)
		if err != nil {
			t.Fatalf("after %v: %v", types, err)
		}
		var f pipecatpb.Frame
		if err := proto.Unmarshal(data, &f); err != nil {
			t.Fatal(err)
		}
		if a := f.GetAudio(); a != nil {
			if a.SampleRate != 24000 || a.NumChannels != 1 {
				t.Fatalf("audio frame %v", a)
			}
			audio += len(a.Audio) / 2
			continue
		}
		var m struct {
			Label, Type string
			Data        map[string]any
		}
		if err := json.Unmarshal([]byte(f.GetMessage().GetData()), &m); err != nil || m.Label != "rtvi-ai" {
			t.Fatalf("frame %v", &f)
		}
		if m.Type == "user-transcription" && m.Data["text"] != "hi there" {
			t.Errorf("user-transcription %v", m.Data)
		}
		if m.Type != "bot-tts-text" {
			types = append(types, m.Type)
		}
		if m.Type == "bot-stopped-speaking" {
			break
		}
	}
	if got := strings.Join(types, " "); got != "bot-ready user-started-speaking user-stopped-speaking user-transcription bot-started-speaking bot-stopped-speaking" || audio == 0 {
		t.Errorf("RTVI %s, %d samples of audio", got, audio)
	}
}

// Under the Twilio serializer: connected and start, then µ-law media; the
// bot answers with media for the stream, and clear when the caller speaks
// over it.
func TestTwilio(t *testing.T) {
	bot := pipecatpeer.New(t, pipecatpeer.Config{Serializer: pipecatpeer.Twilio, ChunkDelay: 20 * time.Millisecond,
		Turns: []pipecatpeer.Turn{{Reply: "Once upon a time there was a voice agent."}}})
	ws := dial(t, bot.URL)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	text := func(s string) {
		if err := ws.Write(ctx, websocket.MessageText, []byte(s)); err != nil {
			t.Fatal(err)
		}
	}
	text(`{"event":"connected","protocol":"Call","version":"1.0.0"}`)
	text(`{"event":"start","sequenceNumber":"1","streamSid":"MZ1","start":{"streamSid":"MZ1","callSid":"CA1","accountSid":"AC1","tracks":["inbound"],"mediaFormat":{"encoding":"audio/x-mulaw","sampleRate":8000,"channels":1}}}`)
	say := func(s string) {
		samples := speech(t, s, 8000)
		for i := 0; i < len(samples); i += 160 {
			text(`{"event":"media","streamSid":"MZ1","media":{"payload":"` + base64.StdEncoding.EncodeToString(pcm.EncodeMulaw(nil, samples[i:min(i+160, len(samples))])) + `"}}`)
		}
	}
	say("hi")
	var events []string
	for {
		_, data, err := ws.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var m struct{ Event, StreamSid string }
		if err := json.Unmarshal(data, &m); err != nil || m.StreamSid != "MZ1" {
			t.Fatalf("message %s", data)
		}
		if len(events) == 0 || events[len(events)-1] != m.Event {
			events = append(events, m.Event)
		}
		if m.Event == "media" && len(events) == 1 {
			say("stop")
		}
		if m.Event == "clear" {
			break
		}
	}
	c := bot.Calls()[0]
	if strings.Join(events, " ") != "media clear" || c.CallSid != "CA1" || c.Interruptions != 1 || len(c.Errors) > 0 {
		t.Errorf("events %v; call %+v", events, c)
	}
}
