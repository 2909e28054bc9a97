package wscodec_test

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/voicetest-go/voicetest/adapters/internal/adaptertest"
	"github.com/voicetest-go/voicetest/adapters/internal/adaptertest/readmecaps"
	"github.com/voicetest-go/voicetest/adapters/wscodec"
	"github.com/voicetest-go/voicetest/pcm"
	"github.com/voicetest-go/voicetest/voicetest"
)

func openCodec(t testing.TB, c wscodec.Codec, rate int) wscodec.CodecSession {
	t.Helper()
	cs, hello, err := c.Open(voicetest.Session{Name: t.Name(), Rate: rate, Logf: voicetest.TestLogf(t)})
	if err != nil {
		t.Fatal(err)
	}
	if len(hello) != 0 {
		t.Fatalf("built-in codec sent opening frames %v", hello)
	}
	return cs
}

func TestJSONDecode(t *testing.T) {
	b64 := func(samples ...int16) string { return base64.StdEncoding.EncodeToString(pcm.EncodePCM16(nil, samples)) }
	for _, tc := range []struct {
		frame string
		want  voicetest.AgentEvent
		err   string
	}{
		{frame: `{"type":"audio","audio":"` + b64(1, -2, 3) + `"}`, want: voicetest.AgentEvent{Kind: voicetest.AgentAudio, Audio: pcm.Chunk{Rate: 24000, Samples: []int16{1, -2, 3}}}},
		{frame: `{"type":"audio","audio":"` + b64(1, -2, 3) + `","sample_rate":24000}`, want: voicetest.AgentEvent{Kind: voicetest.AgentAudio, Audio: pcm.Chunk{Rate: 24000, Samples: []int16{1, -2, 3}}}},
		{frame: `{"type":"transcript","text":"Hel"}`, want: voicetest.AgentEvent{Kind: voicetest.AgentTranscript, Text: "Hel"}},
		{frame: `{"type":"transcript","text":"Hello.","final":true}`, want: voicetest.AgentEvent{Kind: voicetest.AgentTranscript, Text: "Hello.", Final: true}},
		{frame: `{"type":"user_transcript","text":"hi","final":true}`, want: voicetest.AgentEvent{Kind: voicetest.UserTranscript, Text: "hi", Final: true}},
		{frame: `{"type":"tool_call","id":"c1","name":"book","arguments":{"n":2}}`, want: voicetest.AgentEvent{Kind: voicetest.AgentToolCall, Tool: &voicetest.ToolCall{ID: "c1", Name: "book", Arguments: json.RawMessage(`{"n":2}`)}}},
		{frame: `{"type":"tool_result","id":"c1","name":"book","result":"full","is_error":true}`, want: voicetest.AgentEvent{Kind: voicetest.AgentToolResult, Tool: &voicetest.ToolCall{ID: "c1", Name: "book", Result: json.RawMessage(`"full"`), IsError: true}}},
		{frame: `{"type":"data","name":"card","data":[1]}`, want: voicetest.AgentEvent{Kind: voicetest.AgentData, Text: "card", Data: json.RawMessage(`[1]`)}},
		{frame: `{"type":"turn_end"}`, want: voicetest.AgentEvent{Kind: voicetest.AgentTurnEnd}},
		{frame: `{"type":"interrupted"}`, want: voicetest.AgentEvent{Kind: voicetest.AgentInterrupted}},
		{frame: `{"type":"hangup","reason":"bye"}`, want: voicetest.AgentEvent{Kind: voicetest.AgentHangUp, Text: "bye"}},
		{frame: `{"type":"log","text":"thinking"}`, want: voicetest.AgentEvent{Kind: voicetest.AgentLog, Text: "thinking"}},
		{frame: `{"type":"audio"}`, err: `audio message without "audio"`},
		{frame: `{"type":"audio","audio":"AAAA","sample_rate":0}`, err: "sample_rate 0"},
		{frame: `{"type":"transcript"}`, err: `transcript message without "text"`},
		{frame: `{"type":"tool_call","id":"x"}`, err: `tool_call message without "name"`},
		{frame: `{"text":"hi"}`, err: `no "type" field`},
		{frame: `{"type":42}`, err: "not a JSON message"},
		{frame: ``, err: "not a JSON message"},
	} {
		cs := openCodec(t, wscodec.JSONBase64(wscodec.JSONOptions{}), 24000)
		evs, err := cs.Decode(nil, wscodec.Frame{Data: []byte(tc.frame)})
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("Decode(%s): %v, want an error containing %q", tc.frame, err, tc.err)
			}
			continue
		}
		if err != nil || len(evs) != 1 {
			t.Errorf("Decode(%s) = %+v, %v; want one event", tc.frame, evs, err)
			continue
		}
		got, _ := json.Marshal(evs[0])
		want, _ := json.Marshal(tc.want)
		if string(got) != string(want) {
			t.Errorf("Decode(%s)\n got %s\nwant %s", tc.frame, got, want)
		}
	}
}

func TestJSONDecodeResamples(t *testing.T) {
	cs := openCodec(t, wscodec.JSONBase64(wscodec.JSONOptions{}), 24000)
	in := adaptertest.Tone(8000, 300, 200*time.Millisecond, 8000)
	var out int
	for _, f := range in.Frames(20 * time.Millisecond) {
		frame := fmt.Sprintf(`{"type":"audio","sample_rate":8000,"audio":%q}`, base64.StdEncoding.EncodeToString(f.Bytes()))
		evs, err := cs.Decode(nil, wscodec.Frame{Data: []byte(frame)})
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range evs {
			if ev.Audio.Rate != 24000 {
				t.Fatalf("audio at %d Hz, want 24000", ev.Audio.Rate)
			}
			out += ev.Audio.Len()
		}
	}
	evs, err := cs.Decode(nil, wscodec.Frame{Data: []byte(`{"type":"turn_end"}`)})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(evs); n != 2 || evs[0].Kind != voicetest.AgentAudio || evs[1].Kind != voicetest.AgentTurnEnd {
		t.Fatalf("turn_end gave %+v, want the resampler's tail then the turn end", evs)
	}
	out += evs[0].Audio.Len()
	if want := pcm.SamplesFor(24000, 200*time.Millisecond); out != want {
		t.Errorf("8 kHz audio of 200 ms came out as %d samples at 24 kHz, want %d", out, want)
	}
}

func TestJSONEncode(t *testing.T) {
	cs := openCodec(t, wscodec.JSONBase64(wscodec.JSONOptions{Rate: 24000}), 24000)
	check := func(frames []wscodec.Frame, err error, want string) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, f := range frames {
			if f.Binary {
				t.Errorf("binary frame from the JSON codec")
			}
			got = append(got, string(f.Data))
		}
		if strings.Join(got, "\n") != want {
			t.Errorf("frames\n%s\nwant\n%s", strings.Join(got, "\n"), want)
		}
	}
	frames, err := cs.EncodeAudio(nil, pcm.Chunk{Rate: 24000, Samples: []int16{1, 2}})
	check(frames, err, `{"type":"audio","audio":"AQACAA==","sample_rate":24000}`)
	frames, err = cs.EncodeEndUtterance(nil)
	check(frames, err, `{"type":"audio_end"}`)
	frames, err = cs.EncodeText(nil, `say "hi"`)
	check(frames, err, `{"type":"text","text":"say \"hi\""}`)
	frames, err = cs.EncodeDTMF(nil, "1#")
	check(frames, err, `{"type":"dtmf","digits":"1#"}`)
	frames, err = cs.EncodeInterrupt(nil)
	check(frames, err, `{"type":"interrupt"}`)

	vad := openCodec(t, wscodec.JSONBase64(wscodec.JSONOptions{NativeVAD: true}), 24000)
	frames, err = vad.EncodeEndUtterance(nil)
	check(frames, err, "")
	if !vad.Capabilities().NativeVAD {
		t.Error("NativeVAD option not declared in Capabilities")
	}
	readmecaps.Check(t, "`wscodec`, JSON", vad.Capabilities(), "NativeVAD")
	if _, _, err := wscodec.JSONBase64(wscodec.JSONOptions{Rate: -8000}).Open(voicetest.Session{Rate: 24000}); !errors.Is(err, pcm.ErrBadRate) {
		t.Errorf("negative rate: %v, want ErrBadRate", err)
	}
}

func TestRawPCMCodec(t *testing.T) {
	cs := openCodec(t, wscodec.RawPCM(8000), 24000)
	in := adaptertest.Tone(24000, 300, 100*time.Millisecond, 8000)
	var wire []byte
	for _, f := range in.Frames(20 * time.Millisecond) {
		frames, err := cs.EncodeAudio(nil, f)
		if err != nil {
			t.Fatal(err)
		}
		for _, fr := range frames {
			if !fr.Binary {
				t.Fatal("raw PCM codec sent a text frame")
			}
			wire = append(wire, fr.Data...)
		}
	}
	frames, err := cs.EncodeEndUtterance(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, fr := range frames {
		wire = append(wire, fr.Data...)
	}
	if got, want := len(wire)/2, pcm.SamplesFor(8000, 100*time.Millisecond); got != want {
		t.Errorf("100 ms at 24 kHz became %d samples at 8 kHz, want %d", got, want)
	}
	evs, err := cs.Decode(nil, wscodec.Frame{Binary: true, Data: wire})
	if err != nil || len(evs) != 1 || evs[0].Audio.Rate != 24000 {
		t.Fatalf("Decode: %+v, %v", evs, err)
	}
	if _, err := cs.Decode(nil, wscodec.Frame{Binary: true, Data: []byte{1}}); !errors.Is(err, pcm.ErrOddLength) {
		t.Errorf("odd frame: %v, want ErrOddLength", err)
	}
	evs, err = cs.Decode(nil, wscodec.Frame{Data: []byte("ready")})
	if err != nil || len(evs) != 1 || evs[0].Kind != voicetest.AgentLog || evs[0].Text != "ready" {
		t.Errorf("text frame: %+v, %v; want an AgentLog", evs, err)
	}
}

// The JSON codec's wire format, without a network: what voicetest sends
// for a user turn, and what it makes of the agent's answer.
func ExampleJSONBase64() {
	codec := wscodec.JSONBase64(wscodec.JSONOptions{Rate: 16000, TurnEnd: true})
	cs, _, err := codec.Open(voicetest.Session{Name: "example", Rate: 16000, Logf: func(string, ...any) {}})
	if err != nil {
		fmt.Println(err)
		return
	}
	frames, _ := cs.EncodeAudio(nil, pcm.Chunk{Rate: 16000, Samples: []int16{0, 256, -256}})
	frames, _ = cs.EncodeEndUtterance(frames)
	frames, _ = cs.EncodeDTMF(frames, "42#")
	for _, f := range frames {
		fmt.Println("send", string(f.Data))
	}
	for _, msg := range []string{
		`{"type":"audio","audio":"AAABAAL/","sample_rate":16000}`,
		`{"type":"transcript","text":"Table for two?","final":true}`,
		`{"type":"turn_end"}`,
		`{"type":"dance"}`,
	} {
		evs, err := cs.Decode(nil, wscodec.Frame{Data: []byte(msg)})
		if err != nil {
			fmt.Println("error:", err)
		}
		for _, ev := range evs {
			fmt.Println("recv", ev.Kind, ev.Text, ev.Audio.Samples)
		}
	}
	// Output:
	// send {"type":"audio","audio":"AAAAAQD/","sample_rate":16000}
	// send {"type":"audio_end"}
	// send {"type":"dtmf","digits":"42#"}
	// recv agent_audio  [0 1 -254]
	// recv agent_transcript Table for two? []
	// recv agent_turn_end  []
	// error: unknown message type "dance" (set JSONOptions.UnknownAsData to receive such messages as AgentData)
}
