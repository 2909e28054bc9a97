package adaptertest

import (
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/voicetest-go/voicetest/adapters/twilio"
	"github.com/voicetest-go/voicetest/internal/peers/twiliobot"
	"github.com/voicetest-go/voicetest/voicetest"
)

// TestGoroutinesScopedToTheBubble: Goroutines (and so CheckNoLeak) counts
// the adapter goroutines of the caller's synctest bubble, or outside any
// bubble those outside every bubble: a conversation on the real clock and
// one in a bubble, open at the same time, see only their own.
func TestGoroutinesScopedToTheBubble(t *testing.T) {
	if g := Goroutines(); g != "" {
		t.Fatalf("adapter goroutines before the test:\n%s", g)
	}
	// A call on loopback TCP and the real clock, open until the test ends.
	conn, err := twilio.New(twiliobot.New(t, twiliobot.Config{}).URL).Connect(t.Context(), voicetest.Session{Name: t.Name(), Rate: 16000})
	if err != nil {
		t.Fatal(err)
	}
	CloseConn(t, conn)
	if Goroutines() == "" {
		t.Fatal("no adapter goroutine seen outside the bubbles while a call is open")
	}
	opened, done := make(chan struct{}), make(chan struct{})
	inBubble := make(chan string, 2)
	var sub sync.WaitGroup
	sub.Go(func() {
		t.Run("bubble", func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				inBubble <- Goroutines() // the real-clock call is not the bubble's
				n := NewMemNet(t)
				a := twilio.New(twiliobot.New(t, twiliobot.Config{Listener: n.Listen()}).URL)
				a.NetDial = n.Dial
				conn, err := a.Connect(t.Context(), voicetest.Session{Name: t.Name(), Rate: 16000})
				if err != nil {
					inBubble <- "none: " + err.Error()
					close(opened)
					t.Fatal(err)
				}
				inBubble <- Goroutines()
				close(opened)
				<-done
				conn.Close()
			})
		})
	})
	<-opened
	outside := Goroutines()
	close(done)
	sub.Wait()
	if g := <-inBubble; g != "" {
		t.Errorf("the bubble sees the real-clock call's goroutines:\n%s", g)
	}
	if g := <-inBubble; g == "" {
		t.Error("the bubble sees none of its own call's goroutines")
	}
	if outside == "" {
		t.Error("outside the bubble, the real-clock call's goroutines are not seen")
	}
	if strings.Contains(outside, "synctest bubble") {
		t.Errorf("outside the bubble, the bubble's goroutines are seen:\n%s", outside)
	}
}
