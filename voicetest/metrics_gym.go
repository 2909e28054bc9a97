package voicetest

import (
	"slices"
	"time"
)

// GymMetrics are the per-run numbers LayerCode Gym reports, measured the
// way Gym measures them, so that a team moving from Gym can read its old
// numbers beside voicetest's own. They are named apart from voicetest's
// latency on purpose, because they measure something else:
//
//   - Gym's TTFAB ("time to first audio byte") of an agent reply runs
//     from the agent's first event of the reply (text, data, a tool
//     call, audio) to its first audio. It hides the backend's latency:
//     an agent that thinks for three seconds and then sends its text and
//     audio together has a TTFAB near zero. voicetest's Latency and TTFB
//     run from the end of the caller's speech, and include it.
//   - Turn durations are how long each party spoke in a turn: a user
//     utterance from its start to its end, an agent reply from the start
//     of its first message in the turn to the end of its last.
//   - Word counts are per turn, for each party, over the turns in which
//     it said any words.
//
// Mean and median (P50) are given for each, as Gym's summaries give them.
type GymMetrics struct {
	// TTFAB summarises, over the agent replies that had audio, the time
	// from the reply's first event to its first audio (Turns[i].TTFAB).
	TTFAB Percentiles `json:"ttfab"`
	// UserTurn and AgentTurn summarise the turn durations of each party.
	UserTurn  Percentiles `json:"user_turn"`
	AgentTurn Percentiles `json:"agent_turn"`
	// UserWords and AgentWords count each party's words.
	UserWords  WordStats `json:"user_words"`
	AgentWords WordStats `json:"agent_words"`
	// Turns holds the numbers of each turn that has any, in turn order
	// (turn 0 is the greeting).
	Turns []GymTurn `json:"turns,omitempty"`
}

// GymTurn is one turn's GymMetrics.
type GymTurn struct {
	Turn int `json:"turn"`
	// TTFAB is the time from the agent's first event of its reply in the
	// turn to its first audio; HasTTFAB is false when no audio came.
	TTFAB    time.Duration `json:"ttfab"`
	HasTTFAB bool          `json:"has_ttfab"`
	// UserDuration and AgentDuration are how long each party spoke in
	// the turn (zero when it did not).
	UserDuration  time.Duration `json:"user_duration"`
	AgentDuration time.Duration `json:"agent_duration"`
	// UserWords and AgentWords count the words each said in the turn.
	UserWords  int `json:"user_words"`
	AgentWords int `json:"agent_words"`
}

// WordStats count one party's words: the total, and per turn in which
// it said any, their number, mean and median (of an even count, the mean
// of the two middle values).
type WordStats struct {
	Total  int     `json:"total"`
	Turns  int     `json:"turns"`
	Mean   float64 `json:"mean"`
	Median float64 `json:"median"`
}

// WaitMetrics count the simulated caller's waits under Config.TurnTaking
// (the user_wait events of the timeline).
type WaitMetrics struct {
	// Count is the number of waits; Time how long they lasted in all (a
	// wait the agent ended by speaking counts until it spoke).
	Count int           `json:"count"`
	Time  time.Duration `json:"time"`
	// Longest is the longest wait.
	Longest time.Duration `json:"longest"`
	// GaveUp counts the turns in which the caller stopped waiting at
	// TurnTaking.MaxWaits or MaxWait and spoke (user_wait_limit events).
	GaveUp int `json:"gave_up"`
}

// gymMetrics computes GymMetrics from the transcript, the word counts of
// its messages and the runner's per-turn notes.
func gymMetrics(st *State, tr []Message, words []int) GymMetrics {
	type acc struct {
		GymTurn
		agentStart, agentEnd time.Duration
		agent, user, seen    bool
	}
	last := -1
	for _, n := range st.notes.turns {
		last = max(last, n.turn)
	}
	for _, m := range tr {
		last = max(last, m.Turn)
	}
	if last < 0 {
		return GymMetrics{}
	}
	turns := make([]acc, last+1)
	get := func(turn int) *acc {
		if turn < 0 {
			turn = 0 // not produced by the runner; kept in range
		}
		turns[turn].seen = true
		turns[turn].Turn = turn
		return &turns[turn]
	}
	for _, n := range st.notes.turns {
		if n.hasEvent && n.hasAudio {
			a := get(n.turn)
			a.TTFAB, a.HasTTFAB = max(n.firstAudio-n.firstEvent, 0), true
		}
	}
	for i, m := range tr {
		if m.Injected {
			continue // put into the history, never said on the line
		}
		a := get(m.Turn)
		switch m.Role {
		case RoleUser:
			a.user = true
			a.UserDuration += max(m.End-m.Start, 0)
			a.UserWords += words[i]
		case RoleAgent:
			if !a.agent {
				a.agentStart, a.agentEnd = m.Start, m.End
			}
			a.agent = true
			a.agentStart, a.agentEnd = min(a.agentStart, m.Start), max(a.agentEnd, m.End)
			a.AgentDuration = max(a.agentEnd-a.agentStart, 0)
			if !m.AudioOnly {
				a.AgentWords += words[i]
			}
		}
	}
	var g GymMetrics
	// The per-turn values, each list with room for every turn, on one
	// array of durations and one of counts.
	n := len(turns)
	ds, ws := make([]time.Duration, 3*n), make([]int, 2*n)
	ttfab, user, agent := ds[:0:n], ds[n:n:2*n], ds[2*n:2*n]
	uw, aw := ws[:0:n], ws[n:n]
	g.Turns = make([]GymTurn, 0, n)
	for t := range turns {
		if !turns[t].seen {
			continue
		}
		a := &turns[t]
		g.Turns = append(g.Turns, a.GymTurn)
		if a.HasTTFAB {
			ttfab = append(ttfab, a.TTFAB)
		}
		if a.user {
			user = append(user, a.UserDuration)
		}
		if a.agent {
			agent = append(agent, a.AgentDuration)
		}
		if a.UserWords > 0 {
			uw = append(uw, a.UserWords)
		}
		if a.AgentWords > 0 {
			aw = append(aw, a.AgentWords)
		}
	}
	g.TTFAB = SummarizeDurations(ttfab)
	g.UserTurn, g.AgentTurn = SummarizeDurations(user), SummarizeDurations(agent)
	g.UserWords, g.AgentWords = wordStats(uw), wordStats(aw)
	return g
}

// wordStats summarises per (which it sorts).
func wordStats(per []int) WordStats {
	n := len(per)
	if n == 0 {
		return WordStats{}
	}
	s := per
	slices.Sort(s)
	w := WordStats{Turns: n}
	for _, x := range s {
		w.Total += x
	}
	w.Mean = float64(w.Total) / float64(n)
	if n%2 == 1 {
		w.Median = float64(s[n/2])
	} else {
		w.Median = float64(s[n/2-1]+s[n/2]) / 2
	}
	return w
}

// waitMetrics counts the user_wait and user_wait_limit events of the
// timeline.
func waitMetrics(tl []Event) WaitMetrics {
	var w WaitMetrics
	for _, e := range tl {
		switch e.Type {
		case EventUserWaitLimit:
			w.GaveUp++
			continue
		case EventUserWait:
		default:
			continue
		}
		w.Count++
		w.Time += e.Duration
		w.Longest = max(w.Longest, e.Duration)
	}
	return w
}

// gym adds the attributes of GymMetrics: each summary only when it
// measured something.
func (a *attrs) gym(g GymMetrics) {
	if g.TTFAB.N > 0 {
		a.ms("voicetest.gym_ttfab_mean_ms", g.TTFAB.Mean)
		a.ms("voicetest.gym_ttfab_p50_ms", g.TTFAB.P50)
	}
	// The keys are literals: put together per call, they cost an
	// allocation each for every scenario.
	for _, p := range []struct {
		mean, p50 string
		p         Percentiles
	}{
		{"voicetest.gym_user_turn_mean_ms", "voicetest.gym_user_turn_p50_ms", g.UserTurn},
		{"voicetest.gym_agent_turn_mean_ms", "voicetest.gym_agent_turn_p50_ms", g.AgentTurn},
	} {
		if p.p.N > 0 {
			a.ms(p.mean, p.p.Mean)
			a.ms(p.p50, p.p.P50)
		}
	}
	for _, w := range []struct {
		total, mean, p50 string
		w                WordStats
	}{
		{"voicetest.gym_user_words", "voicetest.gym_user_words_mean", "voicetest.gym_user_words_p50", g.UserWords},
		{"voicetest.gym_agent_words", "voicetest.gym_agent_words_mean", "voicetest.gym_agent_words_p50", g.AgentWords},
	} {
		if w.w.Turns > 0 {
			a.int(w.total, int64(w.w.Total))
			a.float(w.mean, w.w.Mean, 1)
			a.float(w.p50, w.w.Median, 1)
		}
	}
}
