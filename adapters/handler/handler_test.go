package handler_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/voicetest-go/voicetest/adapters/handler"
	"github.com/voicetest-go/voicetest/adapters/internal/adaptertest/readmecaps"
	"github.com/voicetest-go/voicetest/pcm"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/fixtures"
)

// harness drives a Conn directly, recording each event with its time since
// Connect.
type harness struct {
	t     *testing.T
	conn  voicetest.Conn
	start time.Time
}

func connect(t *testing.T, a voicetest.Agent, rate int) *harness {
	t.Helper()
	start := time.Now()
	conn, err := a.Connect(t.Context(), voicetest.Session{Name: t.Name(), Rate: rate, Logf: voicetest.TestLogf(t)})
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	t.Cleanup(func() {
		if err := conn.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return &harness{t: t, conn: conn, start: start}
}

func (h *harness) since() time.Duration { return time.Since(h.start) }

// recv returns the next event, formatted.
func (h *harness) recv() string {
	h.t.Helper()
	ev, err := h.conn.Recv(h.t.Context())
	if err != nil {
		h.t.Fatalf("Recv at %v: %v", h.since(), err)
	}
	return format(h.since(), ev)
}

// until returns the events up to and including the first of kind.
func (h *harness) until(kind voicetest.EventKind) []string {
	h.t.Helper()
	var out []string
	for {
		ev, err := h.conn.Recv(h.t.Context())
		if err != nil {
			h.t.Fatalf("Recv at %v after %q: %v", h.since(), out, err)
		}
		out = append(out, format(h.since(), ev))
		if ev.Kind == kind {
			return out
		}
	}
}

func format(at time.Duration, ev voicetest.AgentEvent) string {
	s := fmt.Sprintf("%v %s", at, ev.Kind)
	if ev.Text != "" {
		s += " " + strconv.Quote(ev.Text)
	}
	if ev.Speech != 0 {
		s += " " + ev.Speech.String()
	}
	if ev.Kind == voicetest.AgentTranscript && !ev.Final {
		s += " delta"
	}
	if ev.Tool != nil {
		s += fmt.Sprintf(" %s %s %s%s", ev.Tool.ID, ev.Tool.Name, ev.Tool.Arguments, ev.Tool.Result)
		if ev.Tool.IsError {
			s += " error"
		}
	}
	if ev.Data != nil {
		s += " " + string(ev.Data)
	}
	if ev.Kind == voicetest.AgentAudio {
		s += " " + ev.Audio.Duration().String()
	}
	return s
}

func check(t *testing.T, got, want []string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("events:\n got:\n\t%s\nwant:\n\t%s", strings.Join(got, "\n\t"), strings.Join(want, "\n\t"))
	}
}

// echo greets, echoes text, and says goodbye on "bye".
func echo(ctx context.Context, ev handler.Event, c *handler.Call) error {
	switch ev := ev.(type) {
	case handler.StartEvent:
		return c.Say("Hello, how can I help?")
	case handler.TextEvent:
		if ev.Text == "bye" {
			if err := c.Say("Goodbye."); err != nil {
				return err
			}
			return c.HangUp("caller said bye")
		}
		return c.Say("You said: " + ev.Text)
	case handler.DTMFEvent:
		return c.Say("You pressed " + ev.Digits)
	}
	return nil
}

func TestHandlerConversation(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := connect(t, handler.New(echo, handler.WithThinkTime(300*time.Millisecond)), pcm.Rate16k)
		// 5 words at 150 wpm = 2 s.
		check(t, h.until(voicetest.AgentTurnEnd), []string{
			`300ms agent_transcript "Hello, how can I help?" 2s`,
			`2.3s agent_turn_end`,
		})
		time.Sleep(time.Second)
		if err := h.conn.SendText(t.Context(), "a table for two"); err != nil {
			t.Fatal(err)
		}
		check(t, h.until(voicetest.AgentTurnEnd), []string{
			`3.6s agent_transcript "You said: a table for two" 2.4s`,
			`6s agent_turn_end`,
		})
		if err := h.conn.SendDTMF(t.Context(), "42#"); err != nil {
			t.Fatal(err)
		}
		check(t, h.until(voicetest.AgentTurnEnd), []string{
			`6.3s agent_transcript "You pressed 42#" 1.2s`,
			`7.5s agent_turn_end`,
		})
		if err := h.conn.SendText(t.Context(), "bye"); err != nil {
			t.Fatal(err)
		}
		check(t, h.until(voicetest.AgentHangUp), []string{
			`7.8s agent_transcript "Goodbye." 400ms`,
			`8.2s agent_hang_up "caller said bye"`,
		})
		_, err := h.conn.Recv(t.Context())
		if !errors.Is(err, voicetest.ErrTransportClosed) {
			t.Fatalf("Recv after hang-up: %v, want ErrTransportClosed", err)
		}
		if err := h.conn.SendText(t.Context(), "hello?"); !errors.Is(err, voicetest.ErrTransportClosed) {
			t.Errorf("SendText after hang-up: %v, want ErrTransportClosed", err)
		}
	})
}

// TestHandlerQueuedInput sends text while the agent speaks: the event waits
// for the handler call in progress.
func TestHandlerQueuedInput(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := connect(t, handler.New(echo), pcm.Rate16k)
		first := h.recv()
		time.Sleep(500 * time.Millisecond)
		if err := h.conn.SendText(t.Context(), "hi"); err != nil {
			t.Fatal(err)
		}
		check(t, append(append([]string{first}, h.until(voicetest.AgentTurnEnd)...), h.until(voicetest.AgentTurnEnd)...), []string{
			`0s agent_transcript "Hello, how can I help?" 2s`,
			`2s agent_turn_end`,
			`2s agent_transcript "You said: hi" 1.2s`,
			`3.2s agent_turn_end`,
		})
	})
}

func TestHandlerWordsPerMinute(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := connect(t, handler.New(echo, handler.WithWordsPerMinute(100)), pcm.Rate16k)
		check(t, h.until(voicetest.AgentTurnEnd), []string{
			`0s agent_transcript "Hello, how can I help?" 3s`,
			`3s agent_turn_end`,
		})
	})
}

func TestHandlerInactivityTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var got []handler.TimeoutEvent
		h := connect(t, handler.New(func(ctx context.Context, ev handler.Event, c *handler.Call) error {
			switch ev := ev.(type) {
			case handler.StartEvent:
				return c.Say("Hi.")
			case handler.TimeoutEvent:
				got = append(got, ev)
				return c.Say("Are you there?")
			case handler.TextEvent:
				return c.Say("Great.")
			}
			return nil
		}, handler.WithInactivityTimeout(5*time.Second)), pcm.Rate16k)
		check(t, h.until(voicetest.AgentTurnEnd), []string{`0s agent_transcript "Hi." 400ms`, `400ms agent_turn_end`})
		// Idle from 0.4 s: the timeout fires at 5.4 s (delivered 1 ns later).
		check(t, h.until(voicetest.AgentTurnEnd), []string{
			`5.400000001s agent_transcript "Are you there?" 1.2s`,
			`6.600000001s agent_turn_end`,
		})
		check(t, h.until(voicetest.AgentTurnEnd), []string{
			`11.600000002s agent_transcript "Are you there?" 1.2s`,
			`12.800000002s agent_turn_end`,
		})
		time.Sleep(200 * time.Millisecond)
		if err := h.conn.SendText(t.Context(), "yes"); err != nil {
			t.Fatal(err)
		}
		check(t, h.until(voicetest.AgentTurnEnd), []string{
			`13.000000002s agent_transcript "Great." 400ms`,
			`13.400000002s agent_turn_end`,
		})
		check(t, h.until(voicetest.AgentTurnEnd), []string{
			`18.400000003s agent_transcript "Are you there?" 1.2s`,
			`19.600000003s agent_turn_end`,
		})
		want := []handler.TimeoutEvent{
			{Count: 1, SinceInput: 5400 * time.Millisecond},
			{Count: 2, SinceInput: 11600*time.Millisecond + 1},
			{Count: 1, SinceInput: 5400 * time.Millisecond},
		}
		if !slices.Equal(got, want) {
			t.Errorf("timeout events %+v, want %+v", got, want)
		}
	})
}

// TestHandlerInputWinsTimeoutTie sends text at the very instant the
// inactivity timeout expires: the input wins, every run.
func TestHandlerInputWinsTimeoutTie(t *testing.T) {
	for range 20 {
		synctest.Test(t, func(t *testing.T) {
			var timeouts atomic.Int32
			h := connect(t, handler.New(func(ctx context.Context, ev handler.Event, c *handler.Call) error {
				switch ev := ev.(type) {
				case handler.StartEvent:
					return c.Say("Hi.")
				case handler.TimeoutEvent:
					timeouts.Add(1)
					return c.Say("Hello?")
				case handler.TextEvent:
					return c.Say("You said " + ev.Text)
				}
				return nil
			}, handler.WithInactivityTimeout(3*time.Second)), pcm.Rate16k)
			h.until(voicetest.AgentTurnEnd) // at 400 ms
			time.Sleep(3 * time.Second)     // now exactly the deadline
			if err := h.conn.SendText(t.Context(), "tie"); err != nil {
				t.Fatal(err)
			}
			check(t, h.until(voicetest.AgentTurnEnd), []string{
				`3.4s agent_transcript "You said tie" 1.2s`,
				`4.6s agent_turn_end`,
			})
			if n := timeouts.Load(); n != 0 {
				t.Errorf("%d timeouts fired, want 0", n)
			}
		})
	}
}

func TestHandlerBackgroundTask(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := connect(t, handler.New(func(ctx context.Context, ev handler.Event, c *handler.Call) error {
			switch ev := ev.(type) {
			case handler.StartEvent:
				c.Set("status", "pending")
				err := c.Go("lookup", func(ctx context.Context, c *handler.Call) error {
					if c.Task() != "lookup" {
						return fmt.Errorf("Task() = %q", c.Task())
					}
					if err := c.Log("task started"); err != nil {
						return err
					}
					select {
					case <-time.After(2 * time.Second):
					case <-ctx.Done():
						return ctx.Err()
					}
					c.Set("status", "found")
					if err := c.Say("Found it."); err != nil {
						return err
					}
					return c.Emit("lookup_done", 42)
				})
				if err != nil {
					return err
				}
				if err := c.Say("One moment."); err != nil {
					return err
				}
				return c.Log("main")
			case handler.CustomEvent:
				status, _ := c.Get("status")
				return c.Say(fmt.Sprintf("Event %s %v, status %v.", ev.Name, ev.Data, status))
			}
			return nil
		}), pcm.Rate16k)
		var got []string
		for range 3 {
			got = append(got, h.until(voicetest.AgentTurnEnd)...)
		}
		check(t, got, []string{
			`0s agent_transcript "One moment." 800ms`,
			`800ms agent_log "main"`,
			`800ms agent_turn_end`,
			// The task's log, made at 0 s, was held during the handler call.
			`800ms agent_log "task started"`,
			`2s agent_transcript "Found it." 800ms`,
			`2.8s agent_turn_end`,
			`2.8s agent_transcript "Event lookup_done 42, status found." 2s`,
			`4.8s agent_turn_end`,
		})
	})
}

// TestHandlerTaskHeldDuringCall shows task speech waiting for the handler
// call in progress.
func TestHandlerTaskHeldDuringCall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := connect(t, handler.New(func(ctx context.Context, ev handler.Event, c *handler.Call) error {
			if _, ok := ev.(handler.StartEvent); !ok {
				return nil
			}
			if err := c.Go("quick", func(ctx context.Context, c *handler.Call) error {
				time.Sleep(100 * time.Millisecond)
				if err := c.Say("Task one."); err != nil {
					return err
				}
				return c.Say("Task two.")
			}); err != nil {
				return err
			}
			return c.Say("A long greeting of six words.")
		}), pcm.Rate16k)
		got := append(h.until(voicetest.AgentTurnEnd), h.until(voicetest.AgentTurnEnd)...)
		got = append(got, h.until(voicetest.AgentTurnEnd)...)
		check(t, got, []string{
			`0s agent_transcript "A long greeting of six words." 2.4s`,
			`2.4s agent_turn_end`,
			`2.4s agent_transcript "Task one." 800ms`,
			`3.2s agent_turn_end`,
			`3.2s agent_transcript "Task two." 800ms`,
			`4s agent_turn_end`,
		})
	})
}

func TestHandlerTools(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := connect(t, handler.New(func(ctx context.Context, ev handler.Event, c *handler.Call) error {
			te, ok := ev.(handler.TextEvent)
			if !ok {
				return nil
			}
			res, err := c.Tool("find_table", map[string]any{"party": te.Text}, func() (any, error) {
				time.Sleep(700 * time.Millisecond)
				return map[string]string{"time": "19:30"}, nil
			})
			if err != nil {
				return err
			}
			id, err := c.ToolCall("book", nil)
			if err != nil {
				return err
			}
			if err := c.ToolResult(id, nil, errors.New("no tables left")); err != nil {
				return err
			}
			if err := c.Data("ui_card", map[string]any{"time": res.(map[string]string)["time"]}); err != nil {
				return err
			}
			return c.Say("Sorry, it is full.")
		}), pcm.Rate16k)
		// The handler does not greet: its StartEvent ends no turn.
		if err := h.conn.SendText(t.Context(), "2"); err != nil {
			t.Fatal(err)
		}
		check(t, h.until(voicetest.AgentTurnEnd), []string{
			`0s tool_call call_1 find_table {"party":"2"}`,
			`700ms tool_result call_1 find_table {"time":"19:30"}`,
			`700ms tool_call call_2 book `,
			`700ms tool_result call_2 book {"error":"no tables left"} error`,
			`700ms data "ui_card" {"time":"19:30"}`,
			`700ms agent_transcript "Sorry, it is full." 1.6s`,
			`2.3s agent_turn_end`,
		})
	})
}

func TestHandlerInterrupt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var sayErrs []error
		var interrupt handler.InterruptEvent
		h := connect(t, handler.New(func(ctx context.Context, ev handler.Event, c *handler.Call) error {
			switch ev := ev.(type) {
			case handler.StartEvent:
				sayErrs = append(sayErrs, c.Say("one two three four five six seven eight nine ten"))
				sayErrs = append(sayErrs, c.Say("eleven twelve"))
				if err := c.Log("after speech"); err != nil {
					return err
				}
				sayErrs = append(sayErrs, c.SayWith("You must hear this.", handler.SayOptions{Uninterruptible: true}))
				return sayErrs[1]
			case handler.InterruptEvent:
				interrupt = ev
				return c.Say("Sorry, go ahead.")
			}
			return nil
		}), pcm.Rate16k)
		if got := h.recv(); got != `0s agent_transcript "one two three four five six seven eight nine ten" 4s` {
			t.Fatalf("first event %s", got)
		}
		time.Sleep(1500 * time.Millisecond)
		if err := h.conn.Interrupt(t.Context()); err != nil {
			t.Fatal(err)
		}
		if got := h.recv(); got != `1.5s agent_interrupted` {
			t.Fatalf("event %s", got)
		}
		if got := h.recv(); got != `1.5s agent_log "after speech"` {
			t.Fatalf("event %s", got)
		}
		if got := h.recv(); got != `1.5s agent_transcript "You must hear this." 1.6s` {
			t.Fatalf("event %s", got)
		}
		// Interrupting uninterruptible speech does nothing.
		time.Sleep(500 * time.Millisecond)
		if err := h.conn.Interrupt(t.Context()); err != nil {
			t.Fatal(err)
		}
		check(t, append(h.until(voicetest.AgentTurnEnd), h.until(voicetest.AgentTurnEnd)...), []string{
			`3.1s agent_turn_end`,
			`3.1s agent_transcript "Sorry, go ahead." 1.2s`,
			`4.3s agent_turn_end`,
		})
		if !errors.Is(sayErrs[0], handler.ErrInterrupted) || !errors.Is(sayErrs[1], handler.ErrInterrupted) || sayErrs[2] != nil {
			t.Errorf("Say errors = %v, want [interrupted interrupted nil]", sayErrs)
		}
		want := handler.InterruptEvent{Text: "one two three four five six seven eight nine ten", Played: 1500 * time.Millisecond}
		if interrupt != want {
			t.Errorf("InterruptEvent = %+v, want %+v", interrupt, want)
		}
		// With the agent idle there is nothing to interrupt.
		if err := h.conn.Interrupt(t.Context()); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Second)
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		if ev, err := h.conn.Recv(ctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Recv after idle interrupt = %v, %v; want no event", format(h.since(), ev), err)
		}
	})
}

func TestHandlerErrors(t *testing.T) {
	boom := errors.New("boom")
	for _, tc := range []struct {
		name string
		fn   handler.Func
		want string
	}{
		{"error", func(ctx context.Context, ev handler.Event, c *handler.Call) error {
			if _, ok := ev.(handler.TextEvent); ok {
				return fmt.Errorf("looking up: %w", boom)
			}
			return nil
		}, `adapters: handler agent "bot": handler failed handling TextEvent: looking up: boom`},
		{"panic", func(ctx context.Context, ev handler.Event, c *handler.Call) error {
			if _, ok := ev.(handler.TextEvent); ok {
				var m map[string]int
				//lint:ignore SA5000 the test needs a handler that panics
				m["x"]++
			}
			return nil
		}, `adapters: handler agent "bot": handler panicked handling TextEvent: panic: assignment to entry in nil map`},
		{"task", func(ctx context.Context, ev handler.Event, c *handler.Call) error {
			if _, ok := ev.(handler.TextEvent); ok {
				return c.Go("fetch", func(ctx context.Context, c *handler.Call) error { return boom })
			}
			return nil
		}, `adapters: handler agent "bot": background task "fetch" failed: boom`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := connect(t, handler.New(tc.fn, handler.WithName("bot")), pcm.Rate16k)
				expectSilentStart(t, h)
				if err := h.conn.SendText(t.Context(), "go"); err != nil {
					t.Fatal(err)
				}
				var herr *handler.Error
				var err error
				for err == nil { // a failing task may let the call's turn end first
					var ev voicetest.AgentEvent
					ev, err = h.conn.Recv(t.Context())
					if err == nil && ev.Kind != voicetest.AgentTurnEnd {
						t.Fatalf("unexpected event %s", format(h.since(), ev))
					}
				}
				for range 3 { // the same error every time
					if !errors.As(err, &herr) || err.Error() != tc.want {
						t.Fatalf("Recv error = %v, want %s", err, tc.want)
					}
					_, err = h.conn.Recv(t.Context())
				}
				if tc.name == "panic" && len(herr.Stack) == 0 {
					t.Error("no stack for a panic")
				}
				if tc.name != "panic" && !errors.Is(herr, boom) {
					t.Error("the handler's error is not wrapped")
				}
				if err := h.conn.SendText(t.Context(), "again"); err == nil || err.Error() != tc.want {
					t.Errorf("SendText after failure = %v", err)
				}
			})
		})
	}
}

// TestHandlerClose checks StopEvent delivery, cancellation of tasks and
// that every goroutine ends (synctest fails the test otherwise).
func TestHandlerClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		stopped := make(chan string, 1)
		var taskErr atomic.Value
		a := handler.New(func(ctx context.Context, ev handler.Event, c *handler.Call) error {
			switch ev.(type) {
			case handler.StartEvent:
				if err := c.Go("forever", func(ctx context.Context, c *handler.Call) error {
					<-ctx.Done()
					taskErr.Store(ctx.Err())
					return ctx.Err()
				}); err != nil {
					return err
				}
				return c.Say("This sentence will be cut off by the close.")
			case handler.StopEvent:
				v, _ := c.Get("k")
				if err := c.Say("Goodbye."); err != nil { // logged, not sent
					return err
				}
				stopped <- fmt.Sprint(v)
			}
			return nil
		}, handler.WithSessionData(map[string]any{"k": "v"}))
		conn, err := a.Connect(t.Context(), voicetest.Session{Rate: 16000, Logf: voicetest.TestLogf(t)})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := conn.Recv(t.Context()); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Second)
		if err := conn.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
		if err := conn.Close(); err != nil {
			t.Fatalf("second Close: %v", err)
		}
		if got := <-stopped; got != "v" {
			t.Errorf("StopEvent saw session data %q", got)
		}
		if err, _ := taskErr.Load().(error); !errors.Is(err, context.Canceled) {
			t.Errorf("task context: %v", err)
		}
		if _, err := conn.Recv(t.Context()); !errors.Is(err, voicetest.ErrTransportClosed) {
			t.Errorf("Recv after Close: %v", err)
		}
		if err := conn.SendText(t.Context(), "hi"); !errors.Is(err, voicetest.ErrTransportClosed) {
			t.Errorf("SendText after Close: %v", err)
		}
	})
}

// TestHandlerCloseStuck checks that Close does not hang on a handler that
// ignores its context.
func TestHandlerCloseStuck(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		a := handler.New(func(ctx context.Context, ev handler.Event, c *handler.Call) error {
			if _, ok := ev.(handler.StartEvent); ok {
				<-release
			}
			return nil
		}, handler.WithStopTimeout(2*time.Second))
		conn, err := a.Connect(t.Context(), voicetest.Session{Rate: 16000, Logf: voicetest.TestLogf(t)})
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		err = conn.Close()
		if err == nil || !strings.Contains(err.Error(), "the handler call for StartEvent did not return within 2s of Close") {
			t.Errorf("Close = %v", err)
		}
		if d := time.Since(start); d != 2*time.Second {
			t.Errorf("Close took %v of virtual time, want 2s", d)
		}
		close(release) // the leaked goroutine ends; synctest checks it
	})
}

func TestHandlerMisuse(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		kept := make(chan *handler.Call, 1)
		h := connect(t, handler.New(func(ctx context.Context, ev handler.Event, c *handler.Call) error {
			if _, ok := ev.(handler.StartEvent); ok {
				kept <- c
			}
			return nil
		}), pcm.Rate16k)
		expectSilentStart(t, h) // the StartEvent call has returned
		c := <-kept
		if err := c.Say("late"); err == nil || !strings.Contains(err.Error(), "used after its handler call returned") {
			t.Errorf("Say after return = %v", err)
		}
		if err := c.Say("   "); err == nil {
			t.Error("Say of nothing: no error")
		}
		if err := c.ToolResult("call_9", nil, nil); err == nil {
			t.Error("ToolResult of an unknown call: no error")
		}
		if err := c.Data("x", func() {}); err == nil {
			t.Error("Data with an unmarshalable payload: no error")
		}
		if err := h.conn.SendDTMF(t.Context(), "12x"); err == nil || !strings.Contains(err.Error(), `'x' is not a DTMF key`) {
			t.Errorf("SendDTMF(12x) = %v", err)
		}
		var unsup *voicetest.UnsupportedError
		if err := h.conn.SendAudio(t.Context(), pcm.Silence(16000, time.Second)); !errors.As(err, &unsup) {
			t.Errorf("SendAudio in text mode = %v, want UnsupportedError", err)
		}
	})
}

func TestHandlerOptionsErrors(t *testing.T) {
	for _, a := range []voicetest.Agent{
		handler.New(nil),
		handler.New(echo, handler.WithWordsPerMinute(0)),
		handler.New(echo, handler.WithInactivityTimeout(-1)),
		handler.New(echo, handler.AudioMode(nil, nil)),
		handler.New(echo, handler.WithThinkTime(-time.Second)),
		handler.New(echo, handler.WithStopTimeout(0)),
	} {
		if _, err := a.Connect(context.Background(), voicetest.Session{Rate: 16000}); err == nil {
			t.Errorf("Connect succeeded for a bad option")
		} else {
			t.Log(err)
		}
	}
	if _, err := handler.New(echo, handler.AudioMode(fixtures.FakeTTS(), fixtures.FakeSTT())).Connect(context.Background(), voicetest.Session{}); err == nil {
		t.Error("audio mode without a rate: no error")
	}
}

func TestHandlerCapabilities(t *testing.T) {
	a := handler.New(echo)
	if vt, ok := a.(interface{ VirtualTime() bool }); !ok || !vt.VirtualTime() {
		t.Error("the agent does not report VirtualTime")
	}
	synctest.Test(t, func(t *testing.T) {
		text := connect(t, a, 16000).conn.Capabilities()
		want := voicetest.Capabilities{Adapter: "handler", Text: true, StreamingTranscripts: true, DTMF: true,
			NativeInterrupt: true, TurnEnd: true, ToolEvents: true, VirtualTime: true, SessionClock: true}
		if text != want {
			t.Errorf("text mode capabilities %+v, want %+v", text, want)
		}
		readmecaps.Check(t, "`handler`", text, "text mode")
		audio := connect(t, handler.New(echo, handler.AudioMode(fixtures.FakeTTS(), fixtures.FakeSTT())), 8000).conn.Capabilities()
		want.Text, want.Audio = false, true
		want.InputFormat = voicetest.AudioFormat{Encoding: "pcm16", Rate: 8000}
		want.OutputFormat = want.InputFormat
		if audio != want {
			t.Errorf("audio mode capabilities %+v, want %+v", audio, want)
		}
		readmecaps.Check(t, "`handler`", audio, "audio mode")
	})
}

// TestHandlerDeterministic runs a conversation with a background task
// several times and requires identical timelines.
func TestHandlerDeterministic(t *testing.T) {
	run := func() []string {
		var got []string
		synctest.Test(t, func(t *testing.T) {
			h := connect(t, handler.New(func(ctx context.Context, ev handler.Event, c *handler.Call) error {
				switch ev := ev.(type) {
				case handler.StartEvent:
					return c.Go("ticker", func(ctx context.Context, c *handler.Call) error {
						for i := range 3 {
							time.Sleep(700 * time.Millisecond)
							if err := c.Log(fmt.Sprint("tick ", i)); err != nil {
								return err
							}
						}
						return nil
					})
				case handler.TextEvent:
					return c.Say("ok " + ev.Text)
				}
				return nil
			}, handler.WithThinkTime(100*time.Millisecond)), 16000)
			// The StartEvent call (100ms of think time) says nothing, so
			// it ends no turn (issue 14); the user speaks when it is over.
			time.Sleep(100 * time.Millisecond)
			for _, s := range []string{"a", "b"} {
				if err := h.conn.SendText(t.Context(), s); err != nil {
					t.Fatal(err)
				}
				got = append(got, h.until(voicetest.AgentTurnEnd)...)
			}
			got = append(got, h.recv(), h.recv())
		})
		return got
	}
	first := run()
	check(t, first, []string{
		`200ms agent_transcript "ok a" 800ms`,
		`1s agent_turn_end`,
		`1s agent_log "tick 0"`, // made at 0.8 s, held during the call
		`1.1s agent_transcript "ok b" 800ms`,
		`1.9s agent_turn_end`,
		`1.9s agent_log "tick 1"`, // made at 1.5 s, held
		`2.2s agent_log "tick 2"`, // no handler call: emitted at once
	})
	for range 5 {
		check(t, run(), first)
	}
}

func TestHandlerAudioMode(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tts, stt := fixtures.FakeTTS(), fixtures.FakeSTT()
		var heard []handler.TextEvent
		interrupted := make(chan handler.InterruptEvent, 10)
		h := connect(t, handler.New(func(ctx context.Context, ev handler.Event, c *handler.Call) error {
			switch ev := ev.(type) {
			case handler.StartEvent:
				return c.Say("Hello, how can I help?")
			case handler.TextEvent:
				heard = append(heard, ev)
				return c.Say("You said: " + ev.Text)
			case handler.InterruptEvent:
				interrupted <- ev
			}
			return nil
		}, handler.AudioMode(tts, stt)), pcm.Rate16k)

		// agentTurn collects the agent's audio until the turn ends and
		// checks the frames' pacing: frame k arrives k × 20 ms after the
		// transcript.
		agentTurn := func(wantText string) pcm.Chunk {
			t.Helper()
			start := h.since()
			audio := pcm.Chunk{Rate: pcm.Rate16k}
			var deltas strings.Builder
			final := false
			for k := 0; ; {
				ev, err := h.conn.Recv(t.Context())
				if err != nil {
					t.Fatal(err)
				}
				at := h.since() - start
				switch {
				case ev.Kind == voicetest.AgentTurnEnd:
					if at != audio.Duration() {
						t.Errorf("turn ended %v after it started, want the audio's %v", at, audio.Duration())
					}
					if !final || deltas.String() != wantText {
						t.Errorf("transcript deltas %q (final seen: %v), want %q", deltas.String(), final, wantText)
					}
					return audio
				case ev.Kind == voicetest.AgentTranscript && !ev.Final:
					// A delta per word, due when the word has played.
					if final || ev.Speech != 0 || at > audio.Duration() {
						t.Fatalf("delta %s after %v of audio", format(at, ev), audio.Duration())
					}
					deltas.WriteString(ev.Text)
				case ev.Kind == voicetest.AgentTranscript:
					if ev.Text != wantText || at != audio.Duration() {
						t.Fatalf("final transcript %s, want %q when the audio ends (%v)", format(at, ev), wantText, audio.Duration())
					}
					final = true
				case ev.Kind == voicetest.AgentAudio:
					if at != time.Duration(k)*20*time.Millisecond {
						t.Fatalf("frame %d at %v, want %v", k, at, time.Duration(k)*20*time.Millisecond)
					}
					if ev.Audio.Rate != pcm.Rate16k || ev.Audio.Duration() > 20*time.Millisecond {
						t.Fatalf("frame %d: %d Hz, %v", k, ev.Audio.Rate, ev.Audio.Duration())
					}
					audio.Samples = append(audio.Samples, ev.Audio.Samples...)
					k++
				default:
					t.Fatalf("unexpected %s", format(h.since(), ev))
				}
			}
		}
		greeting := agentTurn("Hello, how can I help?")
		want, err := tts.Synthesize(t.Context(), voicetest.SpeechRequest{Text: "Hello, how can I help?", Rate: pcm.Rate16k})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(greeting.Samples, want.Samples) {
			t.Errorf("greeting audio differs from the TTS output (%v vs %v)", greeting.Duration(), want.Duration())
		}
		if h.since() != 1895*time.Millisecond {
			t.Errorf("greeting ended at %v, want 1.895s", h.since())
		}

		// The user speaks, paced in real time, then ends the utterance.
		user, err := tts.Synthesize(t.Context(), voicetest.SpeechRequest{Text: "A table for 2, at 7pm.", Rate: pcm.Rate16k})
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range user.Frames(20 * time.Millisecond) {
			if err := h.conn.SendAudio(t.Context(), f); err != nil {
				t.Fatal(err)
			}
			time.Sleep(f.Duration())
		}
		if err := h.conn.EndUtterance(t.Context()); err != nil {
			t.Fatal(err)
		}
		if got := h.recv(); got != fmt.Sprintf(`%v user_transcript "A table for 2, at 7pm."`, 1895*time.Millisecond+user.Duration()) {
			t.Errorf("event %s", got)
		}
		reply := agentTurn("You said: A table for 2, at 7pm.")
		tr, err := stt.Transcribe(t.Context(), voicetest.TranscriptionRequest{Audio: reply})
		if err != nil || tr.Text != "You said: A table for 2, at 7pm." {
			t.Errorf("the agent's audio decodes to %q, %v", tr.Text, err)
		}
		if len(heard) != 1 || heard[0] != (handler.TextEvent{Text: "A table for 2, at 7pm.", Source: handler.SourceSpeech}) {
			t.Errorf("handler heard %+v", heard)
		}

		// Barge-in: user speech while the agent speaks cuts it short.
		if err := h.conn.SendAudio(t.Context(), user.Slice(0, 90*time.Millisecond)); err != nil {
			t.Fatal(err) // leading silence: not a barge-in
		}
		if err := h.conn.EndUtterance(t.Context()); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Second)
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		if ev, err := h.conn.Recv(ctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("silence made the agent answer: %s, %v", format(h.since(), ev), err)
		}
		ask, err := tts.Synthesize(t.Context(), voicetest.SpeechRequest{Text: "Hold on", Rate: pcm.Rate16k})
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range ask.Frames(20 * time.Millisecond) {
			if err := h.conn.SendAudio(t.Context(), f); err != nil {
				t.Fatal(err)
			}
			time.Sleep(f.Duration())
		}
		if err := h.conn.EndUtterance(t.Context()); err != nil {
			t.Fatal(err)
		}
		h.recv() // user_transcript
		replyAt := h.since()
		var text []string
		for frames := 0; frames < 30; { // 600 ms of the answer
			ev, err := h.conn.Recv(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if ev.Kind == voicetest.AgentAudio {
				frames++
			} else {
				text = append(text, format(h.since()-replyAt, ev))
			}
		}
		bargeAt := h.since()
		if bargeAt-replyAt != 580*time.Millisecond {
			t.Fatalf("30th frame at %v", bargeAt-replyAt)
		}
		// "You said: Hold on" is 1.5 s of fake speech; "You" ends 3/17 of
		// the way through the text.
		check(t, text, []string{`264.705882ms agent_transcript "You" delta`})
		if err := h.conn.SendAudio(t.Context(), ask.Slice(100*time.Millisecond, 120*time.Millisecond)); err != nil {
			t.Fatal(err)
		}
		// No turn end: neither the interrupted reply nor the silent
		// InterruptEvent call ends a turn; the agent listens.
		check(t, h.until(voicetest.AgentInterrupted), []string{
			fmt.Sprintf(`%v agent_transcript "You"`, bargeAt), // final: what was played
			fmt.Sprintf("%v agent_interrupted", bargeAt),
		})
		ctx2, cancel2 := context.WithTimeout(t.Context(), 5*time.Second)
		defer cancel2()
		if ev, err := h.conn.Recv(ctx2); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("after the barge-in: %s, %v; want nothing", format(h.since(), ev), err)
		}
		if ie := <-interrupted; ie.Text != "You said: Hold on" || ie.Played != 580*time.Millisecond || len(interrupted) != 0 {
			t.Errorf("InterruptEvent %+v (and %d more), want one after 580ms of %q", ie, len(interrupted), "You said: Hold on")
		}
	})
}

func TestHandlerAudioErrors(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := connect(t, handler.New(func(ctx context.Context, ev handler.Event, c *handler.Call) error {
			if _, ok := ev.(handler.StartEvent); ok {
				if err := c.Say("café"); err == nil || !errors.Is(err, fixtures.ErrCannotEncode) {
					return fmt.Errorf("Say of an unencodable text = %v", err)
				}
				if err := c.Play(pcm.Chunk{}); err == nil {
					return errors.New("Play of a chunk with no rate: no error")
				}
			}
			return nil
		}, handler.AudioMode(fixtures.FakeTTS(), fixtures.FakeSTT())), pcm.Rate16k)
		expectSilentStart(t, h)
		var unsup *voicetest.UnsupportedError
		if err := h.conn.SendText(t.Context(), "hi"); !errors.As(err, &unsup) {
			t.Errorf("SendText in audio mode = %v, want UnsupportedError", err)
		}
		if err := h.conn.SendAudio(t.Context(), pcm.Silence(8000, time.Second)); err == nil {
			t.Error("SendAudio at the wrong rate: no error")
		}
		// Real-sounding noise is not fake speech: EndUtterance reports it.
		noise := make([]int16, 8000)
		for i := range noise {
			noise[i] = int16((i*7919)%20000 - 10000)
		}
		if err := h.conn.SendAudio(t.Context(), pcm.Chunk{Rate: pcm.Rate16k, Samples: noise}); err != nil {
			t.Fatal(err)
		}
		if err := h.conn.EndUtterance(t.Context()); !errors.Is(err, fixtures.ErrNotFakeSpeech) {
			t.Errorf("EndUtterance of noise = %v, want ErrNotFakeSpeech", err)
		}
	})
}

// TestHandlerNoLeakRealTime runs a conversation on the real clock and checks
// that Close leaves no goroutine behind.
func TestHandlerNoLeakRealTime(t *testing.T) {
	before := runtime.NumGoroutine()
	a := handler.New(func(ctx context.Context, ev handler.Event, c *handler.Call) error {
		switch ev.(type) {
		case handler.StartEvent:
			if err := c.Go("bg", func(ctx context.Context, c *handler.Call) error {
				<-ctx.Done()
				return ctx.Err()
			}); err != nil {
				return err
			}
			return c.Say("hi")
		case handler.TextEvent:
			return c.Say("one two three")
		}
		return nil
	}, handler.WithWordsPerMinute(6000), handler.WithInactivityTimeout(time.Millisecond))
	conn, err := a.Connect(context.Background(), voicetest.Session{Rate: 16000})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	if _, err := conn.Recv(ctx); err != nil {
		t.Fatal(err)
	}
	if err := conn.SendText(ctx, "x"); err != nil {
		t.Fatal(err)
	}
	if err := conn.Close(); err != nil {
		t.Fatal(err)
	}
	n := runtime.NumGoroutine()
	for i := 0; i < 1000 && n > before; i++ {
		time.Sleep(time.Millisecond) // exiting goroutines need a moment to be reaped
		n = runtime.NumGoroutine()
	}
	if n > before {
		buf := make([]byte, 1<<16)
		t.Fatalf("%d goroutines before, %d after Close:\n%s", before, n, buf[:runtime.Stack(buf, true)])
	}
}

func ExampleNew() {
	agent := handler.New(func(ctx context.Context, ev handler.Event, c *handler.Call) error {
		switch ev := ev.(type) {
		case handler.StartEvent:
			return c.Say("Hi! What can I book for you?")
		case handler.TextEvent:
			_, err := c.Tool("book_table", map[string]string{"request": ev.Text}, func() (any, error) {
				return "confirmed", nil
			})
			if err != nil {
				return err
			}
			if err := c.Say("Booked. Goodbye!"); err != nil {
				return err
			}
			return c.HangUp("booking done")
		}
		return nil
	}, handler.WithWordsPerMinute(6000)) // 10 ms a word, to keep the example quick

	ctx := context.Background()
	conn, err := agent.Connect(ctx, voicetest.Session{Name: "example", Rate: pcm.Rate16k})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer conn.Close()
	show := func() {
		for {
			ev, err := conn.Recv(ctx)
			if err != nil {
				fmt.Println("closed:", errors.Is(err, voicetest.ErrTransportClosed))
				return
			}
			switch ev.Kind {
			case voicetest.AgentTranscript:
				fmt.Printf("%s %q (%v)\n", ev.Kind, ev.Text, ev.Speech)
			case voicetest.AgentToolCall:
				fmt.Println(ev.Kind, ev.Tool.Name, string(ev.Tool.Arguments))
			case voicetest.AgentToolResult:
				fmt.Println(ev.Kind, ev.Tool.Name, string(ev.Tool.Result))
			case voicetest.AgentHangUp:
				fmt.Println(ev.Kind, ev.Text)
			default:
				fmt.Println(ev.Kind)
			}
			if ev.Kind == voicetest.AgentTurnEnd {
				return
			}
		}
	}
	show()
	if err := conn.SendText(ctx, "two at seven"); err != nil {
		fmt.Println(err)
		return
	}
	show()
	// Output:
	// agent_transcript "Hi! What can I book for you?" (70ms)
	// agent_turn_end
	// tool_call book_table {"request":"two at seven"}
	// tool_result book_table "confirmed"
	// agent_transcript "Booked. Goodbye!" (20ms)
	// agent_hang_up booking done
	// closed: true
}

// BenchmarkHandlerTextTurn measures the adapter's overhead per user turn on
// the real clock: SendText, a handler call that logs, and the AgentLog and
// AgentTurnEnd events through Recv.
func BenchmarkHandlerTextTurn(b *testing.B) {
	a := handler.New(func(ctx context.Context, ev handler.Event, c *handler.Call) error {
		if te, ok := ev.(handler.TextEvent); ok {
			return c.Log(te.Text)
		}
		return nil
	})
	ctx := context.Background()
	conn, err := a.Connect(ctx, voicetest.Session{Rate: 16000})
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	b.ReportAllocs()
	for b.Loop() {
		if err := conn.SendText(ctx, "hello"); err != nil {
			b.Fatal(err)
		}
		for range 2 {
			if _, err := conn.Recv(ctx); err != nil {
				b.Fatal(err)
			}
		}
	}
}

func TestHandlerPlayAndSilence(t *testing.T) {
	greet := func(ctx context.Context, ev handler.Event, c *handler.Call) error {
		if _, ok := ev.(handler.StartEvent); !ok {
			return nil
		}
		if err := c.Play(pcm.Silence(pcm.Rate8k, time.Second)); err != nil { // converted to 16 kHz
			return err
		}
		if err := c.Silence(500 * time.Millisecond); err != nil {
			return err
		}
		return c.Say("Welcome.")
	}
	t.Run("text", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			h := connect(t, handler.New(greet), pcm.Rate16k)
			check(t, h.until(voicetest.AgentTurnEnd), []string{
				`0s agent_log "playing 1s of audio (text mode: no audio is sent)"`,
				`1.5s agent_transcript "Welcome." 400ms`,
				`1.9s agent_turn_end`,
			})
		})
	})
	t.Run("audio", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			h := connect(t, handler.New(greet, handler.AudioMode(fixtures.FakeTTS(), fixtures.FakeSTT())), pcm.Rate16k)
			var silent time.Duration
			var rest []string
			for {
				ev, err := h.conn.Recv(t.Context())
				if err != nil {
					t.Fatal(err)
				}
				if ev.Kind == voicetest.AgentAudio && silent < 1500*time.Millisecond {
					if slices.ContainsFunc(ev.Audio.Samples, func(v int16) bool { return v != 0 }) {
						t.Fatalf("non-silent frame at %v", h.since())
					}
					silent += ev.Audio.Duration()
					continue
				}
				if ev.Kind != voicetest.AgentAudio {
					rest = append(rest, format(h.since(), ev))
				}
				if ev.Kind == voicetest.AgentTurnEnd {
					break
				}
			}
			// "Welcome." is 705 ms of fake speech, its one word due at its end.
			check(t, rest, []string{
				`2.205s agent_transcript "Welcome." delta`,
				`2.205s agent_transcript "Welcome."`,
				`2.205s agent_turn_end`,
			})
			if silent != 1500*time.Millisecond {
				t.Errorf("%v of silent frames, want 1.5s", silent)
			}
		})
	})
}

// TestHandlerTaskInterruptAndHangUp interrupts a background task's speech
// and lets a task hang up.
func TestHandlerTaskInterruptAndHangUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var got []handler.InterruptEvent
		h := connect(t, handler.New(func(ctx context.Context, ev handler.Event, c *handler.Call) error {
			switch ev := ev.(type) {
			case handler.StartEvent:
				return c.Go("reader", func(ctx context.Context, c *handler.Call) error {
					err := c.Say("Reading you the terms and conditions now.")
					if !errors.Is(err, handler.ErrInterrupted) {
						return fmt.Errorf("Say = %v, want ErrInterrupted", err)
					}
					time.Sleep(time.Second)
					return c.HangUp("task done")
				})
			case handler.InterruptEvent:
				got = append(got, ev)
			}
			return nil
		}), pcm.Rate16k)
		check(t, h.until(voicetest.AgentTranscript), []string{
			// The StartEvent call says nothing: no turn end (issue 14).
			`0s agent_transcript "Reading you the terms and conditions now." 2.8s`,
		})
		time.Sleep(700 * time.Millisecond)
		if err := h.conn.Interrupt(t.Context()); err != nil {
			t.Fatal(err)
		}
		check(t, h.until(voicetest.AgentHangUp), []string{
			`700ms agent_interrupted`, // ends the task's turn; the silent InterruptEvent call ends none
			`1.7s agent_hang_up "task done"`,
		})
		want := []handler.InterruptEvent{{Text: "Reading you the terms and conditions now.", Played: 700 * time.Millisecond, Task: "reader"}}
		if !slices.Equal(got, want) {
			t.Errorf("InterruptEvents %+v, want %+v", got, want)
		}
	})
}

// recordingTTS wraps a TTS and records its requests.
type recordingTTS struct {
	voicetest.TTS
	reqs chan voicetest.SpeechRequest
}

func (r recordingTTS) Synthesize(ctx context.Context, req voicetest.SpeechRequest) (pcm.Chunk, error) {
	r.reqs <- req
	return r.TTS.Synthesize(ctx, req)
}

func TestHandlerVoice(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tts := recordingTTS{TTS: fixtures.FakeTTS(), reqs: make(chan voicetest.SpeechRequest, 2)}
		h := connect(t, handler.New(func(ctx context.Context, ev handler.Event, c *handler.Call) error {
			if _, ok := ev.(handler.StartEvent); !ok {
				return nil
			}
			if err := c.Say("One."); err != nil {
				return err
			}
			return c.SayWith("Two.", handler.SayOptions{Voice: "other", Instructions: "calm"})
		}, handler.AudioMode(tts, fixtures.FakeSTT()), handler.WithVoice("slt")), pcm.Rate8k)
		h.until(voicetest.AgentTurnEnd)
		want := []voicetest.SpeechRequest{
			{Text: "One.", Voice: "slt", Rate: pcm.Rate8k},
			{Text: "Two.", Voice: "other", Instructions: "calm", Rate: pcm.Rate8k},
		}
		for _, w := range want {
			if got := <-tts.reqs; got != w {
				t.Errorf("TTS request %+v, want %+v", got, w)
			}
		}
	})
}

// TestHandlerTurnEndRule: a silent answer to the user ends a turn; a silent
// start (an agent that does not greet) and a silent call for the agent's
// own events (timeouts, custom events) do not.
func TestHandlerTurnEndRule(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var timeouts atomic.Int32
		h := connect(t, handler.New(func(ctx context.Context, ev handler.Event, c *handler.Call) error {
			switch ev.(type) {
			case handler.TimeoutEvent:
				if timeouts.Add(1) == 2 {
					return c.Emit("nudge", nil)
				}
			case handler.CustomEvent:
				return c.Log("nudged")
			}
			return nil // silent
		}, handler.WithInactivityTimeout(time.Second)), pcm.Rate16k)
		// The silent StartEvent call ends no turn (issue 14): the first
		// event is the turn end of the silent answer to the user.
		if err := h.conn.SendText(t.Context(), "hello?"); err != nil {
			t.Fatal(err)
		}
		check(t, []string{h.recv()}, []string{`0s agent_turn_end`})
		// Timeouts at 1 s and 2 s say nothing: no turn ends; the custom
		// event's call only logs.
		check(t, []string{h.recv()}, []string{`2.000000002s agent_log "nudged"`})
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		defer cancel()
		for {
			ev, err := h.conn.Recv(ctx)
			if errors.Is(err, context.DeadlineExceeded) {
				break
			}
			if err != nil || ev.Kind == voicetest.AgentTurnEnd {
				t.Fatalf("%s, %v: want no turn end", format(h.since(), ev), err)
			}
		}
		if n := timeouts.Load(); n < 10 {
			t.Errorf("%d timeouts in 12 s, want one a second", n)
		}
	})
}
