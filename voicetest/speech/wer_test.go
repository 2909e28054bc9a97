package speech

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestNormalizeWords(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"Hello, World!", "hello world"},
		{"I don't know.", "i don't know"},
		{"It’s fine", "it's fine"},
		{"Call me at 7:30.", "call me at seven thirty"},
		{"At 9:05 or 10:00?", "at nine oh five or ten o'clock"},
		{"Room 12, floor 3", "room twelve floor three"},
		{"42 people", "forty two people"},
		{"It costs 1,250 dollars", "it costs one thousand two hundred fifty dollars"},
		{"3.5 stars", "three point five stars"},
		{"100%", "one hundred percent"},
		{"Tom & Jerry", "tom and jerry"},
		{"well-known", "well known"},
		{"0", "zero"},
		{"1000000", "one million"},
		{"2nd floor", "two nd floor"},
		{"12345678901234567890", "one two three four five six seven eight nine zero one two three four five six seven eight nine zero"},
		{"", ""},
		{"...", ""},
		{"e.g. this", "e g this"},
	} {
		assert.Equal(t, tc.want, strings.Join(NormalizeWords(tc.in), " "), "NormalizeWords(%q)", tc.in)
	}
}

func TestWordErrorRate(t *testing.T) {
	for _, tc := range []struct {
		ref, hyp      string
		rate          float64
		sub, del, ins int
	}{
		{"the cat sat", "the cat sat", 0, 0, 0, 0},
		{"The cat sat.", "the cat sat", 0, 0, 0, 0},
		{"the cat sat", "the bat sat", 1.0 / 3, 1, 0, 0},
		{"the cat sat", "the sat", 1.0 / 3, 0, 1, 0},
		{"the cat sat", "the cat sat down", 1.0 / 3, 0, 0, 1},
		{"the cat sat", "", 1, 0, 3, 0},
		{"", "", 0, 0, 0, 0},
		{"", "noise", 1, 0, 0, 1},
		{"a b", "c d e f", 2, 2, 0, 2},
		{"call at 7:30", "call at seven thirty", 0, 0, 0, 0},
		{"book a table for two", "put the table for two", 0.4, 2, 0, 0},
	} {
		w := WordErrorRate(tc.ref, tc.hyp)
		assert.InDelta(t, tc.rate, w.Rate, 1e-9, "WER(%q, %q)", tc.ref, tc.hyp)
		assert.Equal(t, [3]int{tc.sub, tc.del, tc.ins}, [3]int{w.Substitutions, w.Deletions, w.Insertions}, "edits of (%q, %q)", tc.ref, tc.hyp)
		assert.Equal(t, len(NormalizeWords(tc.ref)), w.Reference)
	}
}

func ExampleWordErrorRate() {
	w := WordErrorRate("Please book a table for 2 at 7:30.", "please look a table for two at seven thirty")
	fmt.Printf("WER %.1f%%: %d substitution(s) in %d words\n", 100*w.Rate, w.Substitutions, w.Reference)
	// Output: WER 11.1%: 1 substitution(s) in 9 words
}
