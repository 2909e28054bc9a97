package peerkit_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/voicetest-go/voicetest/internal/peers/peerkit"
)

type record struct {
	N     int
	Items []string
	Ended bool
}

func cloneRecord(r *record) record {
	out := *r
	out.Items = append([]string(nil), r.Items...)
	return out
}

func ExampleLog() {
	log := peerkit.NewLog(cloneRecord)
	r := log.Add(func(i int) *record { return &record{N: i + 1} })
	go log.Update(r, func(r *record) { r.Items = append(r.Items, "hello"); r.Ended = true })
	got, err := log.Wait(context.Background(), 0, func(r record) bool { return r.Ended })
	fmt.Println(got.N, got.Items, err)
	// Output: 1 [hello] <nil>
}

func TestLogSnapshotIsACopy(t *testing.T) {
	log := peerkit.NewLog(cloneRecord)
	r := log.Add(func(int) *record { return &record{} })
	log.Update(r, func(r *record) { r.Items = append(r.Items, "a") })
	snap := log.Snapshot()
	snap[0].Items[0] = "changed"
	log.Update(r, func(r *record) { r.Items = append(r.Items, "b") })
	again := log.Snapshot()
	if len(again) != 1 || strings.Join(again[0].Items, ",") != "a,b" {
		t.Errorf("Snapshot after changing a copy = %+v, want one record with items a,b", again)
	}
}

func TestLogAddIndexes(t *testing.T) {
	log := peerkit.NewLog(cloneRecord)
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() { log.Add(func(i int) *record { return &record{N: i} }) })
	}
	wg.Wait()
	for i, r := range log.Snapshot() {
		if r.N != i {
			t.Errorf("record %d has index %d", i, r.N)
		}
	}
}

func TestLogWaitTimesOut(t *testing.T) {
	log := peerkit.NewLog(cloneRecord)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	got, err := log.Wait(ctx, 0, func(record) bool { return true })
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Wait for a record that never exists: err = %v, want DeadlineExceeded", err)
	}
	if got.N != 0 || got.Items != nil {
		t.Errorf("Wait returned %+v, want the zero record", got)
	}

	r := log.Add(func(int) *record { return &record{N: 7} })
	log.Update(r, func(r *record) { r.Items = []string{"x"} })
	ctx2, cancel2 := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel2()
	got, err = log.Wait(ctx2, 0, func(r record) bool { return r.Ended })
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Wait for a state never reached: err = %v, want DeadlineExceeded", err)
	}
	if got.N != 7 || len(got.Items) != 1 {
		t.Errorf("Wait returned %+v, want the last copy of record 0", got)
	}
}

func TestServerAcceptWriteJSONAndClose(t *testing.T) {
	accepted := make(chan context.Context, 1)
	srv := peerkit.Listen(nil) // the handler reads srv: set before serving
	srv.Serve(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := peerkit.Accept(w, r, 64)
		if err != nil {
			return
		}
		defer ws.CloseNow()
		ctx, cancel := srv.CallContext()
		defer cancel()
		if err := peerkit.WriteJSON(ctx, ws, map[string]int{"n": 1}); err != nil {
			t.Errorf("WriteJSON: %v", err)
		}
		if err := peerkit.WriteJSON(ctx, ws, func() {}); err == nil {
			t.Errorf("WriteJSON of a func: no error")
		}
		accepted <- ctx
		ws.Read(ctx) // the client's oversized message ends the read
		<-ctx.Done()
	}))
	t.Cleanup(srv.Close)
	if !strings.HasPrefix(srv.URL, "http://127.0.0.1:") {
		t.Errorf("URL = %q, want loopback", srv.URL)
	}
	if got := srv.WSURL("/x"); got != "ws"+strings.TrimPrefix(srv.URL, "http")+"/x" {
		t.Errorf("WSURL = %q", got)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, srv.WSURL("/"), nil)
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	defer ws.CloseNow()
	_, data, err := ws.Read(ctx)
	if err != nil || string(data) != `{"n":1}` {
		t.Fatalf("Read = %q, %v; want {\"n\":1}", data, err)
	}
	callCtx := <-accepted
	if err := ws.Write(ctx, websocket.MessageText, make([]byte, 100)); err != nil {
		t.Fatalf("Write: %v", err)
	}
	select {
	case <-srv.Done():
		t.Fatal("Done closed before Close")
	default:
	}
	srv.Close()
	srv.Close() // a second Close is harmless
	select {
	case <-srv.Done():
	default:
		t.Error("Done not closed after Close")
	}
	if callCtx.Err() == nil {
		t.Error("the call's context did not end with Close")
	}
}

func TestAcceptRejectsPlainHTTP(t *testing.T) {
	errs := make(chan error, 1)
	srv := peerkit.Start(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, err := peerkit.Accept(w, r, 1<<10)
		errs <- err
	}))
	t.Cleanup(srv.Close)
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if err := <-errs; err == nil {
		t.Error("Accept of a plain GET: no error")
	}
	if resp.StatusCode < 400 {
		t.Errorf("plain GET answered %d, want an error status", resp.StatusCode)
	}
}

// Listen knows the server's URL before it serves, so a double sets what
// its handler reads in between; Serve then serves at that URL. A server
// closed without serving closes.
func TestListenThenServe(t *testing.T) {
	t.Parallel()
	s := peerkit.Listen(nil)
	defer s.Close()
	if !strings.HasPrefix(s.URL, "http://127.0.0.1:") {
		t.Fatalf("URL before serving = %q, want http://127.0.0.1:port", s.URL)
	}
	echo := s.URL + "/echo" // set before Serve, read by the handler
	s.Serve(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, echo)
	}))
	resp, err := http.Get(s.URL + "/echo")
	if err != nil {
		t.Fatalf("GET at the URL Listen gave: %v", err)
	}
	defer resp.Body.Close()
	var b strings.Builder
	if _, err := io.Copy(&b, resp.Body); err != nil {
		t.Fatal(err)
	}
	if b.String() != s.URL+"/echo" {
		t.Errorf("the handler answered %q, want %q", b.String(), s.URL+"/echo")
	}
	peerkit.Listen(nil).Close()
}
