package cache_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"

	"github.com/voicetest-go/voicetest/voicetest/cache"
)

// A local engine (here a stand-in for a TTS process) is called once in
// record mode; replay answers from disk without calling it, and a missing
// entry in replay mode is an error naming the command that records it.
func ExampleCache_Text() {
	dir, err := os.MkdirTemp("", "voicetest-cache-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()
	key := cache.Key{
		Kind:     "llm",
		Provider: "local",
		Model:    "echo-1",
		Fields:   map[string]any{"prompt": "Say hello", "temperature": 0.7},
	}
	engine := func(context.Context) (string, error) {
		fmt.Println("(engine called)")
		return "Hello!", nil
	}

	rec, _ := cache.Open(dir, cache.WithMode(cache.Record), cache.WithUsageDir(""))
	text, _ := rec.Text(ctx, key, engine)
	fmt.Println("record:", text)

	rep, _ := cache.Open(dir, cache.WithMode(cache.Replay), cache.WithName("TestHello"), cache.WithUsageDir(""))
	text, _ = rep.Text(ctx, key, engine)
	fmt.Println("replay:", text)

	key.Fields["prompt"] = "Say goodbye"
	_, err = rep.Text(ctx, key, engine)
	var miss *cache.MissError
	fmt.Println("miss:", errors.As(err, &miss), strings.HasSuffix(miss.Command, "-run '^TestHello$' -voicetest.record"))
	// Output:
	// (engine called)
	// record: Hello!
	// replay: Hello!
	// miss: true true
}

// HTTP providers plug the cache in as their client's transport; the
// recorded response replays byte for byte without the server.
func ExampleCache_Client() {
	dir, err := os.MkdirTemp("", "voicetest-cache-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"text":"hello world"}`)
	}))
	post := func(c *cache.Cache, url string) string {
		req, _ := http.NewRequest("POST", url+"/v1/chat/completions", strings.NewReader(`{"model":"m","messages":[]}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer sk-example-secret")
		resp, err := c.Client(cache.WithProvider("example")).Do(req)
		if err != nil {
			return err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}

	rec, _ := cache.Open(dir, cache.WithMode(cache.Record), cache.WithUsageDir(""))
	fmt.Println("record:", post(rec, srv.URL))
	srv.Close()

	rep, _ := cache.Open(dir, cache.WithMode(cache.Replay), cache.WithUsageDir(""))
	fmt.Println("replay:", post(rep, srv.URL))

	entries, _ := filepath.Glob(filepath.Join(dir, "llm", "*"))
	fmt.Println("files:", len(entries))
	// Output:
	// record: {"text":"hello world"}
	// replay: {"text":"hello world"}
	// files: 2
}
