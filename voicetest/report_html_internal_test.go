package voicetest

import (
	"encoding/base64"
	"html"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/voicetest-go/voicetest/pcm"
)

func tone(rate int, d time.Duration) pcm.Chunk {
	c := pcm.Silence(rate, d)
	for i := range c.Samples {
		c.Samples[i] = int16(8000 * ((i/20)%2*2 - 1))
	}
	return c
}

// TestHTMLReportAudioBudget checks the bounds on embedded audio: the mix
// is resampled to ReportMixedRate and cut at ReportMaxMixed, and segments
// past ReportSegmentBudget get a note naming their file instead of a
// player.
func TestHTMLReportAudioBudget(t *testing.T) {
	t.Parallel()
	const rate = 48000
	seg := 16 * time.Second // 1.5 MB of WAV at 48 kHz
	var segs []Segment
	var tr []Message
	for i := range 4 {
		role := RoleUser
		if i%2 == 1 {
			role = RoleAgent
		}
		start := time.Duration(i) * seg
		segs = append(segs, Segment{Role: role, Turn: (i + 1) / 2, Start: start, End: start + seg, Text: "words"}.WithAudio(tone(rate, seg)))
		tr = append(tr, Message{Role: role, Turn: (i + 1) / 2, Start: start, End: start + seg, Text: "words"})
	}
	long := 4 * time.Minute
	res := &Result{Name: "long", Status: StatusPass, Success: true, Duration: long, Transcript: tr,
		Recording: Recording{Rate: rate, Segments: segs, Duration: long}}
	page, err := res.HTMLReport()
	if err != nil {
		t.Fatal(err)
	}
	pageText := string(page)
	urls := embeddedWAVs(pageText)
	// The mix and two segments fit; the third overflows the budget, and
	// the fourth comes after it.
	if len(urls) != 3 {
		t.Fatalf("%d players, want 3 (the mix and two segments)", len(urls))
	}
	if n := strings.Count(pageText, "audio not embedded"); n != 2 {
		t.Errorf("%d notes about audio left out, want 2", n)
	}
	if !strings.Contains(pageText, "segments/02-user-32000ms.wav") {
		t.Error("the note does not name the segment's file")
	}
	// The attribute is HTML-escaped (+ is &#43;).
	b, err := base64.StdEncoding.DecodeString(html.UnescapeString(urls[0]))
	if err != nil {
		t.Fatal(err)
	}
	mixed, err := pcm.DecodeWAV(b)
	if err != nil {
		t.Fatal(err)
	}
	if mixed.Rate != ReportMixedRate || mixed.Duration() != ReportMaxMixed {
		t.Errorf("embedded mix is %v at %d Hz, want %v at %d Hz", mixed.Duration(), mixed.Rate, ReportMaxMixed, ReportMixedRate)
	}
	if !strings.Contains(pageText, "holds its first 3m0s") {
		t.Error("the report does not say the mix was cut")
	}
	if len(page) > 12<<20 {
		t.Errorf("the report is %d MB; the budgets should keep it under 12", len(page)>>20)
	}
}

// embeddedWAVs returns the base64 text of each <audio> element's data:
// URL of WAV audio in page, in order: what the regular expression
// <audio[^>]*src="data:audio/wav;base64,([^"]*)" matches, found by
// scanning instead (on the budget test's 12 MB page the expression took
// 0.75 s of CPU, more than building the report).
func embeddedWAVs(page string) []string {
	const src = `src="data:audio/wav;base64,`
	var urls []string
	for {
		i := strings.Index(page, "<audio")
		if i < 0 {
			return urls
		}
		page = page[i+len("<audio"):]
		tag, _, _ := strings.Cut(page, ">")
		j := strings.Index(tag, src)
		if j < 0 {
			continue
		}
		value, _, ok := strings.Cut(tag[j+len(src):], `"`)
		if ok {
			urls = append(urls, value)
		}
	}
}

// TestEmbeddedWAVsMatchesTheExpression: embeddedWAVs finds what the
// regular expression it replaces finds, on small pages.
func TestEmbeddedWAVsMatchesTheExpression(t *testing.T) {
	re := regexp.MustCompile(`<audio[^>]*src="data:audio/wav;base64,([^"]*)"`)
	for _, page := range []string{
		``,
		`<audio controls src="data:audio/wav;base64,QUJD&#43;/=">`,
		`<p><audio src="x.wav"></audio><audio preload="none" src="data:audio/wav;base64,AA"></audio> <audio src="data:audio/wav;base64,BB"></audio>`,
		`<audio data-x="1" src="data:audio/wav;base64,CC`,
		`<audio><source src="data:audio/wav;base64,DD"></audio>`,
		`<audio title="a" src="data:audio/wav;base64,"><audio src="data:audio/mp3;base64,EE">`,
	} {
		var want []string
		for _, m := range re.FindAllStringSubmatch(page, -1) {
			want = append(want, m[1])
		}
		if got := embeddedWAVs(page); !slices.Equal(got, want) {
			t.Errorf("embeddedWAVs(%q) = %q, want %q", page, got, want)
		}
	}
}

func TestPeaks(t *testing.T) {
	c := pcm.Chunk{Rate: 1000, Samples: make([]int16, 1000)}
	c.Samples[10] = 32767
	c.Samples[20] = -32768
	segs := []Segment{Segment{Role: RoleAgent, Start: time.Second}.WithAudio(c), Segment{Role: RoleUser, Start: 0}.WithAudio(c)}
	p := peaks(segs, RoleAgent, 4*time.Second, 4)
	want := []int8{0, 0, -127, 127, 0, 0, 0, 0}
	for i := range want {
		if p[i] != want[i] {
			t.Fatalf("peaks = %v, want %v", p, want)
		}
	}
	if got := peaks(nil, RoleUser, 0, 3); len(got) != 6 {
		t.Errorf("peaks of an empty conversation has %d values, want 6 zeros", len(got))
	}
}

// TestHTMLReportQualityCard: the wire statistics, the parts and what was
// heard in the agent's audio reach the conversation-quality card.
func TestHTMLReportQualityCard(t *testing.T) {
	heard := &Hearing{Text: "a table for 70", Errors: WordErrors{Substitutions: 1, Words: 4}}
	res := &Result{Name: "q", Status: StatusPass, Success: true, Duration: 3 * time.Second,
		Transcript: []Message{
			{Turn: 1, Role: RoleUser, Text: "book", Start: 0, End: 400 * time.Millisecond},
			{Turn: 1, Role: RoleAgent, Text: "a table for 17", Start: time.Second, End: 2600 * time.Millisecond, Heard: heard},
		},
		Metrics: Metrics{
			Turns: []TurnMetrics{{Turn: 1, Latency: 600 * time.Millisecond, HasLatency: true,
				Parts: &Timings{STT: 100 * time.Millisecond, LLM: 350 * time.Millisecond}}},
			Parts:  PartMetrics{LLM: SummarizeDurations([]time.Duration{350 * time.Millisecond})},
			Speech: SpeechMetrics{WER: &WERMetrics{Rate: 0.25, Errors: heard.Errors, Messages: 1}},
			Wire: &WireStats{Adapter: "twilio", FramesIn: 120, FramesOut: 140, MarksReceived: 3, MarksEchoed: 2, Clears: 1,
				MarkDelay: SummarizeDurations([]time.Duration{600 * time.Millisecond})},
		}}
	page, err := res.HTMLReport()
	if err != nil {
		t.Fatal(err)
	}
	text := html.UnescapeString(string(page))
	for _, want := range []string{
		"<h3>Wire</h3>", "120 / 140", `<tr class="warn"><th>marks received / echoed</th><td>3 / 2</td>`,
		"clears / cancels</th><td>1 / 0", "STT 100 ms · LLM 350 ms", "model</th><td>p50 350 ms",
		"agent word error rate</th><td>25.0% (1 edits in 4 words, 1 messages)",
		"<td>a table for 17</td><td>a table for 70</td><td class=\"num\">25.0%</td>",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the report lacks %q", want)
		}
	}
}
