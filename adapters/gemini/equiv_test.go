package gemini

// The equivalence tests: the condition on which this package speaks the
// Live protocol itself rather than through the genai SDK. Each runs the
// SDK's own Live client (genai v1.77.0) and this package's client against
// the same recording loopback server, or gives both the same server
// messages, and requires the same result.

import (
	stdcmp "cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/google/go-cmp/cmp"
	"github.com/voicetest-go/voicetest/adapters/internal/adaptertest"
	"github.com/voicetest-go/voicetest/internal/peers/peerkit"
	"github.com/voicetest-go/voicetest/pcm"
	"github.com/voicetest-go/voicetest/voicetest"
	"google.golang.org/genai"
)

// equivKey is the API key of the equivalence tests (a made-up one).
const equivKey = "equiv-test-key-0123456789"

// recorded is what the recording server saw of one connection.
type recorded struct {
	path, query string
	header      http.Header
	frames      chan recFrame // what the client sent, in order
}

// recFrame is one message a client sent.
type recFrame struct {
	typ  websocket.MessageType
	data []byte
}

// recorder is a Live server that records each connection: it answers
// the first message with setupComplete (JSON in a binary frame, as the
// service sends it), then sends script, and records every message.
type recorder struct {
	url   string
	conns chan *recorded
	n     int // connections named (caseHeader)
}

// ids returns the names of the next pair of connections: the SDK's and
// ours.
func (r *recorder) ids() (sdk, ours string) {
	r.n++
	return fmt.Sprintf("sdk-%d", r.n), fmt.Sprintf("ours-%d", r.n)
}

// caseHeader names each connection of a test (its value is "sdk-N" or
// "ours-N"), so that a connection the SDK opens and then abandons (it
// dials before it converts the configuration, and does not close the
// socket when the conversion fails) is not taken for the next one. It is
// not compared.
const caseHeader = "X-Equiv-Case"

// newRecorder starts a recording server that sends script after
// setupComplete.
func newRecorder(t *testing.T, script ...[]byte) *recorder {
	t.Helper()
	r := &recorder{conns: make(chan *recorded, 1024)}
	srv := peerkit.Start(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		rec := &recorded{path: req.URL.Path, query: req.URL.RawQuery, header: req.Header.Clone(), frames: make(chan recFrame, 1024)}
		ws, err := websocket.Accept(w, req, nil)
		if err != nil {
			return
		}
		defer ws.CloseNow()
		ws.SetReadLimit(4 << 20)
		r.conns <- rec
		ctx := req.Context()
		for first := true; ; first = false {
			typ, data, err := ws.Read(ctx)
			if err != nil {
				return
			}
			rec.frames <- recFrame{typ, data}
			if !first {
				continue
			}
			if ws.Write(ctx, websocket.MessageBinary, []byte(`{"setupComplete":{}}`)) != nil {
				return
			}
			for _, m := range script {
				if ws.Write(ctx, websocket.MessageBinary, m) != nil {
					return
				}
			}
		}
	}))
	t.Cleanup(srv.Close)
	r.url = srv.WSURL("")
	return r
}

// next returns the record of the connection named id (caseHeader),
// skipping others.
func (r *recorder) next(t *testing.T, id string) *recorded {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case c := <-r.conns:
			if c.header.Get(caseHeader) == id {
				return c
			}
		case <-timeout:
			t.Fatalf("no connection %s in 10 s", id)
			return nil
		}
	}
}

// frame returns the connection's next message.
func (c *recorded) frame(t *testing.T) recFrame {
	t.Helper()
	select {
	case f := <-c.frames:
		return f
	case <-time.After(10 * time.Second):
		t.Fatal("no message in 10 s")
		return recFrame{}
	}
}

// sdkSession connects the genai SDK's Live client to base as the adapter
// does for a (the same key, base URL, API version and headers, and the
// configuration a built).
func sdkSession(t *testing.T, a *Agent, base, id string) (*genai.Session, error) {
	t.Helper()
	cfg, err := a.liveConfig()
	if err != nil {
		return nil, err
	}
	h := a.Header.Clone()
	if h == nil {
		h = http.Header{}
	}
	h.Set(caseHeader, id)
	client, err := genai.NewClient(t.Context(), &genai.ClientConfig{APIKey: a.APIKey, Backend: genai.BackendGeminiAPI,
		HTTPOptions: genai.HTTPOptions{BaseURL: base, APIVersion: stdcmp.Or(a.APIVersion, DefaultAPIVersion), Headers: h}})
	if err != nil {
		return nil, err
	}
	return client.Live.Connect(t.Context(), stdcmp.Or(a.Model, DefaultModel), cfg)
}

// ourConn connects the adapter to base, with a session at rate.
func ourConn(t *testing.T, a *Agent, base, id string, rate int) (*conn, error) {
	t.Helper()
	b := *a
	b.BaseURL = base
	b.Header = a.Header.Clone()
	if b.Header == nil {
		b.Header = http.Header{}
	}
	b.Header.Set(caseHeader, id)
	c, err := b.Connect(t.Context(), adaptertest.Session(t, rate))
	if err != nil {
		return nil, err
	}
	t.Cleanup(func() { c.Close() })
	return c.(*conn), nil
}

// jsonDiff returns the difference between two JSON messages, parsed
// (member order and number spelling aside), or "" when they are the same.
func jsonDiff(sdk, ours []byte) string {
	var a, b any
	if err := json.Unmarshal(sdk, &a); err != nil {
		return fmt.Sprintf("the SDK's message is not JSON: %v: %.300s", err, sdk)
	}
	if err := json.Unmarshal(ours, &b); err != nil {
		return fmt.Sprintf("our message is not JSON: %v: %.300s", err, ours)
	}
	return cmp.Diff(a, b)
}

// handshakeDiff compares the handshakes of two connections: the path,
// the query and the headers, but the random Sec-WebSocket-Key.
func handshakeDiff(sdk, ours *recorded) string {
	strip := func(h http.Header) http.Header {
		h = h.Clone()
		h.Del("Sec-WebSocket-Key")
		h.Del(caseHeader)
		return h
	}
	return cmp.Diff(
		map[string]any{"path": sdk.path, "query": sdk.query, "header": strip(sdk.header)},
		map[string]any{"path": ours.path, "query": ours.query, "header": strip(ours.header)})
}

// setupCase is a configuration to compare.
type setupCase struct {
	name string
	a    *Agent
}

// compareSetup connects the SDK and the adapter for a and compares their
// handshakes and setup messages. It returns our error when the adapter
// refuses the configuration and the SDK takes it (the caller decides
// whether that may be); it fails the test when the SDK refuses what the
// adapter sends, or when what they send differs.
func compareSetup(t *testing.T, rec *recorder, a *Agent) (refused error) {
	t.Helper()
	sid, oid := rec.ids()
	sess, sdkErr := sdkSession(t, a, rec.url, sid)
	var sdkRec *recorded
	if sdkErr == nil {
		sdkRec = rec.next(t, sid)
		sess.Close()
	} else if strings.Contains(sdkErr.Error(), "Connect to") {
		t.Fatalf("the SDK could not reach the recorder: %v", sdkErr)
	}
	_, ourErr := ourConn(t, a, rec.url, oid, 16000)
	var ourRec *recorded
	if ourErr == nil {
		ourRec = rec.next(t, oid)
	}
	switch {
	case sdkErr != nil && ourErr != nil:
		return nil
	case sdkErr != nil:
		t.Errorf("the SDK refuses the configuration (%v); the adapter sent it", sdkErr)
		return nil
	case ourErr != nil:
		return ourErr
	}
	if d := handshakeDiff(sdkRec, ourRec); d != "" {
		t.Errorf("handshake differs (-SDK +ours):\n%s", d)
	}
	sf, of := sdkRec.frame(t), ourRec.frame(t)
	if sf.typ != of.typ {
		t.Errorf("setup in a frame of type %v, the SDK's %v", of.typ, sf.typ)
	}
	if d := jsonDiff(sf.data, of.data); d != "" {
		t.Errorf("setup differs (-SDK +ours):\n%s\nSDK:  %s\nours: %s", d, sf.data, of.data)
	}
	return nil
}

// baseAgent is an agent with every field the adapter maps set.
func baseAgent() *Agent {
	a := New("gemini-equiv-model")
	a.APIKey = equivKey
	a.SystemInstruction = "You book tables. <b>Be brief</b> & \"kind\"."
	a.Voice = "Algieba"
	a.Tools = []Tool{
		{Name: "book", Description: "Books a table.", Parameters: json.RawMessage(`{"type":"object","properties":{"size":{"type":"integer"},"when":{"type":"string","format":"date-time"}},"required":["size"]}`)},
		{Name: "hang_up"},
	}
	a.Header = http.Header{"X-Test-Header": {"one", "two"}}
	return a
}

// TestEquivalentSetup: for the adapter's own configurations (every Agent
// field it maps, Configure-d settings, the default and a custom model,
// API versions, headers, an ephemeral token), the adapter dials the same
// URL with the same headers and sends the same setup message as the genai
// SDK's Live.Connect given the same configuration.
func TestEquivalentSetup(t *testing.T) {
	rec := newRecorder(t)
	cases := []setupCase{{"plain", &Agent{APIKey: equivKey}}, {"every field", baseAgent()}}
	add := func(name string, f func(a *Agent)) {
		a := baseAgent()
		f(a)
		cases = append(cases, setupCase{name, a})
	}
	add("configure", func(a *Agent) {
		a.Configure = func(c *genai.LiveConnectConfig) {
			c.Temperature = genai.Ptr[float32](0.7)
			c.TopP = genai.Ptr[float32](0.9)
			c.TopK = genai.Ptr[float32](40)
			c.MaxOutputTokens = 1000
			c.Seed = genai.Ptr[int32](42)
			c.SpeechConfig.LanguageCode = "fr-FR"
			c.ContextWindowCompression = &genai.ContextWindowCompressionConfig{TriggerTokens: genai.Ptr[int64](25000), SlidingWindow: &genai.SlidingWindow{TargetTokens: genai.Ptr[int64](12000)}}
			c.ThinkingConfig = &genai.ThinkingConfig{IncludeThoughts: false, ThinkingBudget: genai.Ptr[int32](0)}
			c.EnableAffectiveDialog = genai.Ptr(false)
			c.Proactivity = &genai.ProactivityConfig{ProactiveAudio: genai.Ptr(true)}
			c.MediaResolution = genai.MediaResolutionLow
			c.SessionResumption = &genai.SessionResumptionConfig{Handle: "h-1"}
			c.Labels = map[string]string{"suite": "voicetest"}
		}
	})
	add("models/ prefix", func(a *Agent) { a.Model = "models/gemini-x" })
	add("tunedModels/ prefix", func(a *Agent) { a.Model = "tunedModels/my-tune" })
	add("bad model", func(a *Agent) { a.Model = "gemini?x=1" })
	add("v1alpha", func(a *Agent) { a.APIVersion = "v1alpha" })
	add("ephemeral token", func(a *Agent) { a.APIVersion, a.APIKey = "v1alpha", "auth_tokens/equiv-token" })
	add("ephemeral token v1beta", func(a *Agent) { a.APIKey = "auth_tokens/equiv-token" })
	add("key in a header too", func(a *Agent) { a.Header.Set("x-goog-api-key", "another") })
	add("no header", func(a *Agent) { a.Header = nil })
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if err := compareSetup(t, rec, c.a); err != nil {
				t.Errorf("the adapter refuses what the SDK sends: %v", err)
			}
		})
	}
	// A base URL with a path (a proxy's): the path is kept, before ws/….
	t.Run("base path", func(t *testing.T) {
		a := baseAgent()
		sdkRec, ourRec := connectBoth(t, rec, a, rec.url+"/proxy/live/", 16000)
		if d := handshakeDiff(sdkRec, ourRec); d != "" || !strings.HasPrefix(ourRec.path, "/proxy/live/ws/") {
			t.Errorf("path %q; handshake differs (-SDK +ours):\n%s", ourRec.path, d)
		}
	})
}

// connectBoth connects the SDK and the adapter (at rate) to base, which
// is rec's URL with something added, and returns their records.
func connectBoth(t *testing.T, rec *recorder, a *Agent, base string, rate int) (sdk, ours *recorded) {
	t.Helper()
	sid, oid := rec.ids()
	sess, err := sdkSession(t, a, base, sid)
	if err != nil {
		t.Fatalf("SDK: %v", err)
	}
	t.Cleanup(func() { sess.Close() })
	sdk = rec.next(t, sid)
	if _, err := ourConn(t, a, base, oid, rate); err != nil {
		t.Fatalf("ours: %v", err)
	}
	return sdk, rec.next(t, oid)
}

// TestEquivalentConfigMembers sets each member of genai.LiveConnectConfig
// in turn, found by reflection (so that a member added to genai is tested
// too), first with every member of its value set, then with each of its
// members alone, and requires of each configuration that the adapter send
// the SDK's setup message, or refuse it at Connect with an error naming
// the member it cannot send (never drop it), or that both refuse it.
// What the adapter refuses is logged.
func TestEquivalentConfigMembers(t *testing.T) {
	rec := newRecorder(t)
	ct := reflect.TypeFor[genai.LiveConnectConfig]()
	var refused []string
	sent := 0
	for i := range ct.NumField() {
		f := ct.Field(i)
		name := jsonName(f)
		values := []reflect.Value{fill(f.Type, 0, map[reflect.Type]bool{})}
		values = append(values, variants(f.Type, 0, map[reflect.Type]bool{})...)
		for j, v := range values {
			a := &Agent{APIKey: equivKey, Configure: func(c *genai.LiveConnectConfig) {
				reflect.ValueOf(c).Elem().Field(i).Set(v)
			}}
			label := fmt.Sprintf("%s#%d", f.Name, j)
			t.Run(label, func(t *testing.T) {
				err := compareSetup(t, rec, a)
				switch {
				case err == nil:
					sent++
				case !strings.Contains(err.Error(), name):
					t.Errorf("the adapter refuses %s without naming it: %v", name, err)
				default:
					b, _ := json.Marshal(v.Interface())
					refused = append(refused, fmt.Sprintf("%s %.120s: %v", label, b, err))
				}
			})
		}
	}
	sort.Strings(refused)
	t.Logf("%d configurations sent as the SDK sends them; %d refused by the adapter (the SDK sends them):\n%s", sent, len(refused), strings.Join(refused, "\n"))
	if sent < 100 {
		t.Errorf("only %d configurations compared equal", sent)
	}
	// What the adapter sets itself must never be refused.
	for _, r := range refused {
		for _, own := range []string{"ResponseModalities#", "InputAudioTranscription#", "OutputAudioTranscription#", "RealtimeInputConfig#", "Temperature#"} {
			if strings.HasPrefix(r, own) {
				t.Errorf("the adapter refuses a setting of its own: %s", r)
			}
		}
	}
}

// jsonName returns the JSON member name of a struct field.
func jsonName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	if name == "" {
		return f.Name
	}
	return name
}

// settable reports whether fill and variants give fields of t values: not
// functions, channels or interfaces other than any.
func settable(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Func, reflect.Chan, reflect.UnsafePointer, reflect.Complex64, reflect.Complex128:
		return false
	case reflect.Interface:
		return t.NumMethod() == 0
	case reflect.Pointer, reflect.Slice:
		return settable(t.Elem())
	case reflect.Map:
		return t.Key().Kind() == reflect.String && settable(t.Elem())
	}
	return true
}

// genaiStruct reports whether t is a struct of package genai (others,
// such as time.Time, are left zero).
func genaiStruct(t reflect.Type) bool {
	return t.Kind() == reflect.Struct && t.PkgPath() == "google.golang.org/genai"
}

// leaf returns a value of the non-composite type t that encodes as
// something other than its zero value.
func leaf(t reflect.Type) reflect.Value {
	v := reflect.New(t).Elem()
	switch t.Kind() {
	case reflect.String:
		v.SetString("v-" + strings.ToLower(t.Name()))
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(3)
		if t == reflect.TypeFor[time.Duration]() {
			v.SetInt(int64(3 * time.Second))
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(3)
	case reflect.Float32, reflect.Float64:
		v.SetFloat(0.7)
	case reflect.Interface:
		v.Set(reflect.ValueOf(map[string]any{"type": "object", "k": "v"}))
	}
	return v
}

// fill returns a value of t with every member set, down to depth 4 and
// without entering a type already being filled.
func fill(t reflect.Type, depth int, stack map[reflect.Type]bool) reflect.Value {
	v := reflect.New(t).Elem()
	switch t.Kind() {
	case reflect.Pointer:
		v.Set(reflect.New(t.Elem()))
		v.Elem().Set(fill(t.Elem(), depth, stack))
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return reflect.ValueOf([]byte("ab")).Convert(t)
		}
		v = reflect.Append(v, fill(t.Elem(), depth, stack))
	case reflect.Map:
		v = reflect.MakeMap(t)
		v.SetMapIndex(reflect.ValueOf("k").Convert(t.Key()), fill(t.Elem(), depth, stack))
	case reflect.Struct:
		if !genaiStruct(t) || depth > 4 || stack[t] {
			return v
		}
		stack[t] = true
		defer delete(stack, t)
		for i := range t.NumField() {
			if f := t.Field(i); f.IsExported() && settable(f.Type) && f.Tag.Get("json") != "-" {
				v.Field(i).Set(fill(f.Type, depth+1, stack))
			}
		}
	default:
		return leaf(t)
	}
	return v
}

// variants returns values of t each with one leaf member set (and what
// holds it), down to depth 4 and without entering a type already being
// expanded (where it gives the type's value with nothing set).
func variants(t reflect.Type, depth int, stack map[reflect.Type]bool) []reflect.Value {
	var out []reflect.Value
	switch t.Kind() {
	case reflect.Pointer:
		for _, e := range variants(t.Elem(), depth, stack) {
			p := reflect.New(t.Elem())
			p.Elem().Set(e)
			out = append(out, p)
		}
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return []reflect.Value{reflect.ValueOf([]byte("ab")).Convert(t)}
		}
		for _, e := range variants(t.Elem(), depth, stack) {
			out = append(out, reflect.Append(reflect.New(t).Elem(), e))
		}
	case reflect.Map:
		for _, e := range variants(t.Elem(), depth, stack) {
			m := reflect.MakeMap(t)
			m.SetMapIndex(reflect.ValueOf("k").Convert(t.Key()), e)
			out = append(out, m)
		}
	case reflect.Struct:
		if !genaiStruct(t) || depth > 4 || stack[t] {
			return []reflect.Value{reflect.New(t).Elem()}
		}
		stack[t] = true
		defer delete(stack, t)
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() || !settable(f.Type) || f.Tag.Get("json") == "-" {
				continue
			}
			for _, fv := range variants(f.Type, depth+1, stack) {
				v := reflect.New(t).Elem()
				v.Field(i).Set(fv)
				out = append(out, v)
			}
		}
		if len(out) == 0 { // an empty struct: present, with nothing in it
			out = append(out, reflect.New(t).Elem())
		}
	default:
		out = append(out, leaf(t))
	}
	return out
}

// TestEquivalentMessages: after setup, the adapter's messages are the
// SDK's for the same input: the answer to a toolCall (an object result,
// a scalar one and an error, in one toolResponse), activityStart, the
// user's audio (two batches), activityEnd, and a text turn
// (activityStart, the text, activityEnd).
func TestEquivalentMessages(t *testing.T) {
	toolCall := []byte(`{"toolCall":{"functionCalls":[{"id":"c1","name":"weather","args":{"city":"Paris"}},{"id":"c2","name":"sky","args":{}},{"id":"c3","name":"broken"}]}}`)
	rec := newRecorder(t, toolCall)
	text := "héllo <there> & \"you\"\n"
	audio1, audio2 := ramp16k(320, 1), ramp16k(480, 7)

	// The SDK, given what the adapter sends.
	sid, oid := rec.ids()
	sess, err := sdkSession(t, baseAgent(), rec.url, sid)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	sdkRec := rec.next(t, sid)
	resps := []*genai.FunctionResponse{
		{ID: "c1", Name: "weather", Response: map[string]any{"temp": 21.5, "unit": "C"}},
		{ID: "c2", Name: "sky", Response: map[string]any{"output": "sunny"}},
		{ID: "c3", Name: "broken", Response: map[string]any{"error": "no such tool"}},
	}
	steps := []func() error{
		func() error { return sess.SendToolResponse(genai.LiveToolResponseInput{FunctionResponses: resps}) },
		func() error {
			return sess.SendRealtimeInput(genai.LiveRealtimeInput{ActivityStart: &genai.ActivityStart{}})
		},
		func() error {
			return sess.SendRealtimeInput(genai.LiveRealtimeInput{Audio: &genai.Blob{MIMEType: "audio/pcm;rate=16000", Data: pcm.EncodePCM16(nil, audio1)}})
		},
		func() error {
			return sess.SendRealtimeInput(genai.LiveRealtimeInput{Audio: &genai.Blob{MIMEType: "audio/pcm;rate=16000", Data: pcm.EncodePCM16(nil, audio2)}})
		},
		func() error {
			return sess.SendRealtimeInput(genai.LiveRealtimeInput{ActivityEnd: &genai.ActivityEnd{}})
		},
		func() error {
			return sess.SendRealtimeInput(genai.LiveRealtimeInput{ActivityStart: &genai.ActivityStart{}})
		},
		func() error { return sess.SendRealtimeInput(genai.LiveRealtimeInput{Text: text}) },
		func() error {
			return sess.SendRealtimeInput(genai.LiveRealtimeInput{ActivityEnd: &genai.ActivityEnd{}})
		},
	}
	sdkFrames := []recFrame{sdkRec.frame(t)}
	for i, step := range steps {
		if err := step(); err != nil {
			t.Fatalf("SDK step %d: %v", i, err)
		}
		sdkFrames = append(sdkFrames, sdkRec.frame(t))
	}

	// The adapter, at 16 kHz (no resampling), answering the tool calls.
	a := baseAgent()
	a.OnToolCall = func(_ context.Context, call voicetest.ToolCall) (json.RawMessage, error) {
		switch call.Name {
		case "weather":
			return json.RawMessage(`{"temp":21.5,"unit":"C"}`), nil
		case "sky":
			return json.RawMessage(`"sunny"`), nil
		}
		return nil, errors.New("no such tool")
	}
	c, err := ourConn(t, a, rec.url, oid, 16000)
	if err != nil {
		t.Fatal(err)
	}
	ourRec := rec.next(t, oid)
	ctx := t.Context()
	var ourFrames []recFrame
	take := func(n int) {
		for range n {
			ourFrames = append(ourFrames, ourRec.frame(t))
		}
	}
	take(2) // setup, the tool response
	// Each batch of audio is sent once the one before it is read, so that
	// the adapter's sender sends it alone.
	if err := c.SendAudio(ctx, pcm.Chunk{Rate: 16000, Samples: audio1}); err != nil {
		t.Fatal(err)
	}
	take(2) // activityStart, audio1
	if err := c.SendAudio(ctx, pcm.Chunk{Rate: 16000, Samples: audio2}); err != nil {
		t.Fatal(err)
	}
	take(1)
	if err := c.EndUtterance(ctx); err != nil {
		t.Fatal(err)
	}
	take(1)
	if err := c.SendText(ctx, text); err != nil {
		t.Fatal(err)
	}
	take(3)

	if len(ourFrames) != len(sdkFrames) {
		t.Fatalf("%d messages, the SDK %d", len(ourFrames), len(sdkFrames))
	}
	for i := range sdkFrames {
		s, o := sdkFrames[i], ourFrames[i]
		if s.typ != o.typ {
			t.Errorf("message %d in a frame of type %v, the SDK's %v", i, o.typ, s.typ)
		}
		if d := jsonDiff(s.data, o.data); d != "" {
			t.Errorf("message %d differs (-SDK +ours):\n%s\nSDK:  %.300s\nours: %.300s", i, d, s.data, o.data)
		}
	}
	if d := handshakeDiff(sdkRec, ourRec); d != "" {
		t.Errorf("handshake differs (-SDK +ours):\n%s", d)
	}
}

// ramp16k returns n samples at 16 kHz that all differ.
func ramp16k(n, seed int) []int16 {
	s := make([]int16, n)
	for i := range s {
		s[i] = int16(i*seed*37 + seed)
	}
	return s
}

// serverFrames are server messages, well formed or not, that the SDK's
// Receive and the adapter's decoder are both given.
func serverFrames() [][]byte {
	audio := base64.StdEncoding.EncodeToString(pcm.EncodePCM16(nil, ramp16k(480, 3)))
	return [][]byte{
		[]byte(`{"serverContent":{"modelTurn":{"parts":[{"inlineData":{"mimeType":"audio/pcm;rate=24000","data":"` + audio + `"}}]}}}`),
		[]byte(`{"serverContent":{"modelTurn":{"role":"model","parts":[{"text":"Hello "},{"text":"thinking…","thought":true},{"inlineData":{"mimeType":"audio/pcm","data":"AAAA"}}]}}}`),
		[]byte(`{"serverContent":{"outputTranscription":{"text":"Okay."}}}`),
		[]byte(`{"serverContent":{"inputTranscription":{"text":"A table","finished":true}}}`),
		[]byte(`{"serverContent":{"inputTranscription":{"text":" for two"}}}`),
		[]byte(`{"serverContent":{"generationComplete":true}}`),
		[]byte(`{"serverContent":{"turnComplete":true}}`),
		[]byte(`{"serverContent":{"inputTranscription":{"text":"Une table, s'il vous plaît"}}}`),
		[]byte(`{"serverContent":{"outputTranscription":{"text":"tab\there \u00e9"}}}`),
		[]byte(`{"serverContent":{"turnComplete":true,"turnCompleteReason":"NEED_MORE_INPUT"}}`),
		[]byte(`{"serverContent":{"interrupted":true}}`),
		[]byte(`{"serverContent":{"interrupted":false,"turnComplete":false,"waitingForInput":true}}`),
		[]byte(`{"toolCall":{"functionCalls":[{"id":"c1","name":"weather","args":{"city":"Paris","days":[1,2],"deep":{"x":null}}},{"name":"noid"}]}}`),
		[]byte(`{"toolCallCancellation":{"ids":["c1","c2"]}}`),
		[]byte(`{"goAway":{"timeLeft":"5s"}}`),
		[]byte(`{"goAway":{"timeLeft":"0.250s"}}`),
		[]byte(`{"goAway":{}}`),
		[]byte(`{"usageMetadata":{"promptTokenCount":12,"totalTokenCount":40}}`),
		[]byte(`{"sessionResumptionUpdate":{"newHandle":"h","resumable":true}}`),
		[]byte(`{"voiceActivityDetectionSignal":{"vadSignalType":"VAD_SIGNAL_TYPE_SOS"}}`),
		[]byte(`{"setupComplete":{"sessionId":"s1"}}`),
		[]byte(`{"somethingNew":{"a":1}}`),
		[]byte(`{"serverContent":{"outputTranscription":{"text":"x"}},"usageMetadata":{"totalTokenCount":3}}`),
		[]byte(`{"serverContent":{"modelTurn":{"parts":[null,{"text":"after a null part"}]}}}`),
		// Errors: the server's, and messages that cannot be read.
		[]byte(`{"error":{"code":400,"message":"Request contains an invalid argument."}}`),
		[]byte(`{"serverContent":{"turnComplete":"yes"},"error":{"message":"both"}}`),
		[]byte(`{"serverContent":{"turnComplete":"yes"}}`),
		[]byte(`{"goAway":{"timeLeft":"soon"}}`),
		[]byte(`{"serverContent":{"modelTurn":{"parts":[{"inlineData":{"mimeType":"audio/pcm","data":"not base64!"}}]}}}`),
		[]byte(`not json`),
		[]byte(`[1,2]`),
		[]byte(`{"toolCall":{"functionCalls":[{"id":"c1","name":"weather","args":"nope"}]}}`),
	}
}

// TestEquivalentDecoding gives each of serverFrames to the SDK's Receive
// (through the recording server) and to the adapter's decoder, and
// requires the same outcome: both read it, with the same value in every
// field the adapter reads (compared with the SDK's field of the same name,
// recursively), or both fail, an error report as such in both.
func TestEquivalentDecoding(t *testing.T) {
	frames := serverFrames()
	rec := newRecorder(t, frames...)
	sid, _ := rec.ids()
	sess, err := sdkSession(t, &Agent{APIKey: equivKey}, rec.url, sid)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	if m, err := sess.Receive(); err != nil || m.SetupComplete == nil { // Connect's, buffered
		t.Fatalf("first Receive: %v %v", m, err)
	}
	var d decoder
	for i, f := range frames {
		sdkMsg, sdkErr := sess.Receive()
		m, ourErr := d.parse(f)
		ours := *m
		switch {
		case sdkErr != nil && ourErr != nil:
			var oe *Error
			if sdkReport := strings.HasPrefix(sdkErr.Error(), "received error in response"); sdkReport != errors.As(ourErr, &oe) {
				t.Errorf("frame %d %.80s: SDK %v, ours %v: one is an error report, the other not", i, f, sdkErr, ourErr)
			}
		case sdkErr != nil || ourErr != nil:
			t.Errorf("frame %d %.80s: SDK error %v, ours %v", i, f, sdkErr, ourErr)
		default:
			if diffs := compareFields(reflect.ValueOf(ours), reflect.ValueOf(*sdkMsg), "message"); len(diffs) > 0 {
				t.Errorf("frame %d %.120s:\n%s", i, f, strings.Join(diffs, "\n"))
			}
		}
	}
}

// notInSDK are our fields with no field of the same name in the SDK's
// types: the error member, which the SDK looks for before it converts a
// message.
var notInSDK = map[string]bool{"Error": true}

// compareFields compares each field of ours with the field of the same
// name in sdk, recursively, and returns the differences. An empty struct
// of ours stands for a member whose presence only is read.
func compareFields(ours, sdk reflect.Value, path string) []string {
	if ours.Kind() == reflect.Pointer {
		if ours.IsNil() != sdk.IsNil() {
			return []string{fmt.Sprintf("%s: ours present %v, the SDK's %v", path, !ours.IsNil(), !sdk.IsNil())}
		}
		if ours.IsNil() {
			return nil
		}
		return compareFields(ours.Elem(), sdk.Elem(), path)
	}
	switch ours.Kind() {
	case reflect.Struct:
		var diffs []string
		for i := range ours.NumField() {
			f := ours.Type().Field(i)
			if notInSDK[f.Name] {
				continue
			}
			sf := sdk.FieldByName(f.Name)
			if !sf.IsValid() {
				diffs = append(diffs, fmt.Sprintf("%s.%s: the SDK's %s has no such field", path, f.Name, sdk.Type()))
				continue
			}
			diffs = append(diffs, compareFields(ours.Field(i), sf, path+"."+f.Name)...)
		}
		return diffs
	case reflect.Slice:
		if ours.Type().Elem().Kind() != reflect.Uint8 {
			if ours.Len() != sdk.Len() {
				return []string{fmt.Sprintf("%s: %d elements, the SDK %d", path, ours.Len(), sdk.Len())}
			}
			var diffs []string
			for i := range ours.Len() {
				diffs = append(diffs, compareFields(ours.Index(i), sdk.Index(i), fmt.Sprintf("%s[%d]", path, i))...)
			}
			return diffs
		}
	}
	var o, s any = ours.Interface(), sdk.Interface()
	if ours.Type() != sdk.Type() && ours.Type().ConvertibleTo(sdk.Type()) {
		o = ours.Convert(sdk.Type()).Interface()
	}
	if d := cmp.Diff(s, o); d != "" {
		return []string{fmt.Sprintf("%s (-SDK +ours):\n%s", path, d)}
	}
	return nil
}

// TestEquivalenceCatchesDifferences: the comparisons above see a change
// of one member, of one field's value and of one field's presence (a
// check of the checks).
func TestEquivalenceCatchesDifferences(t *testing.T) {
	if jsonDiff([]byte(`{"setup":{"model":"m","generationConfig":{"seed":3}}}`), []byte(`{"setup":{"generationConfig":{"seed":3},"model":"m"}}`)) != "" {
		t.Error("member order counts")
	}
	if jsonDiff([]byte(`{"setup":{"model":"m","generationConfig":{"seed":3}}}`), []byte(`{"setup":{"model":"m"}}`)) == "" {
		t.Error("a dropped member not seen")
	}
	var ours serverMessage
	if err := parseServerMessage([]byte(`{"serverContent":{"inputTranscription":{"text":"a","finished":true}}}`), &ours); err != nil {
		t.Fatal(err)
	}
	sdk := genai.LiveServerMessage{ServerContent: &genai.LiveServerContent{InputTranscription: &genai.Transcription{Text: "a"}}}
	if len(compareFields(reflect.ValueOf(ours), reflect.ValueOf(sdk), "m")) == 0 {
		t.Error("a different value not seen")
	}
	sdk.ServerContent.InputTranscription.Finished = true
	if d := compareFields(reflect.ValueOf(ours), reflect.ValueOf(sdk), "m"); len(d) > 0 {
		t.Errorf("equal messages differ: %v", d)
	}
	sdk.ServerContent.OutputTranscription = &genai.Transcription{}
	if len(compareFields(reflect.ValueOf(ours), reflect.ValueOf(sdk), "m")) == 0 {
		t.Error("a missing member not seen")
	}
}
