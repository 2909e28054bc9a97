package judges_test

import (
	"context"
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/voicetest-go/voicetest/adapters/handler"
	"github.com/voicetest-go/voicetest/internal/peers/fakeopenai"
	"github.com/voicetest-go/voicetest/judges"
	"github.com/voicetest-go/voicetest/pcm"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/cache"
	"github.com/voicetest-go/voicetest/voicetest/fixtures"
)

func TestCriteriaJudgeWithoutDescription(t *testing.T) {
	srv := fakeopenai.New(t)
	srv.QueueChat(verdict("final", "pass"))
	cfg := bargeInConfig()
	cfg.Description = "A caller barges in on a long answer."
	st := run(t, cfg).State
	final(t, judges.Criteria("The agent stops when interrupted").WithLLM(newLLM(t, srv, t.TempDir(), cache.Off)).WithoutDescription(), st)
	_, user := messages(chatRequests(t, srv)[0])
	assert.NotContains(t, user, "barges in on a long answer")
	assert.NotContains(t, user, "<scenario>")
}

// TestTimelineJudgeThroughTheCache: a judge asked whether the agent let
// the caller finish sees the timeline (who spoke when, the talk-over and
// who gave way, the pauses, latencies); its verdict is recorded through
// the cache from the loopback OpenAI-compatible server and replays with no
// server. A conversation with other timings is another question.
func TestTimelineJudgeThroughTheCache(t *testing.T) {
	cfg := bargeInConfig()
	cfg.Description = "A caller barges in on a long answer."
	st := run(t, cfg).State
	crit := "The agent stops talking soon after the caller barges in"
	dir := t.TempDir()

	srv := fakeopenai.New(t)
	srv.QueueChat(verdict("final", "pass"))
	j := judges.Criteria(crit).WithTimeline()
	v := final(t, j.WithLLM(newLLM(t, srv, dir, cache.Record)), st)
	require.Equal(t, voicetest.StatusPass, v.Status())
	reqs := chatRequests(t, srv)
	require.Len(t, reqs, 1)
	sys, user := messages(reqs[0])
	assert.Contains(t, sys, "A timeline follows the transcript")
	for _, want := range []string{
		"<scenario>\nA caller barges in on a long answer.\n</scenario>",
		"Timeline (seconds from the start of the call):\n<timeline>\n",
		`[turn 0] 0.20s–1.00s agent speaks: "Hello there"`,
		"[turn 1] 1.40s–1.70s silence of 0.30s: the user waits for the agent",
		`[turn 1] 1.70s–2.25s agent speaks, cut short: "one two" (0.30s after the user stopped)`,
		"[turn 1] 2.10s the user barges in; the agent went quiet 0.15s later and spoke again 1.00s after the barge-in",
		"[turn 1] 2.10s–2.25s both speak for 0.15s: the user spoke over the agent; the agent gave way",
		"[turn 2] 3.90s–5.90s silence of 2.00s: after the agent",
		"- response latency over 2 replies: median 0.25s, p90 0.30s, slowest 0.30s",
		"- both spoke at once 1 times for 0.15s in all (the user over the agent 1, the agent over the user 0)",
		"- longest silence 2.00s; 2.50s of silence in all; 0 times the user stopped and the agent did not answer",
		"</timeline>",
	} {
		assert.Contains(t, user, want)
	}
	assert.Equal(t, judges.RenderTimeline(st, 0), user[strings.Index(user, "<timeline>\n")+len("<timeline>\n"):strings.Index(user, "</timeline>")])
	srv.Close()

	// Replay: no server, the same verdict.
	v2 := final(t, j.WithLLM(newLLM(t, nil, dir, cache.Replay)), st)
	assert.Equal(t, v, v2)

	// Without the timeline the question differs: a miss.
	_, err := j.WithLLM(newLLM(t, nil, dir, cache.Replay)).WithoutDescription().Evaluate(t.Context(), voicetest.JudgeRequest{State: st, Final: true})
	var miss *cache.MissError
	require.True(t, errors.As(err, &miss), "err = %v", err)

	// The same words, said 100 ms later: another timeline, another question.
	slow := bargeInConfig()
	slow.Description = cfg.Description
	slow.Agent = slowerGreeting()
	st2 := run(t, slow).State
	_, err = j.WithLLM(newLLM(t, nil, dir, cache.Replay)).Evaluate(t.Context(), voicetest.JudgeRequest{State: st2, Final: true})
	require.True(t, errors.As(err, &miss), "err = %v", err)
}

// TestAudioJudgeThroughTheCache: a judge that listens sends the call's
// audio as OpenAI input_audio (a WAV of the mixed call at 16 kHz) to the
// loopback OpenAI-compatible server; its verdict is recorded through the
// cache, keyed by the audio's digest, and replays with no server. The
// same transcript said with other audio is another question, and so is
// a choice of turns.
func TestAudioJudgeThroughTheCache(t *testing.T) {
	cfg := bargeInConfig()
	st := run(t, cfg).State
	crit := "The agent sounds calm"
	dir := t.TempDir()

	srv := fakeopenai.New(t)
	var heard []fakeopenai.InputAudio
	srv.HandleChat(func(req fakeopenai.ChatRequest) (fakeopenai.ChatReply, error) {
		heard = req.Messages[1].Audio
		return verdict("final", "pass"), nil
	})
	j := judges.Criteria(crit).WithAudio().WithModel("gpt-4o-audio-preview")
	v := final(t, j.WithLLM(newLLM(t, srv, dir, cache.Record)), st)
	require.Equal(t, voicetest.StatusPass, v.Status())
	reqs := chatRequests(t, srv)
	require.Len(t, reqs, 1)
	assert.Equal(t, "gpt-4o-audio-preview", reqs[0]["model"])
	sys := reqs[0]["messages"].([]any)[0].(map[string]any)["content"].(string)
	assert.Contains(t, sys, "You also hear the call")
	require.Len(t, heard, 1, "one clip: the whole call")
	assert.Equal(t, "wav", heard[0].Format)
	assert.Contains(t, heard[0].TextBefore, "The audio of the whole call follows")
	// What the server got is the call, mixed and resampled to 16 kHz.
	got, err := pcm.DecodeWAV(heard[0].Data)
	require.NoError(t, err)
	want, err := pcm.Resample(st.Recording().Mixed(), judges.JudgeAudioRate)
	require.NoError(t, err)
	assert.Equal(t, judges.JudgeAudioRate, got.Rate)
	assert.Equal(t, want.Samples, got.Samples)
	assert.Equal(t, 3900*time.Millisecond, got.Duration(), "to the end of the last speech")
	srv.Close()

	// The cache entry holds the audio's digest, not its bytes.
	entries, _ := globEntries(dir)
	require.Len(t, entries, 1)
	entry := string(mustReadFile(t, entries[0]))
	assert.Contains(t, entry, "pcm16le/16000/sha256:")
	assert.NotContains(t, entry, base64.StdEncoding.EncodeToString(heard[0].Data[44:200]))

	// Replay: no server, the same verdict.
	v2 := final(t, j.WithLLM(newLLM(t, nil, dir, cache.Replay)), st)
	assert.Equal(t, v, v2)

	var miss *cache.MissError
	// The same words in other audio (a louder user): another digest.
	loud := bargeInConfig()
	loud.UserVoice = loudTTS{}
	st2 := run(t, loud).State
	require.Equal(t, transcriptLines(st), transcriptLines(st2), "the transcripts are the same")
	_, err = j.WithLLM(newLLM(t, nil, dir, cache.Replay)).Evaluate(t.Context(), voicetest.JudgeRequest{State: st2, Final: true})
	require.True(t, errors.As(err, &miss), "err = %v", err)
	// Chosen turns: other audio.
	_, err = judges.Criteria(crit).WithTurnAudio(1).WithModel("gpt-4o-audio-preview").WithLLM(newLLM(t, nil, dir, cache.Replay)).
		Evaluate(t.Context(), voicetest.JudgeRequest{State: st, Final: true})
	require.True(t, errors.As(err, &miss), "err = %v", err)
}

// TestTurnAudioJudge: WithTurnAudio sends the chosen turns' speech, one
// labelled clip per stretch of speech.
func TestTurnAudioJudge(t *testing.T) {
	st := run(t, bargeInConfig()).State
	srv := fakeopenai.New(t)
	var heard []fakeopenai.InputAudio
	srv.HandleChat(func(req fakeopenai.ChatRequest) (fakeopenai.ChatReply, error) {
		heard = req.Messages[1].Audio
		return verdict("final", "pass"), nil
	})
	final(t, judges.Criteria("The agent sounds calm").WithTurnAudio(1).WithLLM(newLLM(t, srv, t.TempDir(), cache.Off)), st)
	require.Len(t, heard, 2)
	assert.True(t, strings.HasSuffix(heard[0].TextBefore, "Turn 1, the user:"), heard[0].TextBefore)
	assert.Equal(t, "Turn 1, the agent:", heard[1].TextBefore)
	assert.Equal(t, 400*time.Millisecond, heard[0].Duration, `"hi" is one 400 ms word`)
	assert.Equal(t, 550*time.Millisecond, heard[1].Duration, "the agent's answer, cut 150 ms after the barge-in")

	// A text-only conversation cannot be heard: a clear error.
	_, err := judges.Criteria("x").WithAudio().WithLLM(newLLM(t, srv, t.TempDir(), cache.Off)).
		Evaluate(t.Context(), voicetest.JudgeRequest{State: bookingState(t), Final: true})
	require.ErrorContains(t, err, "the conversation has no audio (a text-only agent")
}

// slowerGreeting is bargeInConfig's agent greeting 100 ms later: the same
// words, other timings.
func slowerGreeting() voicetest.Agent {
	return fixtures.Fake(fixtures.FakeConfig{BargeIn: true, StopLatency: 150 * time.Millisecond,
		Greeting: fixtures.Reply{Text: "Hello there", Latency: 300 * time.Millisecond},
		Replies: []fixtures.Reply{
			{Text: "one two three four five", Latency: 300 * time.Millisecond},
			{Text: "okay then", Latency: 200 * time.Millisecond},
		}})
}

// loudTTS is toneTTS at twice the level: the same words, other audio.
type loudTTS struct{}

func (loudTTS) Synthesize(ctx context.Context, req voicetest.SpeechRequest) (pcm.Chunk, error) {
	c, err := toneTTS{}.Synthesize(ctx, req)
	for i, s := range c.Samples {
		c.Samples[i] = s * 2
	}
	return c, err
}

func transcriptLines(st *voicetest.State) []string {
	var out []string
	for _, m := range st.Transcript() {
		out = append(out, string(m.Role)+": "+m.Text)
	}
	return out
}

// globEntries returns the llm cache entries in dir.
func globEntries(dir string) ([]string, error) {
	return filepath.Glob(filepath.Join(dir, entryPattern))
}

func mustReadFile(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(name)
	require.NoError(t, err)
	return b
}

// TestJudgeSeesHandoffs: a handoff is a line of the transcript the judge
// reads, in order with the words and tool calls.
func TestJudgeSeesHandoffs(t *testing.T) {
	agent := handler.New(func(ctx context.Context, ev handler.Event, c *handler.Call) error {
		if _, ok := ev.(handler.TextEvent); !ok {
			return nil
		}
		if err := c.Say("Let me pass you to billing."); err != nil {
			return err
		}
		if err := c.Handoff("front desk", "billing"); err != nil {
			return err
		}
		return c.Say("Billing here.")
	})
	st := run(t, voicetest.Config{Agent: agent, Script: []voicetest.Step{voicetest.UserSays("A refund, please."), voicetest.AgentTurn()}}).State
	srv := fakeopenai.New(t)
	srv.QueueChat(verdict("final", "pass"))
	final(t, judges.Criteria("The agent hands refunds to billing").WithLLM(newLLM(t, srv, t.TempDir(), cache.Off)), st)
	_, user := messages(chatRequests(t, srv)[0])
	assert.Contains(t, user, `[turn 1] user: A refund, please.
[turn 1] agent: Let me pass you to billing. Billing here.
[turn 1] the conversation passes to agent "billing"`)
}
