package livekit_test

import (
	"context"
	"testing"
	"time"

	lkproto "github.com/livekit/protocol/livekit"
	lksdk "github.com/livekit/server-sdk-go/v2"
	"github.com/voicetest-go/voicetest/adapters/internal/adaptertest"
	"github.com/voicetest-go/voicetest/adapters/internal/adaptertest/readmecaps"
	"github.com/voicetest-go/voicetest/internal/peers/lkagent"
	"github.com/voicetest-go/voicetest/internal/peers/lkserver"
	"github.com/voicetest-go/voicetest/pcm"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/fixtures"
)

// TestRoomDeletedMidReply: when the room is deleted while the agent
// double is speaking (what the adapter's Close does when a check stops
// reading at the reply's first audio, as the conformance suite's
// MalformedFrames and Timeouts/RecvDeadline do), the double's reply is
// cut, its job ends, and it sends nothing more into the closed room.
//
// Before, the cut reply still published its transcript's trailer and
// the interrupted item; the SDK's PublishDataPacket waits up to its
// connect timeout (5 s) for a publisher connection that is not coming
// back, twice, so the worker's Close (a test's cleanup) took 10 s longer,
// and the job recorded "sending a session event: …". Here the room is
// deleted first, so the double always meets the closed room: the job's
// errors show it, without measuring time.
func TestRoomDeletedMidReply(t *testing.T) {
	t.Parallel()
	besideChecks(t)
	a, w := goAgent(t, lkagent.Config{Turns: []lkagent.Turn{{Reply: "Once upon a time there was a voice agent that talked for a very long time."}}})
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	conn, err := a.Connect(ctx, voicetest.Session{Name: t.Name(), Rate: pcm.DefaultRate, Logf: t.Logf})
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	readmecaps.Check(t, "`livekit`", conn.Capabilities())
	// One word: what the caller says is not the point (the double's reply
	// is fixed), and each burst of fake speech after Opus and WebRTC is a
	// chance for the double's transcription to fail under load (four
	// words failed on their last burst's tones once in six loaded runs).
	speech, err := fixtures.FakeTTS().Synthesize(ctx, voicetest.SpeechRequest{Text: "Story?", Rate: pcm.DefaultRate})
	if err != nil {
		t.Fatal(err)
	}
	adaptertest.SendPaced(t, ctx, conn, speech)
	adaptertest.SendPaced(t, ctx, conn, pcm.Silence(pcm.DefaultRate, 300*time.Millisecond))
	if err := conn.EndUtterance(ctx); err != nil {
		t.Fatalf("EndUtterance: %v", err)
	}
	adaptertest.RecvUntil(t, ctx, conn, adaptertest.IsKind(voicetest.AgentAudio))

	jobs := w.Jobs()
	if len(jobs) != 1 {
		t.Fatalf("%d jobs, want 1", len(jobs))
	}
	srv := server.Get(t)
	rooms := lksdk.NewRoomServiceClient(srv.URL, lkserver.DefaultKey, lkserver.DefaultSecret)
	if _, err := rooms.DeleteRoom(ctx, &lkproto.DeleteRoomRequest{Room: jobs[0].Room}); err != nil {
		t.Fatalf("deleting room %s: %v", jobs[0].Room, err)
	}
	var j lkagent.Job
	for {
		j = w.Jobs()[0]
		if j.Ended {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the double's job did not end after its room was deleted: %+v", j)
		case <-time.After(20 * time.Millisecond):
		}
	}
	if len(j.Errors) > 0 {
		t.Errorf("the double's job, its room deleted mid-reply, sent into the closed room: %q", j.Errors)
	}
	if j.Replies != 1 || j.Interrupted != 1 {
		t.Errorf("replies %d (interrupted %d), want the one reply cut by the room's end", j.Replies, j.Interrupted)
	}
}
