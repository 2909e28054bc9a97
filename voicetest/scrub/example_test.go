package scrub_test

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/voicetest-go/voicetest/voicetest/scrub"
)

// One Scrubber per conversation: it learns the secrets of what is sent and
// blanks them, by position and by value, in whatever is written about it.
func ExampleScrubber() {
	sc := scrub.New()
	url := "wss://bot:hunter2hunter2@agent.example/ws?api_key=sk-live-12345&lang=en"
	sc.AddURL(url)
	sc.AddHeader(http.Header{"Authorization": {"Bearer tok-abcdef123"}})
	sc.AddJSON([]byte(`{"client_secret":"cs-0987654321","model":"m"}`))

	fmt.Println(sc.URL(url))
	fmt.Println(sc.String(`401: token "tok-abcdef123" is not valid`))
	fmt.Println(string(sc.JSON([]byte(`{"echo":"cs-0987654321","password":"x1","n":3}`))))
	fmt.Println(sc.Error(errors.New("dial wss://agent.example/ws?api_key=sk-live-12345: refused")))
	// Output:
	// wss://bot:REDACTED@agent.example/ws?api_key=REDACTED&lang=en
	// 401: token "REDACTED" is not valid
	// {"echo":"REDACTED","password":"REDACTED","n":3}
	// dial wss://agent.example/ws?api_key=REDACTED: refused
}

// A key an adapter reads from the environment is blanked wherever the
// server echoes it; FromEnv does the same with os.Environ(). Text shows
// some credentials by where they stand, with nothing learned.
func ExampleScrubber_AddEnv() {
	sc := scrub.New()
	sc.AddEnv([]string{"HOME=/home/dev", "ELEVENLABS_API_KEY=xi-0123456789abcdef"})

	fmt.Println(sc.String(`{"error":"invalid key xi-0123456789abcdef"} in /home/dev`))
	fmt.Println(sc.String("curl -H 'Authorization: Bearer sk-live-987654321' 'https://h/v1?lang=en&access_token=tok-42'"))
	// Output:
	// {"error":"invalid key REDACTED"} in /home/dev
	// curl -H 'Authorization: Bearer REDACTED' 'https://h/v1?lang=en&access_token=REDACTED'
}
