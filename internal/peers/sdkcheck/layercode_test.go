package sdkcheck_test

import (
	"encoding/json"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/voicetest-go/voicetest/internal/peers/layercodepeer"
)

// proxyTo forwards requests to target, as a customer backend's authorize
// route forwards to LayerCode.
func proxyTo(t *testing.T, target string) http.Handler {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	return &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		r.Out.URL = u
		r.Out.Host = u.Host
	}}
}

// TestLayerCodeDoubleWithJSSDK drives layercodepeer with LayerCode's
// browser SDK (@layercode/js-sdk) in headless Chromium: authorize through
// the page's backend, the WebSocket and client.ready, the greeting played
// and acknowledged, a spoken turn (transcripts, response.data, text deltas
// and the whole text, response.end, turn.end), a barge-in over a long
// reply (the SDK stops its player on turn.start role=user), a text turn,
// client.response.data, and a push-to-talk conversation
// (trigger.turn.start/end).
//
// What stays untested: the SDK's voice activity detection (its Silero
// model loads from assets.layercode.com, out of a test's reach, so the
// page turns it off and the double's turn detection decides, as when the
// SDK's VAD fails to load), vad_events with it, and a real microphone and
// speaker.
func TestLayerCodeDoubleWithJSSDK(t *testing.T) {
	t.Parallel()
	const (
		endSilence = 400 * time.Millisecond
		longReply  = "Tonight we have soup, fish, a pie, three salads, two pastas, a risotto, a curry, four kinds of bread, cheese from the hills, a stew, a tart, grilled lamb, roast chicken, a plate of vegetables from the garden and a very long list of desserts, wines and teas for you to choose from."
	)
	const rate = 16000
	files := pageSpeech(t, rate)
	// The doubles' ears keep what reached them: a failed run logs it and
	// writes it to the test's artifacts (go test -artifacts keeps them).
	var autoEar, pttEar ear
	defer autoEar.report(t, "auto")
	defer pttEar.report(t, "ptt")
	replies := func(n int, heard string) layercodepeer.Reply {
		switch n {
		case 1:
			// The page waits for each reply that is not interrupted to
			// play: they are short (what the user said is checked in
			// the transcripts).
			return layercodepeer.Reply{Text: "Table seven.", Data: json.RawMessage(`{"table":7}`)}
		case 2:
			// The user speaks over this reply as soon as it plays: its
			// length costs nothing when the barge-in comes, and is how
			// late the user's speech may reach the double (53 words,
			// 8 s: at load 30 the SDK's recorder was seen to deliver
			// speech 7 s late, after a 3 s reply had played out and been
			// acknowledged, which is then no barge-in).
			return layercodepeer.Reply{Text: longReply}
		case 3:
			// The barge-in's reply does not depend on its words: its
			// audio overlaps the agent's playback, when a loaded machine
			// is most likely to drop some of it; the turns before prove
			// that speech arrives intact.
			return layercodepeer.Reply{Text: "Sure."}
		}
		// The text turn: a one-word reply (the page waits for it to
		// play); the double's record shows the text it got.
		return layercodepeer.Reply{Text: "Ten."}
	}
	// An utterance ends after 400 ms of silence, two of the SDK's 205 ms
	// chunks: the speech's own pauses are 100 ms (pageSpeechSpeed), and
	// the fake microphone plays into the SDK's own AudioContext, so a
	// loaded machine delays the recorder's chunks but puts no silence
	// into them (the 800 ms of session 9 and the 600 ms of session 10
	// were for the browser's drop-outs: those were 10 ms, within a symbol,
	// from Chromium's MediaStream hop, which the microphone no longer
	// takes).
	//
	// The replies' audio goes out as it plays (RealTimeAudio), as a
	// streaming TTS sends it: the double takes the SDK's replay_finished
	// for the reply only once it has sent all of it. Sent at once, at
	// load 38 the SDK's player ran dry 0.3 s into the long reply, its
	// replay_finished ended the reply, and the user's barge-in was a new
	// turn that the text turn then overtook (0 interruptions).
	auto := layercodepeer.New(t, layercodepeer.Config{Greeting: "Hello.", Transcribe: autoEar.hear, Replies: replies, EndSilence: endSilence, RealTimeAudio: true})
	ptt := layercodepeer.New(t, layercodepeer.Config{Trigger: "push_to_talk", Transcribe: pttEar.hear, Replies: replies, EndSilence: endSilence})
	r := runBrowser(t, "layercode.html", url.Values{"ws": {auto.WebSocketURL}, "wsptt": {ptt.WebSocketURL}, "rate": {strconv.Itoa(rate)}}, files,
		map[string]http.Handler{
			"POST /api/authorize":     proxyTo(t, auto.AuthorizeURL),
			"POST /api/authorize-ptt": proxyTo(t, ptt.AuthorizeURL),
		})
	r.checkFailures(t)

	type message struct{ Type, Role, Content string }
	var msgs []message
	r.value(t, "messages", &msgs)
	var texts, users []string
	for _, m := range msgs {
		switch m.Type {
		case "response.text":
			texts = append(texts, m.Content)
		case "user.transcript":
			users = append(users, m.Content)
		}
	}
	wantTexts := []string{"Hello.", "Table seven.",
		longReply,
		"Sure.", "Ten."}
	if strings.Join(texts, "|") != strings.Join(wantTexts, "|") {
		t.Errorf("response.text the SDK got:\n%q\nwant\n%q", texts, wantTexts)
	}
	if len(users) != 3 || users[0] != helloLine || users[1] != specialsLine {
		t.Errorf("user transcripts the SDK got: %q", users)
	}
	var deltas []string
	r.value(t, "deltas", &deltas)
	if strings.Join(deltas, "") != strings.Join(wantTexts, "") {
		t.Errorf("response.text.delta pieces join to %q", strings.Join(deltas, ""))
	}
	var data []map[string]int
	r.value(t, "data", &data)
	if len(data) != 1 || data[0]["table"] != 7 {
		t.Errorf("response.data the SDK got: %v", data)
	}
	for _, k := range []string{"response.end", "turn.start/user", "turn.end/user", "trigger.response.audio.replay_finished", "agent_speaking:true", "ptt:turn.end/assistant"} {
		if r.Counts[k] == 0 {
			t.Errorf("the SDK never reported %s (counts %v)", k, r.Counts)
		}
	}

	over := func(c layercodepeer.Call) bool { return c.Ended }
	c := ended(t, auto.WaitCall, 0, over)
	if len(c.Errors) > 0 {
		t.Errorf("the double rejected what the SDK sent: %q", c.Errors)
	}
	if len(c.Heard) != 4 || c.Heard[3] != "When do you close?" {
		t.Errorf("the double heard %q; want the three spoken lines, then the text turn's text", c.Heard)
	}
	if c.Metadata["guest"] != "Sam" || c.Body["sdk_version"] == nil {
		t.Errorf("authorize body %v", c.Body)
	}
	if c.Interruptions != 1 || len(c.Data) != 1 || string(c.Data[0]) != `{"seat":"window"}` || c.Types[0] != "client.ready" {
		t.Errorf("the double saw %d interruptions, data %s, types %q", c.Interruptions, c.Data, c.Types)
	}
	for _, a := range c.Acks {
		if a.Reason != "completed" || a.TurnID != "" {
			t.Errorf("ack %+v; the SDK sends reason completed and no turn_id", a)
		}
	}
	if c.AudioMessages < 20 {
		t.Errorf("only %d client.audio messages", c.AudioMessages)
	}
	p := ended(t, ptt.WaitCall, 0, over)
	if len(p.Errors) > 0 || len(p.Heard) != 1 || p.Heard[0] != helloLine || !strings.Contains(strings.Join(p.Types, " "), "trigger.turn.start trigger.turn.end") {
		t.Errorf("push to talk: errors %q, heard %q, types %q", p.Errors, p.Heard, p.Types)
	}
}
