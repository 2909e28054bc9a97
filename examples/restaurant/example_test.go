package restaurant_test

import (
	"fmt"

	"github.com/voicetest-go/voicetest/examples/restaurant"
)

// The dialogue on its own: what the agent says to each thing the caller
// says, including a correction and a request to repeat. Both deployments
// (the Twilio Media Streams Server and the in-process Handler) run exactly
// this state machine.
func ExampleDialogue() {
	d := restaurant.NewDialogue()
	fmt.Println("agent:", d.Start().Say)
	for _, said := range []string{
		"A table for two, please.",
		"Friday at seven thirty.",
		"The name is Garcia.",
		"Sorry, make it eight.",
		"What?",
		"Yes, that's right.",
	} {
		fmt.Println("caller:", said)
		r := d.Hear(said)
		if r.Book != nil {
			fmt.Printf("tool: book_table %+v\n", *r.Book)
			r = d.Booked(nil) // the table was booked
		}
		fmt.Println("agent:", r.Say)
	}
	// Output:
	// agent: Hello, this is Bella Vista. For a table, tell me how many people, or press one. For our opening hours, press two.
	// caller: A table for two, please.
	// agent: A table for two. What day and time would you like?
	// caller: Friday at seven thirty.
	// agent: On Friday at seven thirty. What name is the booking under?
	// caller: The name is Garcia.
	// agent: So that's a table for two on Friday at seven thirty, under the name Garcia. Is that right?
	// caller: Sorry, make it eight.
	// agent: No problem. So that's a table for eight on Friday at seven thirty, under the name Garcia. Is that right?
	// caller: What?
	// agent: So that's a table for eight on Friday at seven thirty, under the name Garcia. Is that right?
	// caller: Yes, that's right.
	// tool: book_table {Party:8 Day:friday Time:19:30 Name:Garcia}
	// agent: You're all booked. See you on Friday. Goodbye!
}
