package voicetest

import (
	"fmt"
	"io"
	"time"
)

// summaryQuality is what the suite summary keeps of one scenario's
// Metrics.
type summaryQuality struct {
	TTFB          []time.Duration `json:"ttfb,omitempty"`
	TalkOvers     int             `json:"talk_overs,omitempty"`
	TalkOver      time.Duration   `json:"talk_over,omitempty"`
	UserOvers     int             `json:"user_overs,omitempty"`
	AgentOvers    int             `json:"agent_overs,omitempty"`
	LongestPause  time.Duration   `json:"longest_pause,omitempty"`
	PauseTurn     int             `json:"pause_turn,omitempty"`
	DeadAir       time.Duration   `json:"dead_air,omitempty"`
	Unfilled      int             `json:"unfilled,omitempty"`
	AgentWords    int             `json:"agent_words,omitempty"`
	AgentRated    int             `json:"agent_rated,omitempty"` // the words AgentWPM is over
	AgentSpeech   time.Duration   `json:"agent_speech,omitempty"`
	AgentTurns    int             `json:"agent_turns,omitempty"`
	WEREdits      int             `json:"wer_edits,omitempty"`
	WERWords      int             `json:"wer_words,omitempty"`
	WERMessages   int             `json:"wer_messages,omitempty"`
	LateAudio     int             `json:"late_audio,omitempty"`
	DroppedFrames int64           `json:"dropped_frames,omitempty"`
}

func newSummaryQuality(m Metrics) summaryQuality {
	q := summaryQuality{TalkOvers: m.TalkOver.Count, TalkOver: m.TalkOver.Time,
		UserOvers: m.TalkOver.ByUser.Count, AgentOvers: m.TalkOver.ByAgent.Count,
		LongestPause: m.Pauses.Longest.Duration(), PauseTurn: m.Pauses.Longest.Turn,
		DeadAir: m.Pauses.DeadAir, Unfilled: m.Pauses.Unfilled,
		AgentWords: m.Speech.AgentWords, AgentSpeech: m.Speech.AgentSpeech, AgentTurns: m.Speech.AgentTurns,
		AgentRated: m.Speech.AgentRatedWords, LateAudio: m.LateAudio.Count}
	for _, t := range m.Turns {
		if t.HasTTFB {
			q.TTFB = append(q.TTFB, t.TTFB)
		}
	}
	if w := m.Speech.WER; w != nil {
		q.WEREdits, q.WERWords, q.WERMessages = w.Errors.Edits(), w.Errors.Words, w.Messages
	}
	if m.Wire != nil {
		q.DroppedFrames = m.Wire.DroppedFrames
	}
	return q
}

// writeSummaryQuality prints the suite's conversation quality: first
// audio per turn, talk-over, pauses (with the scenario of the longest),
// speaking rate and word error rate, each line only when something was
// measured.
func writeSummaryQuality(w io.Writer, recs []summaryRecord) {
	var ttfb []time.Duration
	var total summaryQuality
	longest, longestName := summaryQuality{}, ""
	for _, r := range recs {
		q := r.Quality
		ttfb = append(ttfb, q.TTFB...)
		total.TalkOvers += q.TalkOvers
		total.TalkOver += q.TalkOver
		total.UserOvers += q.UserOvers
		total.AgentOvers += q.AgentOvers
		total.DeadAir += q.DeadAir
		total.Unfilled += q.Unfilled
		total.AgentWords += q.AgentWords
		total.AgentRated += q.AgentRated
		total.AgentSpeech += q.AgentSpeech
		total.AgentTurns += q.AgentTurns
		total.WEREdits += q.WEREdits
		total.WERWords += q.WERWords
		total.WERMessages += q.WERMessages
		total.LateAudio += q.LateAudio
		total.DroppedFrames += q.DroppedFrames
		if q.LongestPause > longest.LongestPause {
			longest, longestName = q, r.Test
		}
	}
	if p := SummarizeDurations(ttfb); p.N > 0 {
		fmt.Fprintf(w, "  first audio after the user stopped, over %d turns: p50 %dms, p95 %dms, max %dms\n",
			p.N, p.P50.Milliseconds(), p.P95.Milliseconds(), p.Max.Milliseconds())
	}
	if total.AgentWords == 0 && total.TalkOvers == 0 && longestName == "" {
		return
	}
	fmt.Fprintf(w, "  talk-over: %d (%d by the user, %d by the agent), %dms in all; dead air %dms; %d unfilled gaps",
		total.TalkOvers, total.UserOvers, total.AgentOvers, total.TalkOver.Milliseconds(), total.DeadAir.Milliseconds(), total.Unfilled)
	if longestName != "" {
		fmt.Fprintf(w, "; longest pause %dms (%s, turn %d)", longest.LongestPause.Milliseconds(), longestName, longest.PauseTurn)
	}
	fmt.Fprintln(w)
	if total.AgentTurns > 0 {
		fmt.Fprintf(w, "  agent speech: %.1f words a turn", float64(total.AgentWords)/float64(total.AgentTurns))
		if total.AgentSpeech > 0 {
			fmt.Fprintf(w, ", %.0f words a minute", float64(total.AgentRated)/total.AgentSpeech.Minutes())
		}
		if total.WERMessages > 0 {
			fmt.Fprintf(w, ", word error rate %.1f%% (%d edits in %d words of %d messages)",
				100*WordErrors{Substitutions: total.WEREdits, Words: total.WERWords}.Rate(), total.WEREdits, total.WERWords, total.WERMessages)
		}
		fmt.Fprintln(w)
	}
	if total.LateAudio > 0 || total.DroppedFrames > 0 {
		fmt.Fprintf(w, "  agent audio: %d late chunks, %d frames dropped by the adapters\n", total.LateAudio, total.DroppedFrames)
	}
}
