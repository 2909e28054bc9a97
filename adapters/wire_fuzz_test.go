package adapters_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/voicetest-go/voicetest/adapters/elevenlabs"
	"github.com/voicetest-go/voicetest/adapters/internal/conformance"
	"github.com/voicetest-go/voicetest/adapters/layercode"
	"github.com/voicetest-go/voicetest/adapters/realtime"
	"github.com/voicetest-go/voicetest/adapters/twilio"
	"github.com/voicetest-go/voicetest/internal/peers/elevenpeer"
	"github.com/voicetest-go/voicetest/internal/peers/layercodepeer"
	"github.com/voicetest-go/voicetest/internal/peers/realtimepeer"
	"github.com/voicetest-go/voicetest/internal/peers/twiliobot"
	"github.com/voicetest-go/voicetest/voicetest"
)

// The wire fuzzers send one arbitrary text frame from a loopback peer to
// the adapter, followed by a valid sentinel message, and read what the
// adapter makes of them through the public Conn: no panic (the adapters
// turn a decoder panic into a frame error, which these fuzzers reject),
// every event well formed, the Conn still usable after a bad frame (the
// sentinel still arrives), nothing left running (TestMain).

const fuzzRate = 24000

// drainFuzz reads conn until the sentinel, a hang-up or a closed
// transport, with the checks every adapter's fuzz target makes.
func drainFuzz(t *testing.T, conn voicetest.Conn, sentinel func(voicetest.AgentEvent) bool) {
	t.Helper()
	// An input that is itself valid may make the agent speak, or wait;
	// the bound only stops the read, it is not a timing assertion.
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
	defer cancel()
	_ = conformance.Drain(t, ctx, conn, fuzzRate, "", sentinel) // a read that timed out has checked all it read
}

func isUserTranscript(text string) func(voicetest.AgentEvent) bool {
	return func(ev voicetest.AgentEvent) bool { return ev.Kind == voicetest.UserTranscript && ev.Text == text }
}

func connectFuzz(t *testing.T, a voicetest.Agent) voicetest.Conn {
	t.Helper()
	conn, err := a.Connect(t.Context(), voicetest.Session{Name: t.Name(), Rate: fuzzRate, Logf: func(string, ...any) {}})
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

func FuzzTwilioFrame(f *testing.F) {
	for _, s := range []string{
		`{"event":"media","streamSid":"{sid}","media":{"payload":"/////w=="}}`,
		`{"event":"mark","streamSid":"{sid}","mark":{"name":"m1"}}`,
		`{"event":"clear","streamSid":"{sid}"}`,
		`{"event":"media","streamSid":"{sid}","media":{"payload":"not base64!"}}`,
		`{"event":"media","streamSid":"MZother","media":{"payload":"AA=="}}`,
		`{"event":"stop"}`, `{}`, `[]`, `null`, ``, `{"event":"media","streamSid":"{sid}","media":{"payload":"A"}}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, frame string) {
		bot := twiliobot.New(t, twiliobot.Config{Send: []string{frame, `{"event":"mark","streamSid":"{sid}","mark":{"name":"fuzz-sentinel"}}`}})
		a := twilio.New(bot.URL)
		a.Pacing = twilio.Fast
		conn := connectFuzz(t, a)
		drainFuzz(t, conn, func(ev voicetest.AgentEvent) bool {
			return ev.Kind == voicetest.AgentData && ev.Text == "mark" && strings.Contains(string(ev.Data), "fuzz-sentinel")
		})
	})
}

func FuzzRealtimeEvent(f *testing.F) {
	for _, s := range []string{
		`{"type":"response.created","response":{"id":"resp_1"}}`,
		`{"type":"response.output_item.added","response_id":"resp_1","item":{"id":"item_1","type":"message","role":"assistant"}}`,
		`{"type":"response.output_audio.delta","response_id":"resp_1","item_id":"item_1","delta":"AAAA"}`,
		`{"type":"response.output_audio.delta","response_id":"resp_1","item_id":"item_1","delta":"AAA"}`,
		`{"type":"response.output_audio_transcript.delta","response_id":"resp_1","item_id":"item_1","delta":"hi"}`,
		`{"type":"response.function_call_arguments.done","call_id":"c1","name":"book","arguments":"{\"party\":2}"}`,
		`{"type":"response.function_call_arguments.done","call_id":"c1","name":"book","arguments":"{"}`,
		`{"type":"response.done","response":{"id":"resp_1","status":"completed"}}`,
		`{"type":"error","error":{"type":"invalid_request_error","message":"bad"}}`,
		`{"type":"conversation.item.input_audio_transcription.failed","error":{"message":"x"}}`,
		`{"type":""}`, `{}`, `[1]`, ``,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, frame string) {
		peer := realtimepeer.New(t, realtimepeer.Config{APIKey: "sk-fuzz", Send: []string{frame,
			`{"type":"conversation.item.input_audio_transcription.completed","item_id":"x","content_index":0,"transcript":"fuzz-sentinel"}`}})
		a := realtime.New("gpt-realtime")
		a.URL = peer.URL
		a.APIKey = "sk-fuzz"
		conn := connectFuzz(t, a)
		drainFuzz(t, conn, isUserTranscript("fuzz-sentinel"))
	})
}

func FuzzElevenLabsMessage(f *testing.F) {
	for _, s := range []string{
		`{"type":"audio","audio_event":{"audio_base_64":"AAAA","event_id":1}}`,
		`{"type":"audio","audio_event":{"audio_base_64":"AAA","event_id":2}}`,
		`{"type":"agent_response","agent_response_event":{"agent_response":"hello"}}`,
		`{"type":"agent_response_correction","agent_response_correction_event":{"original_agent_response":"a","corrected_agent_response":"b"}}`,
		`{"type":"interruption","interruption_event":{"event_id":3}}`,
		`{"type":"ping","ping_event":{"event_id":4,"ping_ms":10}}`,
		`{"type":"client_tool_call","client_tool_call":{"tool_name":"book","tool_call_id":"t1","parameters":{"party":2}}}`,
		`{"type":"agent_tool_response","agent_tool_response":{"tool_name":"end_call","tool_call_id":"t9","tool_type":"system","is_error":false}}`,
		`{"type":"conversation_initiation_metadata"}`, `{}`, `{"type":5}`, ``,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, frame string) {
		peer := elevenpeer.New(t, elevenpeer.Config{APIKey: "xi-fuzz", Send: []string{frame,
			`{"type":"user_transcript","user_transcription_event":{"user_transcript":"fuzz-sentinel"}}`}})
		a := elevenlabs.New("agent_test")
		a.URL = peer.URL
		a.APIKey = "xi-fuzz"
		conn := connectFuzz(t, a)
		drainFuzz(t, conn, isUserTranscript("fuzz-sentinel"))
	})
}

func FuzzLayerCodeMessage(f *testing.F) {
	for _, s := range []string{
		`{"type":"response.audio","content":"AAAA","turn_id":"t1","delta_id":"d1"}`,
		`{"type":"response.audio","content":"AAA","turn_id":"t1"}`,
		`{"type":"response.text","content":"hello","turn_id":"t1"}`,
		`{"type":"response.data","content":{"a":1},"turn_id":"t1"}`,
		`{"type":"turn.start","role":"assistant","turn_id":"t2"}`,
		`{"type":"turn.start","role":"user"}`,
		`{"type":"user.transcript.delta","content":"hel"}`,
		`{"type":"response.audio","content":5}`, `{}`, `{"type":""}`, ``,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, frame string) {
		peer := layercodepeer.New(t, layercodepeer.Config{Send: []string{frame, `{"type":"user.transcript","content":"fuzz-sentinel"}`}})
		a := layercode.New(peer.AuthorizeURL, "agent-test")
		a.WebSocketURL = peer.WebSocketURL
		conn := connectFuzz(t, a)
		drainFuzz(t, conn, isUserTranscript("fuzz-sentinel"))
	})
}
