package voicetest_test

import (
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/voicetest-go/voicetest/internal/inproc"
	"github.com/voicetest-go/voicetest/pcm"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/fixtures"
)

// keepingTTS is fixtures.ToneTTS that keeps each chunk it returned and a
// copy of its samples, to tell whether anyone wrote into them.
type keepingTTS struct {
	tts      fixtures.ToneTTS
	mu       sync.Mutex
	returned []pcm.Chunk
	copies   [][]int16
}

func (k *keepingTTS) Synthesize(ctx context.Context, req voicetest.SpeechRequest) (pcm.Chunk, error) {
	c, err := k.tts.Synthesize(ctx, req)
	if err == nil {
		k.mu.Lock()
		k.returned = append(k.returned, c)
		k.copies = append(k.copies, slices.Clone(c.Samples))
		k.mu.Unlock()
	}
	return c, err
}

// keepingPiecesTTS is keepingTTS that also gives the runner its speech
// word by word (fixtures.ToneTTS's shared pieces), keeping each piece
// and a copy of its samples.
type keepingPiecesTTS struct {
	keepingTTS
	pieces [][]pcm.Chunk
}

func (k *keepingPiecesTTS) SynthesizePieces(ctx context.Context, tok inproc.Token, req voicetest.SpeechRequest) ([]pcm.Chunk, error) {
	ps, err := k.tts.SynthesizePieces(ctx, tok, req)
	if err == nil {
		k.mu.Lock()
		k.pieces = append(k.pieces, ps)
		for _, p := range ps {
			k.returned = append(k.returned, p)
			k.copies = append(k.copies, slices.Clone(p.Samples))
		}
		k.mu.Unlock()
	}
	return ps, err
}

// TestRunnerNeverWritesTheUserAudio: the runner sends the user's audio as
// the TTS returned it and keeps it in the Result without a copy
// (Segment.Audio of a user segment), so a TTS may return audio it shares
// (fixtures.ToneTTS keeps views of its tones in it). Nothing of a run may
// write into it: not the sending, the agent, the effects or background
// that take it as input, nor the Result's mixing and artifacts.
func TestRunnerNeverWritesTheUserAudio(t *testing.T) {
	reply := fixtures.Reply{Text: "Here is answer number one for you"}
	for _, tc := range []struct {
		name string
		cfg  func(tts voicetest.TTS) voicetest.Config
	}{
		{"scripted", func(tts voicetest.TTS) voicetest.Config {
			return voicetest.Config{Agent: fixtures.ScriptedAgent(reply, reply), UserVoice: tts, Script: []voicetest.Step{
				voicetest.UserSays("This is question number one"), voicetest.AgentTurn(),
				voicetest.UserSays("This is question number two"), voicetest.AgentTurn(),
			}}
		}},
		{"fast", func(tts voicetest.TTS) voicetest.Config {
			return voicetest.Config{Agent: fixtures.ScriptedAgent(reply), UserVoice: tts, Pacing: voicetest.PaceFast, Script: []voicetest.Step{
				voicetest.UserSays("This is question number one"), voicetest.AgentTurn(),
			}}
		}},
		{"echo", func(tts voicetest.TTS) voicetest.Config {
			return voicetest.Config{Agent: fixtures.EchoAgent(), UserVoice: tts, Script: []voicetest.Step{
				voicetest.UserSays("Say it back to me"), voicetest.AgentTurn(),
			}}
		}},
		{"effects", func(tts voicetest.TTS) voicetest.Config {
			return voicetest.Config{Agent: fixtures.ScriptedAgent(reply), UserVoice: tts, Effects: pcm.Chain(pcm.Gain(-6), pcm.TelephoneBand()), Script: []voicetest.Step{
				voicetest.UserSays("This is question number one"), voicetest.AgentTurn(),
			}}
		}},
		{"background", func(tts voicetest.TTS) voicetest.Config {
			return voicetest.Config{Agent: fixtures.ScriptedAgent(reply), UserVoice: tts, Background: voicetest.Background{Scene: pcm.Car(), Level: -30, Seed: 9}, Script: []voicetest.Step{
				voicetest.UserSays("This is question number one"), voicetest.AgentTurn(),
			}}
		}},
	} {
		for _, pieces := range []bool{false, true} {
			name := tc.name
			if pieces {
				name += "/pieces"
			}
			t.Run(name, func(t *testing.T) {
				ptts := &keepingPiecesTTS{}
				tts := &ptts.keepingTTS
				var voice voicetest.TTS = tts
				if pieces {
					voice = ptts
				}
				res, err := voicetest.Run(t.Context(), tc.cfg(voice))
				if err != nil || res.Turns == 0 {
					t.Fatalf("run: %v, %d turns", err, res.Turns)
				}
				// What a reader of the Result does with the audio.
				res.Recording.Mixed()
				if _, err := res.Recording.MixedWAV(); err != nil {
					t.Fatal(err)
				}
				if err := res.Save(t.TempDir()); err != nil {
					t.Fatal(err)
				}
				if len(tts.returned) == 0 {
					t.Fatal("the TTS was never called")
				}
				for i, c := range tts.returned {
					if !slices.Equal(c.Samples, tts.copies[i]) {
						t.Errorf("the audio of the TTS's call %d was written into during the run", i)
					}
				}
				// The runner takes the pieces exactly when nothing changes the
				// speech on its way (no effects, no background).
				if plain := tc.name != "effects" && tc.name != "background"; pieces && (len(ptts.pieces) > 0) != plain {
					t.Errorf("the runner asked for pieces %d times; want them only without effects or background", len(ptts.pieces))
				}
				if tc.name != "scripted" {
					return
				}
				var users []pcm.Chunk
				for _, s := range res.Recording.Segments {
					if s.Role == voicetest.RoleUser {
						users = append(users, s.Audio())
					}
				}
				if !pieces {
					// The Result keeps the user's audio as the TTS returned it.
					if len(users) != len(tts.returned) {
						t.Fatalf("%d user segments, %d TTS calls", len(users), len(tts.returned))
					}
					for i, u := range users {
						if len(u.Samples) == 0 || &u.Samples[0] != &tts.returned[i].Samples[0] {
							t.Errorf("user segment %d is not the TTS's audio itself", i)
						}
					}
					return
				}
				// The Result's user audio is the pieces laid out.
				if len(users) != len(ptts.pieces) {
					t.Fatalf("%d user segments, %d TTS calls", len(users), len(ptts.pieces))
				}
				for i, u := range users {
					var want []int16
					for _, p := range ptts.pieces[i] {
						want = append(want, p.Samples...)
					}
					if !slices.Equal(u.Samples, want) {
						t.Errorf("user segment %d (%d samples) is not the TTS's pieces laid out (%d)", i, len(u.Samples), len(want))
					}
				}
			})
		}
	}
}
