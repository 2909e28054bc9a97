package restaurant

import (
	"fmt"
	"slices"
	"strings"

	"github.com/voicetest-go/voicetest/voicetest/speech"
)

// Booking is a table reservation: the arguments of the book_table tool.
type Booking struct {
	// Party is the number of guests, 1 to MaxParty.
	Party int `json:"party"`
	// Day is the day of the visit: "today", "tomorrow" or a weekday, in
	// lower case.
	Day string `json:"day"`
	// Time is the time of the visit on a 24-hour clock, "19:30".
	Time string `json:"time"`
	// Name is the name the table is booked under.
	Name string `json:"name"`
}

// MaxParty is the largest party the restaurant takes a booking for.
const MaxParty = 12

// Reply is what the agent does after an input: say something, ask for a
// booking to be made, hang up.
type Reply struct {
	// Say is the text to speak; "" says nothing.
	Say string
	// Book, when set, asks the deployment to call the book_table tool with
	// these arguments and to pass its outcome to Dialogue.Booked, whose
	// Reply is then said.
	Book *Booking
	// HangUp ends the call after Say has been said.
	HangUp bool
}

// state is where the conversation is.
type state int

const (
	stateParty   state = iota // waiting for the party size
	stateWhen                 // waiting for the day and time
	stateName                 // waiting for the name
	stateConfirm              // waiting for yes or no
	stateBooking              // the book_table tool is running
	stateDone                 // goodbye said
)

// MaxSilences is how many silence re-prompts the agent makes before it
// gives up and hangs up.
const MaxSilences = 3

// Dialogue is the restaurant's booking conversation as a state machine:
// greeting (with a key-press menu) → party size → day and time → name →
// confirmation → book_table → goodbye. It understands corrections at any
// point ("sorry, make it eight"), repeats its last question when asked
// ("what?"), re-prompts after silence, and gives up after MaxSilences
// silent re-prompts.
//
// A Dialogue holds one call's state and is not safe for concurrent use.
// It does no I/O: the deployments (Server over Twilio Media Streams, and
// Handler in process) feed it text, key presses and silences, and do what
// its Replies say.
type Dialogue struct {
	st       state
	b        Booking
	question string // the last question asked, for repeats and re-prompts
	silences int
}

// NewDialogue returns the conversation of a new call, before the greeting.
func NewDialogue() *Dialogue { return &Dialogue{} }

// Greeting is the first thing the agent says.
const Greeting = "Hello, this is Bella Vista. For a table, tell me how many people, or press one. For our opening hours, press two."

// The agent's fixed sentences.
const (
	askParty     = "How many people is the table for?"
	openingHours = "We are open every day from noon until ten at night."
	notCaught    = "Sorry, I didn't catch that."
	stillThere   = "Are you still there?"
	giveUp       = "I can't hear you, so I'll hang up now. Goodbye."
	startOver    = "Let's start again."
	tooMany      = "Sorry, we take bookings for up to twelve people."
	badTime      = "Sorry, we take bookings from noon until nine thirty at night."
	badKey       = "Sorry, that key does nothing here."
)

// Start greets the caller. Call it once, when the call connects.
func (d *Dialogue) Start() Reply {
	d.st = stateParty
	d.question = askParty
	return Reply{Say: Greeting}
}

// Done reports whether the call is over (goodbye said).
func (d *Dialogue) Done() bool { return d.st == stateDone }

// Booking returns what the caller has asked for so far.
func (d *Dialogue) Booking() Booking { return d.b }

// Keys handles key presses (DTMF digits) of the menu: 1 books a table, 2
// tells the opening hours.
func (d *Dialogue) Keys(digits string) Reply {
	d.silences = 0
	switch {
	case d.st == stateDone || d.st == stateBooking:
		return Reply{}
	case digits == "":
		return Reply{}
	case d.st != stateParty:
		return d.ask(badKey, d.question)
	}
	switch digits[len(digits)-1] {
	case '1':
		return d.ask("", askParty)
	case '2':
		return d.ask(openingHours, askParty)
	}
	return d.ask(badKey, askParty)
}

// Silence handles a stretch of silence from the caller: a re-prompt, or
// after MaxSilences of them a goodbye.
func (d *Dialogue) Silence() Reply {
	if d.st == stateDone || d.st == stateBooking {
		return Reply{}
	}
	d.silences++
	if d.silences >= MaxSilences {
		d.st = stateDone
		return Reply{Say: giveUp, HangUp: true}
	}
	return Reply{Say: stillThere + " " + d.question}
}

// Booked takes the outcome of the book_table tool that a Reply.Book asked
// for: nil when the table is booked.
func (d *Dialogue) Booked(err error) Reply {
	d.st = stateDone
	if err != nil {
		return Reply{Say: "Sorry, I couldn't book that table. Please call us again later. Goodbye.", HangUp: true}
	}
	return Reply{Say: "You're all booked. See you " + spokenDay(d.b.Day) + ". Goodbye!", HangUp: true}
}

// Hear handles something the caller said (a transcript, or a typed
// message).
func (d *Dialogue) Hear(text string) Reply {
	d.silences = 0
	if d.st == stateDone || d.st == stateBooking {
		return Reply{}
	}
	w := speech.NormalizeWords(text)
	if len(w) == 0 {
		return d.ask(notCaught, d.question)
	}
	if isRepeatRequest(w) {
		return d.ask("", d.question)
	}
	if has(w, "hours") || has(w, "open") && !has(w, "table") {
		return d.ask(openingHours, d.question)
	}
	day, clock, clockOK := findDay(w), "", true
	party, corrected := 0, false
	// What a number means depends on the question; "make it eight" or
	// "eight people" is always a party size.
	if n, ok := partyCorrection(w); ok {
		party, corrected = n, true
	} else if d.st == stateParty {
		party, _ = firstNumber(w)
	}
	if d.st == stateWhen || d.st == stateConfirm || day != "" {
		// While asking for the time, a bare number is the hour, unless
		// it was the party size.
		clock, clockOK = findTime(w, d.st == stateWhen && !corrected)
	}
	if party > MaxParty {
		return d.ask(tooMany, d.question)
	}
	if !clockOK {
		return d.ask(badTime, "What time would you like?")
	}
	changed := party > 0 || day != "" || clock != ""
	if party > 0 {
		d.b.Party = party
	}
	if day != "" {
		d.b.Day = day
	}
	if clock != "" {
		d.b.Time = clock
	}

	switch d.st {
	case stateName:
		if !changed {
			name := findName(w)
			if name == "" {
				return d.ask(notCaught, d.question)
			}
			d.b.Name = name
		}
	case stateConfirm:
		switch {
		case changed:
			return d.confirm("No problem.")
		case isYes(w):
			d.st = stateBooking
			b := d.b
			return Reply{Book: &b}
		case isNo(w):
			d.b = Booking{}
			d.st = stateParty
			return d.ask(startOver, askParty)
		}
		return d.ask(notCaught, d.question)
	}
	if !changed && d.st != stateName {
		return d.ask(notCaught, d.question)
	}
	return d.next()
}

// next asks for whatever the booking still lacks, acknowledging what it
// has.
func (d *Dialogue) next() Reply {
	b := d.b
	switch {
	case b.Party == 0:
		d.st = stateParty
		return d.ask("", askParty)
	case b.Day == "" && b.Time == "":
		d.st = stateWhen
		return d.ask(fmt.Sprintf("A table for %s.", numberWords[b.Party]), "What day and time would you like?")
	case b.Day == "":
		d.st = stateWhen
		return d.ask(capitalize(spokenTime(b.Time))+".", "On which day?")
	case b.Time == "":
		d.st = stateWhen
		return d.ask(capitalize(spokenDay(b.Day))+".", "And at what time?")
	case b.Name == "":
		d.st = stateName
		return d.ask(capitalize(spokenDay(b.Day))+" at "+spokenTime(b.Time)+".", "What name is the booking under?")
	}
	return d.confirm("")
}

// confirm reads the booking back and asks whether it is right.
func (d *Dialogue) confirm(prefix string) Reply {
	d.st = stateConfirm
	b := d.b
	if b.Party == 0 || b.Day == "" || b.Time == "" || b.Name == "" {
		return d.next()
	}
	return d.ask(prefix, fmt.Sprintf("So that's a table for %s %s at %s, under the name %s. Is that right?",
		numberWords[b.Party], spokenDay(b.Day), spokenTime(b.Time), b.Name))
}

// ask says prefix (if any) and asks question, remembering it.
func (d *Dialogue) ask(prefix, question string) Reply {
	d.question = question
	if prefix == "" {
		return Reply{Say: question}
	}
	return Reply{Say: prefix + " " + question}
}

var numberWords = []string{"zero", "one", "two", "three", "four", "five", "six",
	"seven", "eight", "nine", "ten", "eleven", "twelve", "thirteen", "fourteen",
	"fifteen", "sixteen", "seventeen", "eighteen", "nineteen", "twenty"}

var weekdays = []string{"monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"}

func has(w []string, word string) bool { return slices.Contains(w, word) }

func number(word string) (int, bool) {
	if word == "a" || word == "an" {
		return 0, false
	}
	n := slices.Index(numberWords, word)
	return n, n > 0
}

func firstNumber(w []string) (int, bool) {
	for _, x := range w {
		if n, ok := number(x); ok {
			return n, true
		}
	}
	return 0, false
}

// partyCorrection finds a party size said so that it cannot be a time:
// "make it eight", "eight people", "for eight", "party of eight".
func partyCorrection(w []string) (int, bool) {
	for i, x := range w {
		n, ok := number(x)
		if !ok {
			continue
		}
		if i+1 < len(w) && (w[i+1] == "people" || w[i+1] == "persons" || w[i+1] == "guests" || w[i+1] == "of") {
			return n, true
		}
		if i >= 2 && w[i-2] == "make" && w[i-1] == "it" && !isTimeWord(w, i) {
			return n, true
		}
		if i >= 1 && (w[i-1] == "for" || w[i-1] == "of") && !isTimeWord(w, i) {
			return n, true
		}
	}
	return 0, false
}

// isTimeWord reports whether the number at i is followed by something
// that makes it a time ("eight thirty", "eight o'clock", "eight pm").
func isTimeWord(w []string, i int) bool {
	if i+1 >= len(w) {
		return false
	}
	switch w[i+1] {
	case "thirty", "fifteen", "forty", "o'clock", "pm", "p", "am", "tonight":
		return true
	}
	return false
}

func findDay(w []string) string {
	for _, x := range w {
		switch {
		case x == "today" || x == "tonight":
			return "today"
		case x == "tomorrow":
			return "tomorrow"
		case slices.Contains(weekdays, x):
			return x
		}
	}
	return ""
}

// findTime finds a time of day: "at seven", "seven thirty", "half past
// seven", "seven o'clock", or with bare, any number. It reports false for a
// time outside booking hours (noon to 21:30).
func findTime(w []string, bare bool) (string, bool) {
	for i, x := range w {
		if x == "noon" || x == "midday" {
			return "12:00", true
		}
		h, ok := number(x)
		if !ok || h > 12 {
			continue
		}
		minutes, timeLike := 0, false
		if i >= 1 && w[i-1] == "at" {
			timeLike = true
		}
		if i >= 2 && w[i-2] == "half" && w[i-1] == "past" {
			minutes, timeLike = 30, true
		}
		if i >= 2 && w[i-2] == "quarter" && w[i-1] == "past" {
			minutes, timeLike = 15, true
		}
		if i+1 < len(w) {
			switch w[i+1] {
			case "thirty":
				minutes, timeLike = 30, true
			case "fifteen":
				minutes, timeLike = 15, true
			case "forty":
				if i+2 < len(w) && w[i+2] == "five" {
					minutes, timeLike = 45, true
				}
			case "o'clock", "pm", "p", "tonight":
				timeLike = true
			}
		}
		if !timeLike && !bare {
			continue
		}
		// Bookings are for lunch and dinner: one to eleven mean the
		// afternoon or evening.
		hour := h
		if h < 12 {
			hour += 12
		}
		if hour > 21 || hour == 21 && minutes > 30 {
			return "", false
		}
		return fmt.Sprintf("%02d:%02d", hour, minutes), true
	}
	return "", true
}

// nameStop are words that are not a caller's name.
var nameStop = []string{"my", "name", "is", "it's", "its", "it", "the", "under", "for", "please",
	"yes", "sure", "call", "me", "i'm", "this", "thank", "you", "thanks", "put", "down", "as", "a", "and", "of", "that's",
	// Words a recognizer with a phrase grammar tends to add at the end.
	"what", "hello", "hi", "no", "sorry", "party", "people"}

// findName takes the caller's name: the last word that is not a filler
// ("the name is Garcia", "it's Chen, please").
func findName(w []string) string {
	for i := len(w) - 1; i >= 0; i-- {
		if !slices.Contains(nameStop, w[i]) {
			if _, isNum := number(w[i]); isNum {
				return ""
			}
			return capitalize(w[i])
		}
	}
	return ""
}

func isRepeatRequest(w []string) bool {
	if has(w, "repeat") || has(w, "pardon") || has(w, "again") && has(w, "come") {
		return true
	}
	return len(w) <= 2 && (has(w, "what") || w[0] == "sorry" && len(w) == 1)
}

func isYes(w []string) bool {
	for _, x := range w {
		switch x {
		case "yes", "yeah", "yep", "correct", "right", "sure", "perfect":
			return !isNo(w)
		}
	}
	return false
}

func isNo(w []string) bool {
	for _, x := range w {
		switch x {
		case "no", "nope", "wrong", "not":
			return true
		}
	}
	return false
}

func spokenDay(day string) string {
	switch day {
	case "today", "tomorrow":
		return day
	}
	return "on " + capitalize(day)
}

// spokenTime says "19:30" as "seven thirty".
func spokenTime(hhmm string) string {
	var h, m int
	if _, err := fmt.Sscanf(hhmm, "%d:%d", &h, &m); err != nil {
		return hhmm
	}
	if h == 12 && m == 0 {
		return "noon"
	}
	if h > 12 {
		h -= 12
	}
	switch m {
	case 0:
		return numberWords[h]
	case 15:
		return "quarter past " + numberWords[h]
	case 30:
		return numberWords[h] + " thirty"
	case 45:
		return numberWords[h] + " forty five"
	}
	return hhmm
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
