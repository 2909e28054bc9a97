package restaurant

import (
	"errors"
	"strings"
	"testing"
)

// step is one input to a Dialogue and what the reply must be.
type step struct {
	hear, keys string
	silence    bool
	want       string // the reply's Say must contain this
	book       *Booking
	hangUp     bool
}

func runSteps(t *testing.T, steps []step) *Dialogue {
	t.Helper()
	d := NewDialogue()
	d.Start()
	for i, s := range steps {
		var r Reply
		switch {
		case s.silence:
			r = d.Silence()
		case s.keys != "":
			r = d.Keys(s.keys)
		default:
			r = d.Hear(s.hear)
		}
		if s.book != nil {
			if r.Book == nil || *r.Book != *s.book {
				t.Fatalf("step %d %+v: Book = %+v, want %+v", i, s, r.Book, *s.book)
			}
			r = d.Booked(nil)
		} else if r.Book != nil {
			t.Fatalf("step %d %+v: unexpected Book %+v", i, s, *r.Book)
		}
		if !strings.Contains(r.Say, s.want) {
			t.Fatalf("step %d %+v: Say = %q, want it to contain %q", i, s, r.Say, s.want)
		}
		if r.HangUp != s.hangUp {
			t.Fatalf("step %d %+v: HangUp = %v, want %v", i, s, r.HangUp, s.hangUp)
		}
	}
	return d
}

func TestDialogue(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		steps []step
	}{
		{"everything at once then yes", []step{
			{hear: "a table for four tomorrow at eight", want: "Tomorrow at eight. What name"},
			{hear: "it's chen", want: "table for four tomorrow at eight, under the name Chen. Is that right?"},
			{hear: "yes", book: &Booking{Party: 4, Day: "tomorrow", Time: "20:00", Name: "Chen"}, want: "See you tomorrow", hangUp: true},
		}},
		{"digits in typed text", []step{
			{hear: "3 people", want: "A table for three."},
			{hear: "Saturday 7:30", want: "On Saturday at seven thirty."},
			{hear: "Patel", want: "under the name Patel"},
		}},
		{"day and time asked separately", []step{
			{hear: "two", want: "What day and time"},
			{hear: "on friday", want: "On Friday. And at what time?"},
			{hear: "half past six", want: "On Friday at six thirty."},
		}},
		{"time first", []step{
			{hear: "two", want: "What day and time"},
			{hear: "at seven", want: "Seven. On which day?"},
			{hear: "tomorrow", want: "Tomorrow at seven."},
		}},
		{"correction while asked the time", []step{
			{hear: "a table for two", want: "A table for two."},
			{hear: "sorry make it eight people", want: "A table for eight."},
		}},
		{"make it is a time when a time is asked", []step{
			{hear: "two", want: "What day and time"},
			{hear: "friday make it eight thirty", want: "On Friday at eight thirty."},
		}},
		{"no starts over", []step{
			{hear: "two people friday at seven", want: "What name"},
			{hear: "smith", want: "Is that right?"},
			{hear: "no that's wrong", want: "Let's start again. How many people"},
		}},
		{"change of day at confirmation", []step{
			{hear: "two people friday at seven", want: "What name"},
			{hear: "smith", want: "Is that right?"},
			{hear: "make it saturday", want: "No problem. So that's a table for two on Saturday at seven"},
		}},
		{"repeat requests", []step{
			{hear: "what?", want: "How many people is the table for?"},
			{hear: "can you repeat that", want: "How many people is the table for?"},
			{hear: "sorry?", want: "How many people is the table for?"},
		}},
		{"not understood", []step{
			{hear: "banana", want: "Sorry, I didn't catch that. How many people"},
			{hear: "", want: "Sorry, I didn't catch that."},
		}},
		{"too many people", []step{
			{hear: "twenty people", want: "up to twelve people"},
		}},
		{"too late", []step{
			{hear: "two", want: "What day"},
			{hear: "friday at ten", want: "from noon until nine thirty"},
		}},
		{"menu", []step{
			{keys: "2", want: "We are open every day from noon until ten at night. How many people"},
			{keys: "1", want: "How many people"},
			{keys: "7", want: "that key does nothing"},
			{hear: "four", want: "A table for four."},
			{keys: "1", want: "that key does nothing here. What day and time"},
		}},
		{"hours by voice", []step{
			{hear: "what are your opening hours", want: "We are open every day"},
		}},
		{"silence re-prompts then gives up", []step{
			{silence: true, want: "Are you still there? How many people"},
			{hear: "two", want: "A table for two."},
			{silence: true, want: "Are you still there? What day and time"},
			{silence: true, want: "Are you still there?"},
			{silence: true, want: "I'll hang up", hangUp: true},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			runSteps(t, tc.steps)
		})
	}
}

func TestDialogueAfterGoodbyeSaysNothing(t *testing.T) {
	t.Parallel()
	d := runSteps(t, []step{
		{hear: "two people friday at seven", want: "What name"},
		{hear: "kim", want: "Is that right?"},
		{hear: "yes", book: &Booking{Party: 2, Day: "friday", Time: "19:00", Name: "Kim"}, want: "Goodbye", hangUp: true},
	})
	if !d.Done() {
		t.Fatal("Done() = false after goodbye")
	}
	for _, r := range []Reply{d.Hear("hello"), d.Keys("1"), d.Silence()} {
		if r != (Reply{}) {
			t.Errorf("reply after goodbye = %+v, want none", r)
		}
	}
}

func TestDialogueBookingFailure(t *testing.T) {
	t.Parallel()
	d := NewDialogue()
	d.Start()
	d.Hear("two people friday at seven")
	d.Hear("lee")
	r := d.Hear("yes")
	if r.Book == nil {
		t.Fatalf("no booking asked for: %+v", r)
	}
	r = d.Booked(errors.New("the book is full"))
	if !r.HangUp || !strings.Contains(r.Say, "couldn't book") {
		t.Errorf("Booked(err) = %+v, want an apology and a hang-up", r)
	}
}

func TestBook(t *testing.T) {
	t.Parallel()
	var bk Book
	for _, b := range []Booking{
		{Party: 0, Day: "friday", Time: "19:00", Name: "Kim"},
		{Party: 13, Day: "friday", Time: "19:00", Name: "Kim"},
		{Party: 2, Time: "19:00", Name: "Kim"},
		{Party: 2, Day: "friday", Time: "19:00"},
	} {
		if _, err := bk.Add(b); !errors.Is(err, ErrInvalidBooking) {
			t.Errorf("Add(%+v) error = %v, want ErrInvalidBooking", b, err)
		}
	}
	r, err := bk.Add(Booking{Party: 2, Day: "friday", Time: "19:00", Name: "Kim"})
	if err != nil || r.ID != "BV-0001" {
		t.Fatalf("Add = %+v, %v; want BV-0001", r, err)
	}
	if got := bk.Reservations(); len(got) != 1 || got[0] != r {
		t.Errorf("Reservations() = %+v, want [%+v]", got, r)
	}
}

func TestCallerPhrasesCoverTheDialogue(t *testing.T) {
	t.Parallel()
	p := CallerPhrases()
	for _, want := range []string{"sorry make it eight", "friday at seven thirty", "the name is garcia", "yes that's right", "what"} {
		found := false
		for _, x := range p {
			found = found || x == want
		}
		if !found {
			t.Errorf("CallerPhrases lacks %q", want)
		}
	}
}
