package restaurant_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/voicetest-go/voicetest/adapters/handler"
	"github.com/voicetest-go/voicetest/examples/restaurant"
	"github.com/voicetest-go/voicetest/pcm"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/speech"
)

// TestNoisyCafeCellPhone: the persona caller (caller_test.go) books a
// table from a busy cafe on a mobile phone, talking to the restaurant
// agent in audio mode at the phone's 8 kHz. The cafe plays for the whole
// call (voicetest.Config.Background): under the caller's speech, and
// between turns while the agent speaks; everything goes through the cell
// phone's channel (pcm.CellPhone: a narrowband codec, network jitter,
// dropouts). The agent hears it through pocketsphinx with its phrase
// grammar (speech.WithPhrases), which takes 8 kHz audio as it is.
//
// The agent copes at all only because its voice activity detector is
// told what a cafe on a cell phone sounds like (handler.WithVAD). With
// the handler's default level threshold the cafe between turns is
// speech: it barges in on every reply. With pcm's detector at its
// defaults (6 dB over the noise floor, anything over −50 dBFS) the
// babble still passes for speech. At 12 dB over the floor, and nothing
// under 12 dB above the cafe's level, it hears the caller only, and
// transcribes just the speech it found, not the cafe around it.
//
// Even so the agent mishears, which is what this test is for. When it
// was recorded, with the cafe's steady part 30 dB under flite's voice
// (its clinks and talkers come louder), the agent heard "two" as "eight"
// and "seven thirty" as "eight thirty", took "The name is Garcia" for a
// new time ("today at eight"), missed whole lines ("Are you still
// there?"), and in call 2 read back bookings the caller never asked for;
// a caller who says yes to any read-back would have let them through.
// This caller (carefulCaller) checks the read-back and says "No, that's
// wrong", so the test holds the agent to this: on a bad line it may fail
// to book, but it never books what the caller did not confirm. Call 1
// books correctly; calls 2 and 3 run out of turns. (At −45 dBFS no call
// books: pocketsphinx is not robust to noise, even with a grammar.)
//
// The agent runs in process, on virtual time, so that the background
// frames between turns, and the audio each transcription gets, are the
// same on every run: every engine call replays from the committed cache
// (a call over the Twilio server on the real clock would cut the cafe at
// slightly different instants each run, and miss the cache).
func TestNoisyCafeCellPhone(t *testing.T) {
	t.Parallel()
	want := restaurant.Booking{Party: 2, Day: "friday", Time: "19:30", Name: "Garcia"}
	for _, call := range []struct {
		seed   uint64
		booked bool
	}{{1, true}, {2, false}, {3, false}} {
		t.Run(fmt.Sprintf("call%d", call.seed), func(t *testing.T) {
			t.Parallel()
			tts := speech.TTSForTest(t, "flite/slt")
			// The agent's ears: pocketsphinx takes the phone's 8 kHz
			// audio itself (it widens it) and the agent's phrase grammar
			// as an option.
			ears := speech.STTForTest(t, "pocketsphinx", speech.WithPhrases(restaurant.CallerPhrases()...))
			bg := voicetest.BackgroundOf(pcm.NoisyCafeOnCellPhone(call.seed), call.seed)
			bg.Level = -50
			vad := pcm.DefaultVADConfig()
			vad.ThresholdDB, vad.MinLevelDBFS = 12, bg.Level+12
			book := &restaurant.Book{}
			user := &carefulCaller{caller: caller{party: "A table for two, please.", when: "Friday at seven thirty.", name: "The name is Garcia."},
				readBack: []string{"two", "friday", "seven thirty", "garcia"}}
			res := voicetest.Scenario(t, voicetest.Config{
				Agent: restaurant.Agent(book, handler.WithThinkTime(thinkTime), handler.WithVAD(vad),
					handler.AudioMode(tts, ears)),
				User:       user,
				MaxTurns:   12,
				UserVoice:  tts,
				Rate:       restaurant.PhoneRate,
				Background: bg,
			})
			if !res.Success {
				t.Fatalf("scenario failed: %v\n%s", res.Err, res.TranscriptText())
			}
			got := book.Reservations()
			for _, r := range got {
				if r.Booking != want {
					t.Errorf("the agent booked %+v, which the caller never confirmed (it refused %d read-backs)", r.Booking, user.wrong)
				}
			}
			if booked := len(got) == 1; booked != call.booked {
				t.Errorf("booked: %v, want %v (as recorded); reservations %+v, %d read-backs refused", booked, call.booked, got, user.wrong)
			}
			t.Logf("%d reservations, %d wrong read-backs refused, %d turns", len(got), user.wrong, res.Turns)
			// The caller's audio carries the cafe: no digital silence
			// before the first word.
			for _, s := range res.Recording.Segments {
				if s.Role == voicetest.RoleUser && pcm.Peak(s.Audio().Slice(0, 20*time.Millisecond)) == 0 {
					t.Errorf("turn %d: the caller's first 20 ms are digital silence; want the cafe", s.Turn)
				}
			}
		})
	}
}

// carefulCaller is the persona caller who also checks the agent's
// read-back: it confirms only a booking that has all of readBack in it
// (as the test hears the agent), and otherwise says it is wrong.
type carefulCaller struct {
	caller
	readBack []string
	wrong    int // read-backs refused
}

// NextUtterance answers as caller does, but refuses a wrong read-back.
func (c *carefulCaller) NextUtterance(ctx context.Context, st *voicetest.State) (voicetest.Utterance, error) {
	last := strings.ToLower(st.LastAgentText())
	if strings.Contains(last, "is that right") {
		for _, w := range c.readBack {
			if !strings.Contains(last, w) {
				c.wrong++
				c.said = 0 // a new attempt
				return voicetest.Utterance{Text: "No, that's wrong."}, nil
			}
		}
	}
	return c.caller.NextUtterance(ctx, st)
}
