package lkagent

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/livekit/protocol/auth"
	"github.com/livekit/protocol/livekit"
	protologger "github.com/livekit/protocol/logger"
	lksdk "github.com/livekit/server-sdk-go/v2"
	"github.com/voicetest-go/voicetest/internal/peers/lkserver"
)

// TestLeavesWhileBusy: when its session ends, the double leaves the room
// at once, even while a goroutine of the session is still busy in a call
// that does not heed the session's end (held here until the test lets it
// go; in the SDK, PublishDataPacket waits up to its connect timeout for
// a publisher connection). Before, the session waited for its goroutines
// and only then left: the caller's ExpectHangUp saw the agent still on
// the line (TestScenarioHangUp under load).
//
// The caller leaving ends the session here; the room service watches the
// agent go, from a room an observer keeps open. The check is of order, not speed:
// the agent must be gone while the goroutine is still held (the 30 s
// bound only ends a broken run).
func TestLeavesWhileBusy(t *testing.T) {
	srv := lkserver.New(t, lkserver.Config{})
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()

	held, release := make(chan struct{}), make(chan struct{})
	var heldOnce, releaseOnce sync.Once
	w := start(Config{URL: srv.URL, APIKey: lkserver.DefaultKey, APISecret: lkserver.DefaultSecret}, func() {
		heldOnce.Do(func() { close(held) })
		<-release
	})
	t.Cleanup(w.Close)
	letGo := func() { releaseOnce.Do(func() { close(release) }) }
	t.Cleanup(letGo) // before w.Close: cleanups run last first
	select {
	case <-w.regd:
	case <-ctx.Done():
		t.Fatalf("the worker did not register: %v", w.Err())
	}
	if err := w.Err(); err != nil {
		t.Fatal(err)
	}

	const room = "leaves-while-busy"
	join := func(identity string) *lksdk.Room {
		t.Helper()
		at := auth.NewAccessToken(lkserver.DefaultKey, lkserver.DefaultSecret)
		at.SetIdentity(identity).SetVideoGrant(&auth.VideoGrant{RoomJoin: true, Room: room}).SetValidFor(time.Hour)
		token, err := at.ToJWT()
		if err != nil {
			t.Fatal(err)
		}
		r, err := lksdk.ConnectToRoomWithToken(srv.URL, token, &lksdk.RoomCallback{}, lksdk.WithAutoSubscribe(false), lksdk.WithLogger(protologger.GetDiscardLogger()))
		if err != nil {
			t.Fatalf("%s joining %s: %v", identity, room, err)
		}
		t.Cleanup(r.Disconnect)
		return r
	}
	caller := join("caller")
	select {
	case <-held:
	case <-ctx.Done():
		t.Fatalf("no session of the double joined %s: jobs %+v", room, w.Jobs())
	}
	// A second participant keeps the room open once the caller has left
	// (the server closes a room that holds only agents).
	join("observer")
	rooms := lksdk.NewRoomServiceClient(srv.HTTPURL, lkserver.DefaultKey, lkserver.DefaultSecret)
	agents := func() []string {
		res, err := rooms.ListParticipants(ctx, &livekit.ListParticipantsRequest{Room: room})
		if err != nil {
			if strings.Contains(err.Error(), "not_found") || strings.Contains(err.Error(), "not found") {
				return nil // the room is gone, and the agent with it
			}
			t.Fatalf("listing the participants of %s: %v", room, err)
		}
		var ids []string
		for _, p := range res.Participants {
			if strings.HasPrefix(p.Identity, "agent-") {
				ids = append(ids, p.Identity)
			}
		}
		return ids
	}
	if got := agents(); len(got) != 1 {
		t.Fatalf("agents in the room while the session runs: %q, want the double", got)
	}

	caller.Disconnect() // ends the double's session
	bound := time.NewTimer(30 * time.Second)
	defer bound.Stop()
	for got := agents(); len(got) > 0; got = agents() {
		select {
		case <-bound.C:
			t.Fatalf("the double %q was still in the room 30 s after its caller left, its session over but a goroutine of it busy: "+
				"it must leave when the session ends, before it waits for its goroutines", got)
		case <-ctx.Done():
			t.Fatal(ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
	if j := w.Jobs(); len(j) != 1 || j[0].Ended {
		t.Fatalf("jobs %+v, want one, not ended while its goroutine is held", j)
	}
	// What the job says of its leave: the room's connection state then
	// (the SDK's names; "connected" unless the signal connection was down).
	if j := w.Jobs()[0]; !slices.Contains([]string{"connected", "reconnecting", "disconnected"}, j.LeftState) {
		t.Errorf("the job's LeftState is %q, want the room's connection state when the agent left", j.LeftState)
	}

	letGo()
	for {
		j := w.Jobs()[0]
		if j.Ended {
			if len(j.Errors) > 0 {
				t.Errorf("the job ended with errors %q", j.Errors)
			}
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the job did not end once its goroutine was let go: %+v", j)
		case <-time.After(20 * time.Millisecond):
		}
	}
}
