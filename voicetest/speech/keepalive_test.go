package speech

import (
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/voicetest-go/voicetest/internal/peers/fakeopenai"
	"github.com/voicetest-go/voicetest/pcm"
	"github.com/voicetest-go/voicetest/voicetest"
)

// TestOpenAIEnginesKeepConnectionsAlive checks the HTTP client the OpenAI
// engines use when the caller gives none: each engine's calls share one
// kept-alive connection, outside a synctest bubble and inside one, where
// the virtual clock keeps running while that connection is idle between
// calls (an idle connection watched by a goroutine blocked on the network
// would stop it, and the bubble would never end).
func TestOpenAIEnginesKeepConnectionsAlive(t *testing.T) {
	srv := fakeopenai.New(t)
	srv.HandleTranscription(func(fakeopenai.TranscriptionRequest) (string, error) { return "a table for two", nil })
	tts, err := NewOpenAITTS(fakeOpts(srv, nil)...)
	require.NoError(t, err)
	stt, err := NewOpenAISTT(fakeOpts(srv, nil)...)
	require.NoError(t, err)
	audio := pcm.Chunk{Rate: pcm.Rate16k, Samples: make([]int16, 1600)}
	call := func(t *testing.T, i int) {
		_, err := tts.Synthesize(t.Context(), voicetest.SpeechRequest{Text: fmt.Sprintf("Line %d.", i)})
		require.NoError(t, err)
		tr, err := stt.Transcribe(t.Context(), voicetest.TranscriptionRequest{Audio: audio, Language: "en"})
		require.NoError(t, err)
		assert.Equal(t, "a table for two", tr.Text)
	}
	addrs := func(path string) []string {
		var a []string
		for _, r := range srv.RequestsTo(path) {
			a = append(a, r.RemoteAddr)
		}
		return a
	}
	for i := range 3 {
		call(t, i)
	}
	watchdog := time.AfterFunc(time.Minute, func() {
		panic("TestOpenAIEnginesKeepConnectionsAlive: the bubble did not finish in a minute: its clock stopped while a connection was idle")
	})
	defer watchdog.Stop()
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		for i := range 3 {
			call(t, 3+i)
			time.Sleep(time.Hour) // the connections are idle meanwhile
		}
		assert.Equal(t, 3*time.Hour, time.Since(start), "virtual time")
	})
	for _, path := range []string{"/v1/audio/speech", "/v1/audio/transcriptions"} {
		a := addrs(path)
		require.Len(t, a, 6, path)
		for i := range a {
			assert.Equal(t, a[0], a[i], "%s: call %d used another connection than the first (%v); calls 3 to 5 ran in a bubble", path, i, a)
		}
	}
	assert.NotEqual(t, addrs("/v1/audio/speech")[0], addrs("/v1/audio/transcriptions")[0], "each engine has its own client")
}
