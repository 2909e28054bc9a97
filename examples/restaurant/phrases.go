package restaurant

import (
	"fmt"
	"slices"
	"strings"

	"github.com/voicetest-go/voicetest/voicetest/speech"
)

// Names returns the surnames the agent's speech grammar knows. A caller
// with another name is heard as one of these (or not at all): a grammar
// trades openness for accuracy on poor telephone audio.
func Names() []string {
	return []string{"garcia", "smith", "chen", "patel", "jones", "brown", "miller", "lee", "kim", "nguyen"}
}

// CallerPhrases returns the phrases the agent expects callers to say, for
// the speech recognizer's grammar (TranscriptionRequest.Phrases): a caller
// says any sequence of them ("sorry" "make it eight"). Whole answers are
// listed as well as their parts, because pocketsphinx recognizes long
// phrases far better than strings of single words on telephone audio.
func CallerPhrases() []string {
	p := []string{
		"yes", "no", "sorry", "what", "hello",
		"yes that's right", "that's right", "yes please", "no that's wrong",
		"sorry what", "can you repeat that",
		"i'd like to book a table", "what are your opening hours",
	}
	days := []string{"today", "tonight", "tomorrow", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"}
	for n := 1; n <= MaxParty; n++ {
		w := numberWords[n]
		p = append(p, w+" people", "a table for "+w, "a table for "+w+" please",
			"make it "+w, "sorry make it "+w, "party of "+w)
	}
	for _, d := range days {
		p = append(p, d+" at noon")
		for h := 5; h <= 9; h++ {
			w := numberWords[h]
			p = append(p, d+" at "+w, d+" at "+w+" thirty")
		}
	}
	for _, n := range Names() {
		p = append(p, "the name is "+n, "my name is "+n, "it's "+n)
	}
	slices.Sort(p)
	return slices.Compact(p)
}

// AgentPhrases returns the pieces the agent's sentences are made of, for a
// recognizer that transcribes the agent (Config.AgentSTT through
// TelephoneSTT): over an 8 kHz line an open-vocabulary model garbles even
// clear synthetic speech, while a grammar of what the agent can say
// recovers its words. Something the agent says outside this vocabulary is
// heard as the nearest pieces, garbled, which a test's checks then catch.
func AgentPhrases() []string {
	p := []string{
		"hello this is bella vista", "for a table tell me how many people or press one",
		"for our opening hours press two",
		askParty, openingHours, notCaught, stillThere, giveUp, startOver, tooMany, badTime, badKey,
		"what day and time would you like", "and at what time", "on which day",
		"what name is the booking under", "what time would you like", "no problem", "is that right",
		"you're all booked", "goodbye", "sorry i couldn't book that table", "please call us again later",
		"today", "tomorrow", "see you today", "see you tomorrow",
	}
	for n := 1; n <= MaxParty; n++ {
		p = append(p, "a table for "+numberWords[n], "so that's a table for "+numberWords[n])
	}
	for _, d := range weekdays {
		p = append(p, "on "+d, "see you on "+d)
	}
	for _, h := range []int{12, 13, 14, 15, 16, 17, 18, 19, 20, 21} {
		for _, m := range []int{0, 15, 30, 45} {
			p = append(p, "at "+spokenTime(fmt.Sprintf("%02d:%02d", h, m)))
		}
	}
	for _, n := range Names() {
		p = append(p, "under the name "+n)
	}
	for i, x := range p {
		p[i] = strings.Join(speech.NormalizeWords(x), " ")
	}
	slices.Sort(p)
	return slices.Compact(p)
}
