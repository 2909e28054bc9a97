package gemini_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/voicetest-go/voicetest/adapters/gemini"
	"github.com/voicetest-go/voicetest/adapters/internal/adaptertest"
	"github.com/voicetest-go/voicetest/internal/peers/peerkit"
	"github.com/voicetest-go/voicetest/pcm"
)

// liveInput is one realtimeInput message a recordingLive server read:
// its field, and the PCM16 of an audio one.
type liveInput struct {
	field string // "activityStart", "audio", "activityEnd", "text"
	audio []byte
}

// recordingLive is a Live server that answers setup with setupComplete
// (JSON in a binary frame, as the service sends it) and reports every
// realtimeInput message it reads on the channel it returns, in order.
func recordingLive(t *testing.T) (url string, in <-chan liveInput) {
	t.Helper()
	ch := make(chan liveInput, 1024)
	srv := peerkit.Start(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer ws.CloseNow()
		ws.SetReadLimit(1 << 20)
		for {
			_, data, err := ws.Read(r.Context())
			if err != nil {
				return
			}
			if bytes.HasPrefix(data, []byte(`{"setup"`)) {
				ws.Write(r.Context(), websocket.MessageBinary, []byte(`{"setupComplete":{}}`))
				continue
			}
			var m struct {
				RealtimeInput map[string]json.RawMessage `json:"realtimeInput"`
			}
			if err := json.Unmarshal(data, &m); err != nil || len(m.RealtimeInput) != 1 {
				t.Errorf("not one realtimeInput field: %.200s", data)
				continue
			}
			for field, v := range m.RealtimeInput {
				li := liveInput{field: field}
				if field == "audio" {
					var blob struct{ MIMEType, Data string }
					json.Unmarshal(v, &blob)
					if blob.MIMEType != "audio/pcm;rate=16000" {
						t.Errorf("audio of type %q", blob.MIMEType)
					}
					li.audio, _ = base64.StdEncoding.DecodeString(blob.Data)
				}
				ch <- li
			}
		}
	}))
	t.Cleanup(srv.Close)
	return srv.WSURL(""), ch
}

// ramp returns n frames of 20 ms at 16 kHz whose samples all differ, so
// that any loss or reordering shows.
func ramp(n int) []pcm.Chunk {
	frames := make([]pcm.Chunk, n)
	for i := range frames {
		s := make([]int16, 320)
		for j := range s {
			s[j] = int16(i*320 + j)
		}
		frames[i] = pcm.Chunk{Rate: 16000, Samples: s}
	}
	return frames
}

// recv returns the next realtimeInput the server read.
func recv(t *testing.T, in <-chan liveInput) liveInput {
	t.Helper()
	select {
	case li := <-in:
		return li
	case <-time.After(10 * time.Second):
		t.Fatal("the server read nothing in 10 s")
		return liveInput{}
	}
}

// Frames sent faster than the adapter writes them (Fast pacing: fifty
// 20 ms frames back to back) go as fewer realtimeInput audio messages,
// none over a second of audio, holding the same samples in the same
// order, between activityStart and activityEnd.
func TestGeminiAudioBacklogBatched(t *testing.T) {
	url, in := recordingLive(t)
	a := gemini.New("")
	a.BaseURL, a.APIKey = url, "test-key"
	conn := adaptertest.DialAgent(t, a, adaptertest.Session(t, 16000))
	ctx := t.Context()
	frames := ramp(50)
	var want []byte
	for _, f := range frames {
		want = pcm.EncodePCM16(want, f.Samples)
	}
	if err := adaptertest.SendUtterance(ctx, conn, frames); err != nil {
		t.Fatal(err)
	}
	if li := recv(t, in); li.field != "activityStart" {
		t.Fatalf("first message %s, want activityStart", li.field)
	}
	var got []byte
	msgs := 0
	for {
		li := recv(t, in)
		if li.field == "activityEnd" {
			break
		}
		if li.field != "audio" {
			t.Fatalf("a %s message inside the activity", li.field)
		}
		if len(li.audio) > 32000 {
			t.Errorf("an audio message of %d bytes, over 1 s at 16 kHz", len(li.audio))
		}
		msgs++
		got = append(got, li.audio...)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("the server got %d bytes of audio, not the %d sent in order", len(got), len(want))
	}
	if msgs > len(frames)/2 {
		t.Errorf("%d frames sent back to back went as %d audio messages; want them batched (at most %d)", len(frames), msgs, len(frames)/2)
	}
	t.Logf("%d frames in %d audio messages", len(frames), msgs)
}

// In real-time pacing a frame goes at once, alone: each SendAudio's frame
// reaches the server as its own audio message before the next is sent,
// so batching adds no latency.
func TestGeminiAudioLoneFrameAtOnce(t *testing.T) {
	url, in := recordingLive(t)
	a := gemini.New("")
	a.BaseURL, a.APIKey = url, "test-key"
	conn := adaptertest.DialAgent(t, a, adaptertest.Session(t, 16000))
	ctx := t.Context()
	for i, f := range ramp(10) {
		if err := conn.SendAudio(ctx, f); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			if li := recv(t, in); li.field != "activityStart" {
				t.Fatalf("first message %s, want activityStart", li.field)
			}
		}
		li := recv(t, in)
		if want := pcm.EncodePCM16(nil, f.Samples); li.field != "audio" || !bytes.Equal(li.audio, want) {
			t.Fatalf("frame %d: the server got %s of %d bytes, want that frame's %d bytes alone", i, li.field, len(li.audio), len(want))
		}
	}
	if err := conn.EndUtterance(ctx); err != nil {
		t.Fatal(err)
	}
	if li := recv(t, in); li.field != "activityEnd" {
		t.Fatalf("after the frames: %s, want activityEnd", li.field)
	}
}
