package restaurant

import (
	"errors"
	"fmt"
	"slices"
	"sync"
)

// ToolBookTable is the name of the agent's booking tool.
const ToolBookTable = "book_table"

// Reservation is a booking the restaurant accepted.
type Reservation struct {
	// ID is the booking's reference, "BV-0001".
	ID string `json:"id"`
	Booking
}

// Book is the restaurant's reservation book: what the book_table tool
// writes to. It is safe for concurrent use, so one Book can serve every
// call of a Server.
type Book struct {
	mu    sync.Mutex
	items []Reservation
}

// ErrInvalidBooking matches the error of a booking the restaurant cannot
// take.
var ErrInvalidBooking = errors.New("restaurant: invalid booking")

// Add records b and returns its reservation. A booking with a missing
// field, or a party outside 1..MaxParty, is an error (errors.Is
// ErrInvalidBooking) saying what is wrong.
func (bk *Book) Add(b Booking) (Reservation, error) {
	switch {
	case b.Party < 1 || b.Party > MaxParty:
		return Reservation{}, fmt.Errorf("%w: party of %d; the restaurant takes 1 to %d", ErrInvalidBooking, b.Party, MaxParty)
	case b.Day == "" || b.Time == "":
		return Reservation{}, fmt.Errorf("%w: no day or time (day %q, time %q)", ErrInvalidBooking, b.Day, b.Time)
	case b.Name == "":
		return Reservation{}, fmt.Errorf("%w: no name", ErrInvalidBooking)
	}
	bk.mu.Lock()
	defer bk.mu.Unlock()
	r := Reservation{ID: fmt.Sprintf("BV-%04d", len(bk.items)+1), Booking: b}
	bk.items = append(bk.items, r)
	return r, nil
}

// Reservations returns a copy of the reservations, oldest first.
func (bk *Book) Reservations() []Reservation {
	bk.mu.Lock()
	defer bk.mu.Unlock()
	return slices.Clone(bk.items)
}
