package sdkcheck_test

import (
	"encoding/hex"
	"net/http"
	"strings"
	"testing"

	"github.com/voicetest-go/voicetest/internal/peers/fakeopenai"
)

// TestFakeOpenAIWithOpenAISDK drives fakeopenai with OpenAI's Node SDK
// (openai): chat completions plain and streamed (raw chunks with usage,
// and the SDK's stream helper, which checks each chunk as it accumulates
// a tool call), typed errors, speech in the SDK's default mp3 and every
// other format, speech as server-sent events, and transcriptions plain,
// verbose_json with word and segment timestamps, and streamed.
func TestFakeOpenAIWithOpenAISDK(t *testing.T) {
	t.Parallel()
	s := fakeopenai.New(t)
	s.HandleChat(func(req fakeopenai.ChatRequest) (fakeopenai.ChatReply, error) {
		last := req.Messages[len(req.Messages)-1]
		switch {
		case last.Role == "tool":
			return fakeopenai.ChatReply{Content: "Your table for two is booked."}, nil
		case strings.Contains(last.Content, "Book for four"):
			return fakeopenai.ChatReply{ToolCalls: []fakeopenai.ToolCall{{Name: "book_table", Arguments: `{"party":4,"note":"by the window"}`}}}, nil
		case len(req.Tools) > 0:
			return fakeopenai.ChatReply{ToolCalls: []fakeopenai.ToolCall{{Name: "book_table", Arguments: `{"party":2}`}}}, nil
		}
		return fakeopenai.ChatReply{Content: "Hello, and welcome to the restaurant."}, nil
	})
	r := runNode(t, "openai.mjs", "SDKCHECK_BASE_URL="+s.BaseURL(), "SDKCHECK_KEY="+s.APIKey())
	r.checkFailures(t)

	var str string
	var n int
	r.value(t, "plain_tool_args", &str)
	if str != `{"party":2}` {
		t.Errorf("plain tool call arguments %q", str)
	}
	r.value(t, "plain_text", &str)
	if str != "Your table for two is booked." {
		t.Errorf("plain answer %q", str)
	}
	r.value(t, "stream_text", &str)
	r.value(t, "stream_chunks", &n)
	if str != "Hello, and welcome to the restaurant." || n < 4 {
		t.Errorf("streamed text %q in %d chunks; want the reply in several deltas", str, n)
	}
	r.value(t, "stream_finish", &str)
	if str != "stop" {
		t.Errorf("streamed finish_reason %q", str)
	}
	var fn struct{ Name, Arguments string }
	r.value(t, "stream_tool_final", &fn)
	if fn.Name != "book_table" || fn.Arguments != `{"party":4,"note":"by the window"}` {
		t.Errorf("the stream helper accumulated the tool call %+v", fn)
	}
	var dones []struct{ Name, Arguments string }
	r.value(t, "stream_tool_done", &dones)
	if len(dones) != 1 {
		t.Errorf("tool_calls.function.arguments.done events %+v, want one", dones)
	}
	var bad struct {
		Status        int
		Name, Message string
		Param         string
	}
	r.value(t, "bad_request", &bad)
	if bad.Status != http.StatusBadRequest || bad.Name != "BadRequestError" || bad.Param != "messages" || !strings.Contains(bad.Message, "empty array") {
		t.Errorf("empty messages gave %+v, want a BadRequestError about messages", bad)
	}
	var badKey struct {
		Status     int
		Name, Code string
	}
	r.value(t, "bad_key", &badKey)
	if badKey.Status != http.StatusUnauthorized || badKey.Name != "AuthenticationError" || badKey.Code != "invalid_api_key" {
		t.Errorf("a wrong key gave %+v, want an AuthenticationError invalid_api_key", badKey)
	}

	// Speech: every format's bytes start as the format does.
	type audio struct {
		Bytes      int
		Head, Type string
	}
	var mp3 audio
	r.value(t, "mp3", &mp3)
	if h, _ := hex.DecodeString(mp3.Head); mp3.Bytes < 200 || len(h) < 2 || !(string(h[:3]) == "ID3" || h[0] == 0xff && h[1]&0xe0 == 0xe0) {
		t.Errorf("default speech %+v is not MP3", mp3)
	}
	for format, want := range map[string]struct{ head, typ string }{
		"wav":  {hex.EncodeToString([]byte("RIFF")), "audio/wav"},
		"opus": {hex.EncodeToString([]byte("OggS")), "audio/opus"},
		"flac": {hex.EncodeToString([]byte("fLaC")), "audio/flac"},
		"aac":  {"fff1", "audio/aac"},
		"pcm":  {"", "audio/pcm"},
	} {
		var a audio
		r.value(t, "speech_"+format, &a)
		if a.Bytes < 200 || !strings.HasPrefix(a.Head, want.head) || a.Type != want.typ {
			t.Errorf("speech as %s: %+v, want %s bytes of %s", format, a, want.head, want.typ)
		}
	}
	var sse struct {
		Deltas, Bytes int
		Done          bool
	}
	r.value(t, "speech_sse", &sse)
	if sse.Deltas < 2 || sse.Bytes < 4800 || !sse.Done {
		t.Errorf("speech as server-sent events: %+v, want several audio deltas and a done event", sse)
	}

	// Transcriptions.
	const said = "a table for two please"
	r.value(t, "stt_plain", &str)
	if str != said {
		t.Errorf("plain transcription %q", str)
	}
	var verbose struct {
		Text     string
		Duration float64
		Language string
		Words    []struct {
			Word       string
			Start, End float64
		}
		Segments []struct {
			Text       string
			Start, End float64
		}
	}
	r.value(t, "stt_verbose", &verbose)
	if verbose.Text != said || verbose.Duration <= 0 || len(verbose.Words) != 5 || len(verbose.Segments) != 1 {
		t.Errorf("verbose transcription %+v, want 5 timed words and a segment", verbose)
	} else {
		for i, w := range verbose.Words {
			if w.Word != strings.Fields(said)[i] || w.End <= w.Start || w.End > verbose.Duration || i > 0 && w.Start < verbose.Words[i-1].End {
				t.Errorf("word %d = %+v, want %q timed in order within %gs", i, w, strings.Fields(said)[i], verbose.Duration)
			}
		}
	}
	var events []struct{ Type, Delta, Text string }
	r.value(t, "stt_stream", &events)
	var deltas string
	for _, ev := range events[:max(len(events)-1, 0)] {
		if ev.Type != "transcript.text.delta" {
			t.Errorf("streamed transcription event %+v before the end", ev)
		}
		deltas += ev.Delta
	}
	if len(events) < 2 || events[len(events)-1].Type != "transcript.text.done" || events[len(events)-1].Text != said || deltas != said {
		t.Errorf("streamed transcription %+v, want deltas then transcript.text.done of %q", events, said)
	}
	r.value(t, "stt_mp3_text", &str)
	if strings.TrimSpace(str) != "see you at seven" {
		t.Errorf("transcription of the double's own mp3 %q", str)
	}
}
