package restaurant

import "slices"

// Names are the surnames the agent's speech grammar knows. A caller with
// another name is heard as one of these (or not at all): a grammar trades
// openness for accuracy on poor telephone audio.
var Names = []string{"garcia", "smith", "chen", "patel", "jones", "brown", "miller", "lee", "kim", "nguyen"}

// CallerPhrases returns the phrases the agent expects callers to say, for
// the speech recognizer's grammar (TranscriptionRequest.Phrases): a caller
// says any sequence of them ("sorry" "make it eight"). Whole answers are
// listed as well as their parts, because pocketsphinx recognizes long
// phrases far better than strings of single words on telephone audio.
func CallerPhrases() []string {
	p := []string{
		"hello", "hi", "hi there", "yes", "yeah", "no", "sorry", "please", "thanks", "thank you",
		"yes that's right", "that's right", "yes please", "no that's wrong", "correct",
		"what", "sorry what", "can you repeat that", "pardon",
		"i'd like to book a table", "i'd like a table", "book a table",
		"what are your opening hours", "when are you open",
		"today", "tonight", "tomorrow", "tomorrow night", "this evening",
		"the name is", "my name is", "it's", "under", "noon",
	}
	days := []string{"today", "tonight", "tomorrow", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"}
	for _, d := range days[3:] {
		p = append(p, d, "on "+d, "this "+d)
	}
	for n := 1; n <= MaxParty; n++ {
		w := numberWords[n]
		p = append(p, w, w+" people", "a table for "+w, "a table for "+w+" please",
			"for "+w, "make it "+w, "sorry make it "+w, "party of "+w)
	}
	for h := 1; h <= 9; h++ {
		w := numberWords[h]
		p = append(p, "at "+w, w+" thirty", "at "+w+" thirty", "half past "+w, w+" o'clock", w+" pm")
		for _, d := range days {
			p = append(p, d+" at "+w, d+" at "+w+" thirty")
		}
	}
	for _, n := range Names {
		p = append(p, n, "the name is "+n, "my name is "+n, "it's "+n)
	}
	slices.Sort(p)
	return slices.Compact(p)
}
