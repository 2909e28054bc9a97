package voicetest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/fixtures"
)

// reportScenario runs a conversation with a greeting, tool calls, a
// barge-in, in-band DTMF, a checkpoint and a verdict, and text that needs
// escaping: everything the HTML report shows.
func reportScenario(t *testing.T) *voicetest.Result {
	t.Helper()
	judge := criteriaJudge(func(req voicetest.JudgeRequest) (voicetest.Judgment, error) {
		if !req.Final {
			return voicetest.Judgment{Decided: true, Criteria: []voicetest.CriterionResult{
				{Criterion: "the agent greets the caller", Status: voicetest.StatusPass, Reasoning: "it said hello & welcome"},
			}}, nil
		}
		return voicetest.Judgment{Decided: true, Reasoning: "The booking was made <quickly> and confirmed.", Criteria: []voicetest.CriterionResult{
			{Criterion: "the agent books a table", Status: voicetest.StatusPass, Reasoning: "book was called with party 2 at 19:00"},
			{Criterion: "the agent confirms the time", Status: voicetest.StatusInconclusive, Reasoning: "the confirmation was cut off"},
		}}, nil
	})
	res, err := runVirtual(t, voicetest.Config{
		Name:        "booking <with> \"quotes\"",
		Description: "A caller books a table for two & barges in.",
		Agent: fixtures.Fake(fixtures.FakeConfig{
			Name: "fake-restaurant",
			// The agent hears the barge-in and stops 120 ms later: the
			// two talk over each other for that long.
			BargeIn:     true,
			StopLatency: 120 * time.Millisecond,
			Greeting:    fixtures.Reply{Text: "Hello and welcome to Chez Go", Latency: 200 * time.Millisecond},
			Replies: []fixtures.Reply{
				{Text: "Let me check availability for two", Latency: 450 * time.Millisecond,
					Tools: []voicetest.ToolCall{{Name: "check_availability", Arguments: json.RawMessage(`{"party":2}`), Result: json.RawMessage(`{"free":["19:00"]}`)}}},
				{Text: "We have a table at seven in the evening for two people", Latency: 380 * time.Millisecond},
				{Text: "Booked for seven", Latency: 300 * time.Millisecond,
					Tools: []voicetest.ToolCall{{Name: "book", Arguments: json.RawMessage(`{"party":2,"time":"19:00"}`), Result: json.RawMessage(`{"ok":true}`)}}},
			},
		}),
		UserVoice: &toneTTS{},
		Judge:     judge,
		Script: []voicetest.Step{
			voicetest.AgentTurn(),
			voicetest.Checkpoint("the agent greets the caller"),
			voicetest.UserSays("A table for two please"),
			voicetest.AgentTurn(),
			voicetest.UserSays("What times <script>alert(1)</script> do you have"),
			voicetest.Interrupt("Seven is fine book it", voicetest.AfterWords(3)),
			voicetest.AgentTurn(),
			voicetest.DTMF("1"),
			voicetest.Verdict(),
		},
	})
	if res == nil || res.Status != voicetest.StatusInconclusive || !errors.Is(err, voicetest.ErrFailed) {
		t.Fatalf("scenario: want an inconclusive verdict, got %v", err)
	}
	return res
}

func TestHTMLReportContent(t *testing.T) {
	res := reportScenario(t)
	page, err := res.HTMLReport()
	if err != nil {
		t.Fatal(err)
	}
	html := string(page)
	for _, want := range []string{
		"<!DOCTYPE html>",
		"booking &lt;with&gt; &#34;quotes&#34;",
		"A caller books a table for two &amp; barges in.",
		"What times &lt;script&gt;alert(1)&lt;/script&gt; do you have",
		"Hello and welcome to Chez Go",
		"The booking was made &lt;quickly&gt; and confirmed.",
		"the confirmation was cut off",
		"check_availability",
		"user_interrupt",
		"DTMF 1",
		`id="mixed"`,
		"Conversation quality",
		"1 times, 120 ms",
		"longest pause",
	} {
		if !strings.Contains(html, want) {
			t.Errorf("the report lacks %q", want)
		}
	}
	if strings.Contains(html, "<script>alert(1)") {
		t.Error("user text reached the page unescaped")
	}
	// Self-contained: no reference to anything on a network.
	if m := regexp.MustCompile(`(?i)(https?:)?//[a-z0-9.-]+\.[a-z]{2,}`).FindString(html); m != "" {
		t.Errorf("the report refers to %q; it must load nothing from the network", m)
	}
	for _, attr := range []string{`src="http`, `href="http`, `src="//`, `href="//`, "url(http", "@import"} {
		if strings.Contains(html, attr) {
			t.Errorf("the report has an external reference %q", attr)
		}
	}
	// One player for the mix and one per segment with audio.
	segs := 0
	for _, s := range res.Recording.Segments {
		if !s.Audio().IsEmpty() {
			segs++
		}
	}
	players := strings.Count(html, "<audio ")
	if players != segs+1 {
		t.Errorf("%d audio players, want %d (the mix and %d segments)", players, segs+1, segs)
	}
	if n := strings.Count(html, `src="data:audio/wav;base64,`); n != players {
		t.Errorf("%d players have inline WAV audio, want all %d", n, players)
	}
	if !strings.Contains(html, `data-audio-count="`+strconv.Itoa(players)+`"`) {
		t.Errorf("data-audio-count does not say %d", players)
	}
	// The waveform data parses and covers both parties.
	m := regexp.MustCompile(`(?s)<script type="application/json" id="vt-data">(.*?)</script>`).FindStringSubmatch(html)
	if m == nil {
		t.Fatal("no waveform data in the report")
	}
	var data struct {
		Duration    float64 `json:"duration"`
		Buckets     int     `json:"buckets"`
		User, Agent []int
		Marks       []struct{ Type string }
		Quality     []struct {
			Start, End float64
			Kind       string
		}
	}
	if err := json.Unmarshal([]byte(m[1]), &data); err != nil {
		t.Fatalf("waveform data: %v", err)
	}
	if data.Buckets == 0 || len(data.User) != 2*data.Buckets || len(data.Agent) != 2*data.Buckets {
		t.Fatalf("waveform data has %d buckets, %d user and %d agent values", data.Buckets, len(data.User), len(data.Agent))
	}
	if data.Duration != res.Duration.Seconds() {
		t.Errorf("waveform spans %vs, the conversation %v", data.Duration, res.Duration)
	}
	if peak(data.User) < 10 || peak(data.Agent) < 10 {
		t.Errorf("waveform peaks user %d agent %d: both should show speech", peak(data.User), peak(data.Agent))
	}
	types := map[string]bool{}
	for _, mk := range data.Marks {
		types[mk.Type] = true
	}
	for _, want := range []string{"tool_call", "user_interrupt", "dtmf", "verdict"} {
		if !types[want] {
			t.Errorf("no %s mark on the waveform", want)
		}
	}
	// The talk-over and every pause are drawn on the time axis.
	kinds := map[string]int{}
	for _, q := range data.Quality {
		kinds[q.Kind]++
	}
	if kinds["talk_over"] != res.Metrics.TalkOver.Count || kinds["pause"]+kinds["unfilled"] != len(res.Metrics.Pauses.Spans) || kinds["talk_over"] == 0 {
		t.Errorf("the time axis has %v, want %d talk-overs and %d pauses", kinds, res.Metrics.TalkOver.Count, len(res.Metrics.Pauses.Spans))
	}
}

func peak(v []int) int {
	p := 0
	for _, x := range v {
		p = max(p, x, -x)
	}
	return p
}

func TestHTMLReportTextOnlyAgent(t *testing.T) {
	res, err := runVirtual(t, voicetest.Config{
		Agent:  fixtures.TextAgent(fixtures.Reply{Text: "Hi there", Latency: 100 * time.Millisecond}),
		Script: []voicetest.Step{voicetest.UserSays("hello"), voicetest.AgentTurn()},
	})
	if err != nil {
		t.Fatal(err)
	}
	page, err := res.HTMLReport()
	if err != nil {
		t.Fatal(err)
	}
	html := string(page)
	if strings.Contains(html, "<audio ") {
		t.Error("a text-only conversation has audio players")
	}
	for _, want := range []string{"no audio was recorded", "Hi there", `data-audio-count="0"`} {
		if !strings.Contains(html, want) {
			t.Errorf("the report lacks %q", want)
		}
	}
}

func TestSaveWritesHTMLReport(t *testing.T) {
	res, err := runVirtual(t, voicetest.Config{
		Agent:     fixtures.ScriptedAgent(fixtures.Reply{Text: "Hello"}),
		UserVoice: &toneTTS{},
		Script:    []voicetest.Step{voicetest.UserSays("hi"), voicetest.AgentTurn()},
	})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := res.Save(dir); err != nil {
		t.Fatal(err)
	}
	saved, err := os.ReadFile(filepath.Join(dir, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	page, err := res.HTMLReport()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(saved, page) {
		t.Error("report.html differs from HTMLReport()")
	}
}

// TestHTMLReportInChromium opens the report in headless Chromium: the page
// must render (its script draws the waveform and every audio element loads
// its metadata) and a screenshot of it must be a real, non-blank image.
func TestHTMLReportInChromium(t *testing.T) {
	t.Parallel()
	browser := ""
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			browser = p
			break
		}
	}
	if browser == "" {
		t.Skip("chromium not found: install the Debian package chromium (apt-get install -y chromium)")
	}
	if testing.Short() {
		t.Skip("starts a browser")
	}
	res := reportScenario(t)
	dir := t.TempDir()
	if err := res.Save(dir); err != nil {
		t.Fatal(err)
	}
	page := filepath.Join(dir, "report.html")
	url := "file://" + filepath.ToSlash(page)
	wantAudio := strings.Count(mustRead(t, page), "<audio ")

	chrome := func(extra ...string) ([]byte, error) {
		// Chromium starts slowly on a shared machine: bound it generously.
		ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
		defer cancel()
		args := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
			"--disable-background-networking", "--disable-component-update", "--disable-sync",
			"--mute-audio", "--hide-scrollbars", "--user-data-dir=" + t.TempDir(), "--window-size=1280,1600",
			"--virtual-time-budget=15000"}
		cmd := exec.CommandContext(ctx, browser, append(append(args, extra...), url)...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Logf("chromium stderr:\n%s", tail(stderr.String(), 2000))
		}
		return out, err
	}

	// One launch both dumps the DOM and takes the screenshot, each once
	// the virtual time budget has run out: starting Chromium is most of
	// the test's cost.
	shot := filepath.Join(dir, "report.png")
	dom, err := chrome("--dump-dom", "--screenshot="+shot)
	if err != nil {
		t.Fatalf("chromium --dump-dom --screenshot: %v", err)
	}
	body := regexp.MustCompile(`<body[^>]*>`).Find(dom)
	if body == nil {
		t.Fatalf("no <body> in the dumped DOM:\n%s", tail(string(dom), 2000))
	}
	attr := func(name string) string {
		m := regexp.MustCompile(name + `="([^"]*)"`).FindSubmatch(body)
		if m == nil {
			return ""
		}
		return string(m[1])
	}
	if attr("data-rendered") != "true" {
		t.Errorf("the page did not finish rendering: %s", body)
	}
	if got := attr("data-audio-loaded"); got != strconv.Itoa(wantAudio) {
		t.Errorf("%s of %d audio elements loaded their metadata (errors: %s)", got, wantAudio, attr("data-audio-errors"))
	}

	f, err := os.Open(shot)
	if err != nil {
		t.Fatalf("no screenshot: %v", err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("the screenshot is not a PNG: %v", err)
	}
	if b := img.Bounds(); b.Dx() != 1280 || b.Dy() != 1600 {
		t.Errorf("screenshot is %dx%d, want 1280x1600", b.Dx(), b.Dy())
	}
	if n := colours(img); n < 20 {
		t.Errorf("the screenshot has %d colours: it looks blank", n)
	}
	checkQualityLane(t, img, attr("data-plot"), res)
	if keep := os.Getenv("VOICETEST_KEEP_REPORT"); keep != "" {
		_ = os.WriteFile(filepath.Join(keep, "report.png"), mustReadBytes(t, shot), 0o644)
		_ = os.WriteFile(filepath.Join(keep, "report.html"), mustReadBytes(t, page), 0o644)
	}
}

// checkQualityLane checks the picture of the talk-over and the pauses on
// the report's time axis: in the screenshot, the middle of each talk-over
// and of the longest pause, in the lane drawn for them, has their colour,
// and the middle of the first agent speech that neither overlaps nor
// pauses has the lane's background. plot is the page's data-plot
// attribute: where the script drew the time axis.
func checkQualityLane(t *testing.T, img image.Image, plot string, res *voicetest.Result) {
	t.Helper()
	var p struct {
		Left, Width, Duration float64
		Quality               struct{ Top, Height float64 }
	}
	if err := json.Unmarshal([]byte(html.UnescapeString(plot)), &p); err != nil || p.Width <= 0 || p.Duration <= 0 {
		t.Fatalf("the page does not say where it drew the time axis (data-plot %q): %v", plot, err)
	}
	y := int(p.Quality.Top + p.Quality.Height/2)
	at := func(from, to time.Duration) (int, int) {
		mid := (from + to).Seconds() / 2
		return int(p.Left + mid/p.Duration*p.Width), y
	}
	talkOver := [3]uint8{0xe5, 0x48, 0x4d} // --talkover
	pause := [3]uint8{0xf5, 0xc0, 0x4a}    // --pause
	lane := [3]uint8{0xf3, 0xf5, 0xf8}     // the lanes' background
	m := res.Metrics
	if len(m.TalkOver.Spans) == 0 || m.Pauses.Longest.Duration() == 0 {
		t.Fatalf("the report's scenario has %d talk-overs and a longest pause of %v: it must have both", len(m.TalkOver.Spans), m.Pauses.Longest.Duration())
	}
	for _, s := range m.TalkOver.Spans {
		x, y := at(s.Start, s.End)
		wantColour(t, img, x, y, talkOver, fmt.Sprintf("the talk-over at %v–%v", s.Start, s.End))
	}
	lp := m.Pauses.Longest
	x, y := at(lp.Start, lp.End)
	wantColour(t, img, x, y, pause, fmt.Sprintf("the longest pause at %v–%v", lp.Start, lp.End))
	for _, msg := range res.Transcript {
		if msg.Role == voicetest.RoleAgent && msg.End-msg.Start > time.Second && !msg.Interrupted {
			x, y := at(msg.Start, msg.End)
			wantColour(t, img, x, y, lane, fmt.Sprintf("the agent's speech at %v–%v (neither talk-over nor pause)", msg.Start, msg.End))
			break
		}
	}
}

// wantColour checks that the pixel at x, y of img is want, give or take
// a little for the browser's colour handling.
func wantColour(t *testing.T, img image.Image, x, y int, want [3]uint8, what string) {
	t.Helper()
	r, g, b, _ := img.At(x, y).RGBA()
	got := [3]uint8{uint8(r >> 8), uint8(g >> 8), uint8(b >> 8)}
	for i := range got {
		if d := int(got[i]) - int(want[i]); d < -12 || d > 12 {
			t.Errorf("%s: the screenshot at (%d, %d) is #%02x%02x%02x, want #%02x%02x%02x", what, x, y, got[0], got[1], got[2], want[0], want[1], want[2])
			return
		}
	}
}

// colours counts the distinct colours of img (up to 1000), sampling a grid.
func colours(img image.Image) int {
	seen := map[[4]uint32]bool{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y += 3 {
		for x := b.Min.X; x < b.Max.X; x += 3 {
			r, g, bl, a := img.At(x, y).RGBA()
			seen[[4]uint32{r, g, bl, a}] = true
			if len(seen) >= 1000 {
				return len(seen)
			}
		}
	}
	return len(seen)
}

func mustRead(t *testing.T, path string) string { return string(mustReadBytes(t, path)) }

func mustReadBytes(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}
