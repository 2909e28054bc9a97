package voicetest_test

import (
	"context"
	"encoding/json"
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
	"sync"
	"testing"
	"time"

	"github.com/voicetest-go/voicetest/voicetest"
)

// TestHTMLReportInChromium opens the report in headless Chromium: the page
// must render (its script draws the waveform and every audio element loads
// its metadata) and a screenshot of it must be a real, non-blank image.
//
// Chromium is started before the test calls t.Parallel, so it loads the
// page while the package's sequential tests run, and the test waits for
// it once its turn among the parallel tests comes. Started after
// t.Parallel, as it was, it began only when every sequential test had
// finished and then held one of the -test.parallel slots for the whole
// launch (about 7 s of the binary's 17 on a quiet machine, the longest
// test). The file's name puts the test early in the run order.
func TestHTMLReportInChromium(t *testing.T) {
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

	// One launch both dumps the DOM and takes the screenshot, each once
	// the virtual time budget has run out: starting Chromium is most of
	// the test's cost.
	shot := filepath.Join(dir, "report.png")
	wait := startChromium(t, browser, url, "--dump-dom", "--screenshot="+shot)
	t.Parallel()
	dom, err := wait()
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

// startChromium starts headless Chromium on url with the extra flags and
// returns a function that waits for it to exit and returns its standard
// output. Chromium writes its output to files, so nothing in this process
// copies it while the package's sequential tests run (some measure the
// allocations or goroutines of their own work). If the test ends without
// waiting (a t.Fatal before), its cleanup kills Chromium and waits for
// it, before t.TempDir's cleanup removes the profile directory.
func startChromium(t *testing.T, browser, url string, extra ...string) func() ([]byte, error) {
	t.Helper()
	dir := t.TempDir()
	// Chromium starts slowly on a shared machine: bound it generously.
	// The bound runs from the start, beside the sequential tests, so it
	// is longer than the 3 minutes it was for a launch in the parallel
	// phase (at load 57 on two cores a launch that overlapped the
	// sequential phase took more than 3 minutes; the base's launch took
	// 62-72 s at load 42-45), and shorter than go test's default
	// -timeout of 10 minutes, so a Chromium that hangs fails this test
	// with its stderr rather than the whole binary.
	ctx, cancel := context.WithTimeout(t.Context(), 8*time.Minute)
	args := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--mute-audio", "--hide-scrollbars", "--user-data-dir=" + filepath.Join(dir, "profile"), "--window-size=1280,1600",
		"--virtual-time-budget=15000",
		// The omnibox's WebUI popup is built in a renderer of its own
		// even headless (about 2 CPU-seconds of a start); the report
		// needs no omnibox.
		"--disable-features=WebUIOmniboxPopup,WebUIOmniboxFullPopup,WebUIOmniboxAimPopup"}
	cmd := exec.CommandContext(ctx, browser, append(append(args, extra...), url)...)
	stdout, err := os.Create(filepath.Join(dir, "stdout"))
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	defer stdout.Close()
	stderr, err := os.Create(filepath.Join(dir, "stderr"))
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	defer stderr.Close()
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatalf("starting chromium: %v", err)
	}
	var (
		once sync.Once
		out  []byte
	)
	wait := func() ([]byte, error) {
		once.Do(func() {
			err = cmd.Wait()
			cancel()
			if err != nil {
				t.Logf("chromium stderr:\n%s", tail(string(mustReadBytes(t, stderr.Name())), 2000))
			}
			out = mustReadBytes(t, stdout.Name())
		})
		return out, err
	}
	t.Cleanup(func() {
		cancel() // kills Chromium if it still runs
		_, _ = wait()
	})
	return wait
}
