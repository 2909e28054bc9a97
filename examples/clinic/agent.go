// Package clinic is a dental practice's booking agent whose caller must
// read a screen and wait: asked for an appointment, it says "one moment",
// looks the calendar up in the background for LookupTime, then shows the
// free times on the caller's screen (a data payload, as LayerCode's
// response.data or a client-tool event would carry it) without reading
// them out, and books the one the caller picks.
//
// Its test (clinic_test.go) is the example of two caller features taken
// from LayerCode Gym: the caller sees what the agent shows
// (voicetest.Config.DataView, here voicetest.XMLView("screen")), and takes
// its turn like a person (voicetest.Config.TurnTaking: it waits through
// the agent's "one moment" instead of talking into the pause).
package clinic

import (
	"context"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/voicetest-go/voicetest/adapters/handler"
)

// LookupTime is how long the agent's calendar lookup takes.
const LookupTime = 3 * time.Second

// Calendar is the practice's free times and the bookings made, safe for
// concurrent use.
type Calendar struct {
	mu     sync.Mutex
	day    string
	free   []string
	booked []string
}

// NewCalendar returns a calendar with the given free times ("09:30") on
// day.
func NewCalendar(day string, free ...string) *Calendar {
	return &Calendar{day: day, free: slices.Clone(free)}
}

// Free returns the day and its free times.
func (c *Calendar) Free() (string, []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.day, slices.Clone(c.free)
}

// Book books a free time and reports whether it was free.
func (c *Calendar) Book(t string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	i := slices.Index(c.free, t)
	if i < 0 {
		return false
	}
	c.free = slices.Delete(c.free, i, i+1)
	c.booked = append(c.booked, t)
	return true
}

// Booked returns the times booked so far.
func (c *Calendar) Booked() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.booked)
}

var clock = regexp.MustCompile(`\b(\d{1,2}):(\d\d)\b`)

// Agent returns the agent's handler over cal: text in, speech out (in
// process, with handler.New).
func Agent(cal *Calendar) handler.Func {
	return func(ctx context.Context, ev handler.Event, c *handler.Call) error {
		switch ev := ev.(type) {
		case handler.StartEvent:
			return c.Say("Northside Dental, how can I help?")
		case handler.TextEvent:
			text := strings.ToLower(ev.Text)
			if m := clock.FindStringSubmatch(text); m != nil {
				hour := m[1]
				if len(hour) == 1 {
					hour = "0" + hour
				}
				return book(c, cal, hour+":"+m[2])
			}
			if strings.Contains(text, "appointment") || strings.Contains(text, "check-up") || strings.Contains(text, "book") {
				if err := c.Say("One moment, let me check the calendar."); err != nil {
					return err
				}
				return c.Go("calendar lookup", func(ctx context.Context, c *handler.Call) error {
					select {
					case <-time.After(LookupTime):
					case <-ctx.Done():
						return ctx.Err()
					}
					day, free := cal.Free()
					if err := c.Data("calendar", map[string]any{"day": day, "free": free}); err != nil {
						return err
					}
					return c.Say("Thanks for waiting. I have put the free times on your screen. Which one would you like?")
				})
			}
			return c.Say("Sorry, would you like to book an appointment?")
		}
		return nil
	}
}

// book books time t, or says it is not free.
func book(c *handler.Call, cal *Calendar, t string) error {
	if !cal.Book(t) {
		return c.Say("Sorry, that time is not free. Please pick one of the times on your screen.")
	}
	if _, err := c.ToolCall("book_appointment", map[string]any{"time": t}); err != nil {
		return err
	}
	if err := c.Data("booking", map[string]any{"time": t, "status": "confirmed"}); err != nil {
		return err
	}
	if err := c.Say("You are booked in at " + t + ". Goodbye!"); err != nil {
		return err
	}
	return c.HangUp("booked")
}
