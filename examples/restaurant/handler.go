package restaurant

import (
	"context"
	"errors"
	"fmt"

	"github.com/voicetest-go/voicetest/adapters/handler"
	"github.com/voicetest-go/voicetest/voicetest"
)

// dialogueKey is the session key of a call's Dialogue in a Handler.
const dialogueKey = "restaurant.dialogue"

// HandlerFunc returns the restaurant's agent as an in-process event
// handler for handler.New: the same Dialogue as the Server, with the
// adapter doing the speech (text mode, or audio mode with a TTS and an
// STT). Bookings go to book through the book_table tool, which the
// adapter reports as tool call and result events.
//
// Silence re-prompts need handler.WithInactivityTimeout; Agent sets it.
func HandlerFunc(book *Book) handler.Func {
	return func(ctx context.Context, ev handler.Event, c *handler.Call) error {
		if _, ok := ev.(handler.StartEvent); ok {
			d := NewDialogue()
			c.Set(dialogueKey, d)
			return act(c, book, d, d.Start())
		}
		v, ok := c.Get(dialogueKey)
		if !ok {
			return errors.New("restaurant: an event before StartEvent")
		}
		d := v.(*Dialogue)
		switch ev := ev.(type) {
		case handler.TextEvent:
			return act(c, book, d, d.Hear(ev.Text))
		case handler.DTMFEvent:
			return act(c, book, d, d.Keys(ev.Digits))
		case handler.TimeoutEvent:
			return act(c, book, d, d.Silence())
		}
		// InterruptEvent: the caller's words follow as a TextEvent.
		// StopEvent: nothing to release.
		return nil
	}
}

// act does what r says: call the tool, speak, hang up.
func act(c *handler.Call, book *Book, d *Dialogue, r Reply) error {
	if r.Book != nil {
		_, err := c.Tool(ToolBookTable, *r.Book, func() (any, error) { return book.Add(*r.Book) })
		if err != nil && !errors.Is(err, ErrInvalidBooking) {
			return fmt.Errorf("restaurant: %s: %w", ToolBookTable, err)
		}
		r = d.Booked(err)
	}
	if r.Say != "" {
		if err := c.Say(r.Say); err != nil {
			return err
		}
	}
	if r.HangUp {
		return c.HangUp("goodbye")
	}
	return nil
}

// Agent returns the restaurant's agent in process, for voicetest.Scenario
// on virtual time: handler.New running HandlerFunc(book), named
// "bella-vista", re-prompting after DefaultSilenceTimeout of silence. Add
// handler.AudioMode(tts, TelephoneSTT(stt, CallerPhrases())) to make it
// speak and listen; without it, it exchanges text.
func Agent(book *Book, opts ...handler.Option) voicetest.Agent {
	base := []handler.Option{handler.WithName("bella-vista"), handler.WithInactivityTimeout(DefaultSilenceTimeout)}
	return handler.New(HandlerFunc(book), append(base, opts...)...)
}
