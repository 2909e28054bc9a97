package readmecaps

import (
	"strings"
	"testing"

	"github.com/voicetest-go/voicetest/voicetest"
)

// The check on the module's real README, broken in copies: each break must
// give one message naming the row, the column, the README's cell and the
// code's value.

// twiliophoneCaps is what twiliophone's Conn returns (twiliophone.go).
func twiliophoneCaps() voicetest.Capabilities {
	f := voicetest.AudioFormat{Encoding: "mulaw", Rate: 8000}
	return voicetest.Capabilities{Adapter: "twiliophone", Audio: true, NativeVAD: true, DTMF: true, InputFormat: f, OutputFormat: f}
}

// twiliophoneSource stands for twiliophone's source: the names its row
// writes in backticks.
const twiliophoneSource = `<Play digits="%s"/> // SendDTMF plays the digits with <Play digits>`

const twiliophoneRow = "| `twiliophone` | µ-law 8 kHz → µ-law 8 kHz (a phone call) | — | — | ✓ | — | ✓ `<Play digits>` | — | — |"

func readme(t *testing.T) string {
	t.Helper()
	b, err := readREADME()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), twiliophoneRow) {
		t.Fatalf("README.md has no line %q; update this test's copy of the row", twiliophoneRow)
	}
	return string(b)
}

func TestCheckAgreeing(t *testing.T) {
	if p := checkREADMECaps([]byte(readme(t)), twiliophoneSource, "`twiliophone`", twiliophoneCaps(), nil); len(p) != 0 {
		t.Errorf("the README's row and the code agree, yet: %q", p)
	}
}

func TestCheckBrokenRow(t *testing.T) {
	for _, tc := range []struct {
		name, from, to string
		caps           func(*voicetest.Capabilities)
		want           string
	}{
		{name: "end of speech", from: "| — | — | ✓ | — | ✓ `<Play", to: "| — | — | — | — | ✓ `<Play",
			want: "row `twiliophone`, column \"detects end of speech\": README says \"—\", but Capabilities() returns true"},
		{name: "DTMF", from: "✓ `<Play digits>`", to: "—",
			want: "column \"DTMF\": README says \"—\", but Capabilities() returns true"},
		{name: "mechanism", from: "✓ `<Play digits>`", to: "✓ `<Send digits>`",
			want: "column \"DTMF\": README says \"✓ `<Send digits>`\", but \"<Send digits>\" appears nowhere in the package's source"},
		{name: "rate", from: "µ-law 8 kHz → µ-law 8 kHz (a phone call)", to: "µ-law 8 kHz → µ-law 16 kHz (a phone call)",
			want: "column \"wire audio in → out\": README says \"µ-law 8 kHz → µ-law 16 kHz (a phone call)\", but Capabilities() returns mulaw 8000 Hz → mulaw 8000 Hz"},
		{name: "code changed", caps: func(c *voicetest.Capabilities) { c.Text = true },
			want: "column \"text\": README says \"—\", but Capabilities() returns true"},
		{name: "missing row", from: twiliophoneRow + "\n", to: "",
			want: "README.md's capabilities table has no row `twiliophone`"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			text := readme(t)
			if tc.from != "" {
				row := strings.Replace(twiliophoneRow+"\n", tc.from, tc.to, 1)
				text = strings.Replace(text, twiliophoneRow+"\n", row, 1)
			}
			caps := twiliophoneCaps()
			if tc.caps != nil {
				tc.caps(&caps)
			}
			p := checkREADMECaps([]byte(text), twiliophoneSource, "`twiliophone`", caps, nil)
			if len(p) != 1 || !strings.Contains(p[0], tc.want) {
				t.Fatalf("got %d problems %q, want one containing %q", len(p), p, tc.want)
			}
			t.Logf("red as wanted: %s", p[0])
		})
	}
}

func TestCheckConditions(t *testing.T) {
	text := []byte(readme(t))
	// pipecat with the protobuf serializer: transcripts, end of turn,
	// text, DTMF and tool events only with RTVI.
	caps := voicetest.Capabilities{Adapter: "pipecat", Audio: true, NativeVAD: true, NativeInterrupt: true,
		InputFormat: voicetest.AudioFormat{Encoding: "pcm16", Rate: 16000}, OutputFormat: voicetest.AudioFormat{Encoding: "pcm16", Rate: 24000}}
	src := "InterruptionFrame"
	if p := checkREADMECaps(text, src, "`pipecat`, protobuf", caps, nil); len(p) != 0 {
		t.Errorf("without RTVI: %q", p)
	}
	if p := checkREADMECaps(text, src, "`pipecat`, protobuf", caps, []string{"RTVI"}); len(p) != 5 {
		t.Errorf("capabilities without RTVI checked as if made with RTVI: %d problems %q, want 5 (one per \"with RTVI\" column)", len(p), p)
	}
	if p := checkREADMECaps(text, src, "`pipecat`, protobuf", caps, []string{"RTVl"}); len(p) != 1 || !strings.Contains(p[0], `condition "RTVl", which the row does not mention`) {
		t.Errorf("a condition the row does not name: %q", p)
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct{ name, text, want string }{
		{"no table", "# README\n", "has no capabilities table"},
		{"unknown column", capsTableHeader + " agent transcripts | colour |\n|---|---|---|---|\n", `column "colour" is not one this check knows`},
		{"short row", capsTableHeader + " text |\n|---|---|---|\n| `x` | PCM16 8 kHz → 8 kHz |\n", "2 cells, the header has 3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := checkREADMECaps([]byte(tc.text), "", "`x`", voicetest.Capabilities{}, nil)
			if len(p) != 1 || !strings.Contains(p[0], tc.want) {
				t.Errorf("got %q, want one problem containing %q", p, tc.want)
			}
		})
	}
}
