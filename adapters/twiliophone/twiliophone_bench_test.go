package twiliophone_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/voicetest-go/voicetest/adapters/internal/adaptertest"
	"github.com/voicetest-go/voicetest/adapters/twiliophone"
	"github.com/voicetest-go/voicetest/internal/peers/twiliocarrier"
	"github.com/voicetest-go/voicetest/pcm"
	"github.com/voicetest-go/voicetest/voicetest"
)

// minimalCarrier is Twilio for the per-turn benchmark, doing next to no
// work: Calls.json answers 201 with the Call, then fetches the call's
// webhook (form-encoded, signed with X-Twilio-Signature), opens the
// <Connect><Stream> of its TwiML with the TwiML's parameters, and sends
// "connected" and "start". On the stream it counts "media" without
// decoding it, and answers each "mark" at once: the echo (as if the audio
// before it had played: no line clock) and the agent's reply, one 20 ms
// media of a 440 Hz tone in µ-law, as if the agent at the other end had
// answered the moment it heard the end of the utterance. Hanging up
// (Calls/<sid>.json Status=completed) answers 200. media counts the media
// messages it read.
func minimalCarrier(b *testing.B, authToken string) (base string, media *atomic.Int64) {
	b.Helper()
	media = new(atomic.Int64)
	const callSid = "CA00000000000000000000000000000001"
	const streamSid = "MZ00000000000000000000000000000001"
	tone := adaptertest.Tone(8000, 440, 20*time.Millisecond, 9000)
	reply := []byte(`{"event":"media","sequenceNumber":"3","streamSid":"` + streamSid + `","media":{"track":"inbound","chunk":"1","timestamp":"0","payload":"` +
		base64.StdEncoding.EncodeToString(pcm.EncodeMulaw(nil, tone.Samples)) + `"}}`)
	var wg sync.WaitGroup
	ctx, cancel := context.WithCancel(context.Background())
	b.Cleanup(func() { cancel(); wg.Wait() })
	stream := func(voiceURL string, form url.Values) error {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, voiceURL, strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("X-Twilio-Signature", twiliocarrier.Signature(authToken, voiceURL, form))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		doc, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return err
		}
		var tw struct {
			Stream struct {
				URL    string `xml:"url,attr"`
				Params []struct {
					Name  string `xml:"name,attr"`
					Value string `xml:"value,attr"`
				} `xml:"Parameter"`
			} `xml:"Connect>Stream"`
		}
		if err := xml.Unmarshal(doc, &tw); err != nil || tw.Stream.URL == "" {
			return fmt.Errorf("TwiML %q without <Connect><Stream>: %v", doc, err)
		}
		params := `{`
		for i, p := range tw.Stream.Params {
			if i > 0 {
				params += ","
			}
			params += fmt.Sprintf("%q:%q", p.Name, p.Value)
		}
		params += `}`
		ws, _, err := websocket.Dial(ctx, tw.Stream.URL, nil)
		if err != nil {
			return err
		}
		defer ws.CloseNow()
		ws.Write(ctx, websocket.MessageText, []byte(`{"event":"connected","protocol":"Call","version":"1.0.0"}`))
		ws.Write(ctx, websocket.MessageText, []byte(`{"event":"start","sequenceNumber":"1","streamSid":"`+streamSid+`","start":{"streamSid":"`+streamSid+
			`","accountSid":"`+twiliocarrier.DefaultAccountSid+`","callSid":"`+callSid+`","tracks":["inbound"],"customParameters":`+params+
			`,"mediaFormat":{"encoding":"audio/x-mulaw","sampleRate":8000,"channels":1}}}`))
		isMedia, isMark := []byte(`"event":"media"`), []byte(`"event":"mark"`)
		adaptertest.ReadLoop(ws, func(data []byte) {
			switch {
			case bytes.Contains(data, isMedia):
				media.Add(1)
			case bytes.Contains(data, isMark):
				ws.Write(context.Background(), websocket.MessageText, data)  // the app's mark, echoed: same event, streamSid and name
				ws.Write(context.Background(), websocket.MessageText, reply) // no timer per write: a minimal peer
			}
		})
		return nil
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /2010-04-01/Accounts/{account}/Calls.json", func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		voiceURL := r.PostForm.Get("Url")
		form := url.Values{"CallSid": {callSid}, "AccountSid": {r.PathValue("account")}, "From": {r.PostForm.Get("From")},
			"To": {r.PostForm.Get("To")}, "CallStatus": {"in-progress"}, "Direction": {"outbound-api"}, "ApiVersion": {"2010-04-01"}}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := stream(voiceURL, form); err != nil && ctx.Err() == nil {
				b.Error(err)
			}
		}()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		io.WriteString(w, `{"sid":"`+callSid+`","status":"queued"}`)
	})
	mux.HandleFunc("POST /2010-04-01/Accounts/{account}/Calls/{sid}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"sid":"`+callSid+`","status":"completed"}`)
	})
	return adaptertest.BenchServer(b, mux).URL, media
}

// BenchmarkTwilioPhoneTurnMinimalPeer measures the harness's overhead per
// turn of a phone call on loopback: 600 ms of user audio at 24 kHz (30
// media messages of µ-law at 8 kHz) and EndUtterance's mark, which returns
// once the carrier echoes it, then the agent's 20 ms reply received as
// AgentAudio, against a carrier and agent that answer at once and do no
// work of their own. MaxAhead is an hour, so that the line's pacing never
// waits: what is measured is the harness's work, not the clock. ns/op is
// wall time; cpu-ns/op is the CPU time of the whole process (adapter and
// peer) per turn.
func BenchmarkTwilioPhoneTurnMinimalPeer(b *testing.B) {
	base, media := minimalCarrier(b, twiliocarrier.DefaultAuthToken)
	a := &twiliophone.Agent{AccountSid: twiliocarrier.DefaultAccountSid, AuthToken: twiliocarrier.DefaultAuthToken,
		From: ourNumber, To: agentNumber, APIBase: base, MaxAhead: time.Hour}
	conn := adaptertest.BenchConn(b, a, 24000)
	frames := adaptertest.BenchTurnFrames(24000)
	adaptertest.BenchTurns(b, conn, func(ctx context.Context) error { return adaptertest.SendUtterance(ctx, conn, frames) },
		adaptertest.IsKind(voicetest.AgentAudio))
	if want := int64(b.N) * 30; media.Load() != want {
		b.Fatalf("the carrier read %d media messages in %d turns, want %d", media.Load(), b.N, want)
	}
}
