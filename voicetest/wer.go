package voicetest

import "strings"

// Hearing is what Config.AgentSTT heard in the audio of an agent message
// whose words the agent also sent as text (Config.MeasureAgentWER), and
// how far it is from that text.
type Hearing struct {
	// Text is the STT's transcript of the message's audio ("" when it
	// heard no words).
	Text string `json:"text"`
	// Errors compares Text with the message's own text.
	Errors WordErrors `json:"errors"`
}

// WordErrors counts the word edits (substitutions, deletions, insertions)
// of a minimal alignment of a hypothesis with a reference of Words words,
// both normalised by NormalizeText first (case, punctuation and number
// words versus digits do not count).
type WordErrors struct {
	Substitutions int `json:"substitutions"`
	Deletions     int `json:"deletions"`
	Insertions    int `json:"insertions"`
	// Words is the number of words of the reference.
	Words int `json:"words"`
}

// Edits returns the number of word edits.
func (w WordErrors) Edits() int { return w.Substitutions + w.Deletions + w.Insertions }

// Rate returns the word error rate, Edits / Words: 0 for an empty
// reference and hypothesis, 1 for words heard against an empty
// reference. It can exceed 1 when many words were inserted.
func (w WordErrors) Rate() float64 {
	switch {
	case w.Words > 0:
		return float64(w.Edits()) / float64(w.Words)
	case w.Insertions > 0:
		return 1
	}
	return 0
}

func (w WordErrors) plus(o WordErrors) WordErrors {
	return WordErrors{Substitutions: w.Substitutions + o.Substitutions, Deletions: w.Deletions + o.Deletions,
		Insertions: w.Insertions + o.Insertions, Words: w.Words + o.Words}
}

// CompareWords aligns hypothesis with reference word by word, after
// NormalizeText on both, and counts the edits (each costs 1; of equal-cost
// alignments, substitutions are preferred).
func CompareWords(reference, hypothesis string) WordErrors {
	ref := strings.Fields(NormalizeText(reference))
	hyp := strings.Fields(NormalizeText(hypothesis))
	// One row of the edit-distance table at a time; each cell keeps its
	// cost and how many of each edit reach it.
	type cell struct{ sub, del, ins int }
	cost := func(c cell) int { return c.sub + c.del + c.ins }
	row := make([]cell, len(hyp)+1)
	for j := range row {
		row[j] = cell{ins: j}
	}
	for i := 1; i <= len(ref); i++ {
		diag := row[0]
		row[0] = cell{del: i}
		for j := 1; j <= len(hyp); j++ {
			up := row[j]
			best := diag
			if ref[i-1] != hyp[j-1] {
				best.sub++
			}
			if c := (cell{sub: up.sub, del: up.del + 1, ins: up.ins}); cost(c) < cost(best) {
				best = c
			}
			if l := row[j-1]; cost(l)+1 < cost(best) {
				best = cell{sub: l.sub, del: l.del, ins: l.ins + 1}
			}
			diag, row[j] = up, best
		}
	}
	end := row[len(hyp)]
	return WordErrors{Substitutions: end.sub, Deletions: end.del, Insertions: end.ins, Words: len(ref)}
}
