package speech

import (
	"strconv"
	"strings"
	"unicode"
)

// WER is the result of comparing a hypothesis transcript with a reference.
type WER struct {
	// Rate is (Substitutions + Deletions + Insertions) / Reference; it can
	// exceed 1 when the hypothesis has many extra words. An empty
	// reference gives 0 for an empty hypothesis and 1 otherwise.
	Rate float64
	// Substitutions, Deletions and Insertions count the word edits of a
	// minimal alignment.
	Substitutions, Deletions, Insertions int
	// Reference is the number of reference words after normalisation.
	Reference int
}

// Errors returns the number of word edits.
func (w WER) Errors() int { return w.Substitutions + w.Deletions + w.Insertions }

// WordErrorRate compares hypothesis with reference word by word, after
// NormalizeWords on both, with a word-level Levenshtein alignment
// (substitution, deletion and insertion each cost 1).
func WordErrorRate(reference, hypothesis string) WER {
	return wordErrors(NormalizeWords(reference), NormalizeWords(hypothesis))
}

func wordErrors(ref, hyp []string) WER {
	type cell struct{ cost, sub, del, ins int }
	prev := make([]cell, len(hyp)+1)
	cur := make([]cell, len(hyp)+1)
	for j := range prev {
		prev[j] = cell{cost: j, ins: j}
	}
	for i := 1; i <= len(ref); i++ {
		cur[0] = cell{cost: i, del: i}
		for j := 1; j <= len(hyp); j++ {
			best := prev[j-1]
			if ref[i-1] != hyp[j-1] {
				best.cost++
				best.sub++
			}
			if d := prev[j]; d.cost+1 < best.cost {
				best = d
				best.cost++
				best.del++
			}
			if in := cur[j-1]; in.cost+1 < best.cost {
				best = in
				best.cost++
				best.ins++
			}
			cur[j] = best
		}
		prev, cur = cur, prev
	}
	end := prev[len(hyp)]
	w := WER{Substitutions: end.sub, Deletions: end.del, Insertions: end.ins, Reference: len(ref)}
	switch {
	case len(ref) > 0:
		w.Rate = float64(w.Errors()) / float64(len(ref))
	case len(hyp) > 0:
		w.Rate = 1
	}
	return w
}

// NormalizeWords splits text into lower-case words for comparison: numbers
// are spelled out ("42" → "forty two", "7:30" → "seven thirty", "3.5" →
// "three point five", "1,200" → "one thousand two hundred"), "&" becomes
// "and", "%" becomes "percent", hyphens separate words, and other
// punctuation is dropped (apostrophes inside words are kept: "don't").
func NormalizeWords(text string) []string {
	var words []string
	var tok strings.Builder
	flush := func() {
		if tok.Len() > 0 {
			words = append(words, normalizeToken(tok.String())...)
			tok.Reset()
		}
	}
	for _, r := range strings.ToLower(text) {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '\'' || r == '’' || r == ':' || r == '.' || r == ',':
			if r == '’' {
				r = '\''
			}
			tok.WriteRune(r)
		case r == '&':
			flush()
			words = append(words, "and")
		case r == '%':
			flush()
			words = append(words, "percent")
		default:
			flush()
		}
	}
	flush()
	return words
}

// normalizeToken turns one token of letters, digits and inner punctuation
// into words.
func normalizeToken(t string) []string {
	t = strings.Trim(t, "'.,:")
	if t == "" {
		return nil
	}
	if !strings.ContainsFunc(t, unicode.IsDigit) {
		// Sentence punctuation glued to a word: "yes.no" is rare, "e.g."
		// reads as letters.
		var out []string
		for _, w := range strings.FieldsFunc(t, func(r rune) bool { return r == '.' || r == ',' || r == ':' }) {
			if w = strings.Trim(w, "'"); w != "" {
				out = append(out, w)
			}
		}
		return out
	}
	// Time of day: H:MM.
	if h, m, ok := strings.Cut(t, ":"); ok && allDigits(h) && len(m) == 2 && allDigits(m) {
		out := spellNumber(h)
		switch {
		case m == "00":
			out = append(out, "o'clock")
		case m[0] == '0':
			out = append(append(out, "oh"), spellNumber(m[1:])...)
		default:
			out = append(out, spellNumber(m)...)
		}
		return out
	}
	// Grouped thousands: 1,200.
	if strings.Contains(t, ",") {
		parts := strings.Split(t, ",")
		grouped := allDigits(parts[0]) && len(parts[0]) <= 3
		for _, p := range parts[1:] {
			grouped = grouped && len(p) == 3 && allDigits(p)
		}
		if grouped {
			t = strings.Join(parts, "")
		}
	}
	// Decimal: 3.5.
	if i, f, ok := strings.Cut(t, "."); ok && allDigits(i) && allDigits(f) && f != "" {
		out := spellNumber(i)
		out = append(out, "point")
		for _, d := range f {
			out = append(out, ones[d-'0'])
		}
		return out
	}
	// Letters and digits mixed ("2nd", "mp3") or plain numbers: split runs.
	var out []string
	start := 0
	for i := 1; i <= len(t); i++ {
		if i == len(t) || isDigit(t[i]) != isDigit(t[start]) {
			run := strings.Trim(t[start:i], "'.,:")
			if run != "" {
				if isDigit(run[0]) && allDigits(run) {
					out = append(out, spellNumber(run)...)
				} else {
					out = append(out, strings.FieldsFunc(run, func(r rune) bool { return r == '.' || r == ',' || r == ':' })...)
				}
			}
			start = i
		}
	}
	return out
}

func isDigit(b byte) bool { return b >= '0' && b <= '9' }

func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return true
}

var ones = []string{"zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine",
	"ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen"}

var tens = []string{"", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"}

var scales = []struct {
	value uint64
	name  string
}{{1_000_000_000_000, "trillion"}, {1_000_000_000, "billion"}, {1_000_000, "million"}, {1000, "thousand"}, {100, "hundred"}}

// spellNumber spells a string of decimal digits as English cardinal words.
// Numbers too long to parse are read digit by digit.
func spellNumber(digits string) []string {
	n, err := strconv.ParseUint(digits, 10, 64)
	if err != nil || n >= 1_000_000_000_000_000 {
		out := make([]string, 0, len(digits))
		for i := 0; i < len(digits); i++ {
			out = append(out, ones[digits[i]-'0'])
		}
		return out
	}
	return cardinal(n)
}

func cardinal(n uint64) []string {
	if n < 20 {
		return []string{ones[n]}
	}
	if n < 100 {
		out := []string{tens[n/10]}
		if n%10 != 0 {
			out = append(out, ones[n%10])
		}
		return out
	}
	for _, s := range scales {
		if n >= s.value {
			out := append(cardinal(n/s.value), s.name)
			if r := n % s.value; r != 0 {
				out = append(out, cardinal(r)...)
			}
			return out
		}
	}
	return nil // unreachable: n ≥ 100 matches "hundred"
}
