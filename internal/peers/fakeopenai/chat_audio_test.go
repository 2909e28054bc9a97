package fakeopenai

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/voicetest-go/voicetest/pcm"
)

func TestChatInputAudio(t *testing.T) {
	s := New(t)
	var got ChatRequest
	s.HandleChat(func(req ChatRequest) (ChatReply, error) {
		got = req
		return ChatReply{Content: "heard it"}, nil
	})
	wav, err := pcm.EncodeWAV(pcm.Silence(16000, 1500*time.Millisecond))
	require.NoError(t, err)
	data := base64.StdEncoding.EncodeToString(wav)
	st, body := postJSON(t, s, "/v1/chat/completions", fmt.Sprintf(`{"model":"gpt-4o-audio-preview","messages":[
		{"role":"system","content":"Judge the call."},
		{"role":"user","content":[{"type":"text","text":"The call:"},{"type":"text","text":"Turn 1:"},{"type":"input_audio","input_audio":{"data":%q,"format":"wav"}},{"type":"input_audio","input_audio":{"data":"SUQz","format":"mp3"}}]}]}`, data))
	require.Equal(t, http.StatusOK, st, "%s", body)
	require.Len(t, got.Messages, 2)
	u := got.Messages[1]
	assert.Equal(t, "The call:Turn 1:", u.Content)
	require.Len(t, u.Audio, 2)
	assert.Equal(t, InputAudio{Format: "wav", Data: wav, Duration: 1500 * time.Millisecond, TextBefore: "The call:Turn 1:"}, u.Audio[0])
	assert.Equal(t, InputAudio{Format: "mp3", Data: []byte("ID3")}, u.Audio[1])

	for _, tc := range []struct{ msgs, param, msg string }{
		{`[{"role":"system","content":[{"type":"input_audio","input_audio":{"data":"","format":"wav"}}]}]`, "messages[0].content[0].type", "input_audio is for user messages"},
		{`[{"role":"user","content":[{"type":"input_audio","input_audio":{"data":"AAAA","format":"flac"}}]}]`, "messages[0].content[0].input_audio.format", "Supported values are: 'wav' and 'mp3'"},
		{`[{"role":"user","content":[{"type":"input_audio","input_audio":{"format":"wav"}}]}]`, "messages[0].content[0].input_audio.data", "Missing required parameter"},
		{`[{"role":"user","content":[{"type":"input_audio","input_audio":{"data":"!!","format":"wav"}}]}]`, "messages[0].content[0].input_audio.data", "not valid base64"},
		{`[{"role":"user","content":[{"type":"input_audio","input_audio":{"data":"AAAA","format":"wav"}}]}]`, "messages[0].content[0].input_audio.data", "not a WAV file"},
		{`[{"role":"user","content":[{"type":"input_audio"}]}]`, "messages[0].content[0].input_audio", "Missing required parameter"},
		{`[{"role":"user","content":[{"type":"image_url","image_url":{"url":"x"}}]}]`, "messages[0].content[0].type", "only text and input_audio"},
	} {
		st, body := postJSON(t, s, "/v1/chat/completions", `{"model":"gpt-4o-audio-preview","messages":`+tc.msgs+`}`)
		assert.Equal(t, http.StatusBadRequest, st, "%s: %s", tc.msgs, body)
		msg, _, param := apiError(t, body)
		assert.Equal(t, tc.param, param, tc.msgs)
		assert.Contains(t, msg, tc.msg, tc.msgs)
	}
}
