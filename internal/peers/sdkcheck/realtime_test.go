package sdkcheck_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/voicetest-go/voicetest/internal/peers/realtimepeer"
	"github.com/voicetest-go/voicetest/pcm"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/fixtures"
)

// fakeSpeech writes text as fixtures.FakeTTS speech, raw PCM16 mono at
// rate and speed (FakeTTS's Speed, 1 for its own pace), to a file in t's
// temporary directory and returns its path and samples.
func fakeSpeech(t *testing.T, text string, rate int, speed float64) (string, []int16) {
	t.Helper()
	c, err := fixtures.FakeTTS().Synthesize(context.Background(), voicetest.SpeechRequest{Text: text, Rate: rate, Speed: speed})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "speech.pcm")
	if err := os.WriteFile(path, pcm.EncodePCM16(nil, c.Samples), 0o600); err != nil {
		t.Fatal(err)
	}
	return path, c.Samples
}

// TestRealtimeDoubleWithAgentsSDK drives realtimepeer with OpenAI's Agents
// SDK for Realtime (@openai/agents-realtime, WebSocket transport, as on a
// Node server): handshake and session.update, a greeting, a spoken turn
// the server detects, transcribes (the SDK retrieves the item) and answers
// after a client tool call, a text turn the user's speech interrupts (the
// server cancels, the SDK truncates), and an interrupt from the client
// (response.cancel and truncate). Every event the double sends must pass
// the SDK's schemas: the SDK reports a parse failure as an error.
func TestRealtimeDoubleWithAgentsSDK(t *testing.T) {
	t.Parallel()
	const said = "a table for two"
	speech, _ := fakeSpeech(t, said, realtimepeer.Rate, 1)
	s := realtimepeer.New(t, realtimepeer.Config{
		APIKey:   "sk-sdkcheck",
		Greeting: "Hello.",
		Turns: []realtimepeer.Turn{
			// The replies are sent at twice real time (ChunkDelay 50 ms
			// a 100 ms delta), as the service sends faster than it plays
			// (the SDK and the script count playback from the first
			// delta). Those not interrupted are a word long (400 ms of
			// audio, 200 ms to send). The two the user or the client
			// interrupts must still be coming when the interruption
			// does: they are long (about 40 words, 7 s to send, as at
			// real time before), which costs nothing when it comes.
			{ToolCall: &realtimepeer.ToolCall{Name: "lookup_table", Arguments: `{"party":2}`}, Reply: "Booked."},
			{Reply: "Tonight we have soup, fish, a pie, three salads, two pastas, a risotto, a curry, four kinds of bread, cheese from the hills, a stew, a tart, grilled lamb, roast chicken, a plate of greens and a long list of desserts for you."},
			{Reply: "Sure."},
			{Reply: "We have cake, ice cream, fruit, cheese, tarts, pies, puddings, biscuits, sorbets, a trifle, a crumble, three kinds of custard, chocolates from the town, honey from the hills and a very long list of other sweet things."},
			{Reply: "Done."},
		},
		ChunkDelay: 50 * time.Millisecond,
	})
	r := runNode(t, "realtime.mjs",
		"SDKCHECK_URL="+s.URL+"?model=gpt-realtime",
		"SDKCHECK_KEY=sk-sdkcheck",
		"SDKCHECK_SPEECH="+speech)
	r.checkFailures(t)
	if n := r.Counts["error"]; n > 0 {
		var errs []string
		r.value(t, "errors", &errs)
		t.Errorf("the SDK reported %d errors: %q", n, errs)
	}

	// What the SDK heard and did.
	var ends []string
	r.value(t, "agent_end", &ends)
	if len(ends) < 5 || ends[0] != "Hello." || ends[2] != "Booked." {
		t.Errorf("the SDK's agent_end texts = %q; want the greeting, then the tool call's and the answer after it", ends)
	}
	var args []map[string]int
	r.value(t, "tool_args", &args)
	if len(args) != 1 || args[0]["party"] != 2 {
		t.Errorf("the lookup_table tool ran with %v, want one call with party 2", args)
	}
	var history []struct {
		Type, Role string
		Content    []struct{ Type, Transcript string }
	}
	r.value(t, "final_history", &history)
	// The user's audio items: the turn the server detected, the barge-in,
	// and the SDK's own commit, each transcribed (the SDK retrieves the
	// item).
	var userTranscripts []string
	for _, it := range history {
		if it.Role == "user" {
			for _, c := range it.Content {
				if c.Type == "input_audio" {
					userTranscripts = append(userTranscripts, c.Transcript)
				}
			}
		}
	}
	if !slices.Equal(userTranscripts, []string{said, said, said}) {
		t.Errorf("the SDK's history has user audio transcripts %q, want %q three times (retrieved after transcription)", userTranscripts, said)
	}
	for _, ev := range []string{"session.created", "session.updated", "input_audio_buffer.speech_started", "input_audio_buffer.committed",
		"conversation.item.input_audio_transcription.completed", "conversation.item.retrieved", "response.content_part.added",
		"response.function_call_arguments.done", "conversation.item.truncated"} {
		if r.Counts["event:"+ev] == 0 {
			t.Errorf("the SDK never saw %s", ev)
		}
	}

	// What the double saw.
	ss := ended(t, s.Wait, 0, func(ss realtimepeer.Session) bool { return ss.Ended })
	if len(ss.Errors) > 0 {
		t.Errorf("the double rejected what the SDK sent: %q", ss.Errors)
	}
	if len(ss.ToolOutputs) != 1 || ss.ToolOutputs[0].Output != "table 7 is free" {
		t.Errorf("tool outputs = %+v, want the SDK's one result", ss.ToolOutputs)
	}
	if len(ss.Truncates) != 2 || ss.Cancelled != 2 || ss.Cancels != 1 {
		t.Errorf("%d truncates, %d responses cancelled (%d by response.cancel); want 2, 2 and 1", len(ss.Truncates), ss.Cancelled, ss.Cancels)
	}
	if len(ss.Texts) != 2 {
		t.Errorf("user texts = %q, want the SDK's two messages", ss.Texts)
	}
	if len(ss.Deleted) != 1 {
		t.Errorf("deleted items %q, want the one the SDK's history edit removed", ss.Deleted)
	}
	if len(ss.Commits) != 3 || ends[len(ends)-1] != "Done." {
		t.Errorf("%d commits (want 2 by the server's turn detection, 1 by the SDK); last reply %q", len(ss.Commits), ends[len(ends)-1])
	}
}
