package gemini

import (
	"encoding/base64"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// fastSeeds are messages in and near the fast path's forms.
func fastSeeds() []string {
	audio := base64.StdEncoding.EncodeToString([]byte("\x00\x01\x02\x03\xfe\xff"))
	seeds := []string{
		`{"serverContent":{"turnComplete":true}}`,
		`{"serverContent":{"generationComplete":true}}`,
		`{"serverContent":{"interrupted":true}}`,
		`{"setupComplete":{}}`,
		`{"serverContent":{"modelTurn":{"parts":[{"inlineData":{"mimeType":"audio/pcm;rate=24000","data":"` + audio + `"}}]}}}`,
		`{"serverContent":{"modelTurn":{"parts":[{"inlineData":{"mimeType":"audio/pcm","data":""}}]}}}`,
		`{"serverContent":{"modelTurn":{"parts":[{"inlineData":{"mimeType":"audio/pcm;rate=24000","data":"AAA"}}]}}}`,
		`{"serverContent":{"modelTurn":{"parts":[{"inlineData":{"mimeType":"audio/pcm;rate=24000","data":"AA=A"}}]}}}`,
		`{"serverContent":{"modelTurn":{"parts":[{"inlineData":{"mimeType":"audio/pcm;rate=24000","data":"AA\nAA"}}]}}}`,
		`{"serverContent":{"modelTurn":{"parts":[{"inlineData":{"mimeType":"audio/pcm;rate=24000","data":"AA\\nAA"}}]}}}`,
		`{"serverContent":{"modelTurn":{"parts":[{"inlineData":{"mimeType":"audio/pcm;rate=24000","data":"_-_-"}}]}}}`,
		`{"serverContent":{"modelTurn":{"parts":[{"inlineData":{"mimeType":"audio/pcm;rate=24000","data":"AAAA"}}]}}} `,
		`{"serverContent":{"modelTurn":{"parts":[{"inlineData":{"mimeType":"audio/pcm;rate=24000","data":"AAAA"}}]}}}}`,
		`{"serverContent":{"modelTurn":{"parts":[{"inlineData":{"mimeType":"audio/pcm;rate=24000","data":"AAAA"}}]}}`,
		`{"serverContent":{"modelTurn":{"parts":[{"inlineData":{"mimeType":"audio/pcm;rate=24000","data":"AAAA}}]}}}`,
		`{"serverContent":{"modelTurn":{"parts":[{"inlineData":{"mimeType":"audio/p\u00e9m","data":"AAAA"}}]}}}`,
		`{"serverContent":{"modelTurn":{"parts":[{"inlineData":{"mimeType":"audio/p` + "\xff" + `m","data":"AAAA"}}]}}}`,
		`{"serverContent":{"modelTurn":{"parts":[{"inlineData":{"data":"AAAA","mimeType":"audio/pcm"}}]}}}`,
		`{"serverContent":{"outputTranscription":{"text":"Okay."}}}`,
		`{"serverContent":{"outputTranscription":{"text":""}}}`,
		`{"serverContent":{"outputTranscription":{"text":"caf\u00e9 \u2028 \U0001F600"}}}`,
		`{"serverContent":{"outputTranscription":{"text":"bad ` + "\xc3\x28" + ` utf8"}}}`,
		`{"serverContent":{"outputTranscription":{"text":"surrogate ` + "\xed\xa0\x80" + `"}}}`,
		`{"serverContent":{"outputTranscription":{"text":"tab` + "\t" + `raw"}}}`,
		`{"serverContent":{"outputTranscription":{"text":"esc \"q\""}}}`,
		`{"serverContent":{"outputTranscription":{"text":"a"}}}x`,
		`{"serverContent":{"outputTranscription":{"text":"a"}}`,
		`{"serverContent":{"outputTranscription":{"text":"a","finished":true}}}`,
		`{"serverContent":{"inputTranscription":{"text":"Hello"}}}`,
		`{"serverContent":{"inputTranscription":{"text":"Hello"}},"usageMetadata":{}}`,
		`{"serverContent":{"turnComplete":false}}`,
		`{"serverContent": {"turnComplete":true}}`,
	}
	return seeds
}

// TestFastPathAsEncodingJSON: whenever the decoder's fast path takes a
// message, it reads it exactly as encoding/json does (the same
// serverMessage), and it does take the service's frequent messages in
// their compact form (a fast path that never runs would pass the first
// check). Random texts and base64 around the forms are tried too.
func TestFastPathAsEncodingJSON(t *testing.T) {
	inputs := fastSeeds()
	r := rand.New(rand.NewPCG(1, 2))
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=\\\"\n\x01é\xff{}[],: "
	randString := func() string {
		var b strings.Builder
		for range r.IntN(12) {
			if r.IntN(3) == 0 {
				b.WriteByte(alphabet[r.IntN(len(alphabet))])
			} else {
				b.WriteByte("ABCDabcd0189+/"[r.IntN(14)])
			}
		}
		return b.String()
	}
	for range 3000 {
		inputs = append(inputs,
			`{"serverContent":{"modelTurn":{"parts":[{"inlineData":{"mimeType":"`+randString()+`","data":"`+randString()+`"}}]}}}`,
			`{"serverContent":{"outputTranscription":{"text":"`+randString()+`"}}}`,
			`{"serverContent":{"inputTranscription":{"text":"`+randString()+`"}}}`)
	}
	took := map[string]int{}
	for _, in := range inputs {
		var d decoder
		if !d.fast([]byte(in)) {
			continue
		}
		var want serverMessage
		if err := parseServerMessage([]byte(in), &want); err != nil {
			t.Errorf("%q: the fast path took a message encoding/json refuses (%v)", in, err)
			continue
		}
		if !reflect.DeepEqual(d.m, want) {
			t.Errorf("%q: fast path %+v, encoding/json %+v", in, d.m, want)
		}
		took[in[:min(len(in), 40)]]++
	}
	for _, in := range fastSeeds()[:5] {
		var d decoder
		if !d.fast([]byte(in)) {
			t.Errorf("the fast path does not take %q", in)
		}
	}
	for _, in := range []string{`{"serverContent":{"outputTranscription":{"text":"Okay."}}}`, `{"serverContent":{"inputTranscription":{"text":"Hello"}}}`} {
		var d decoder
		if !d.fast([]byte(in)) {
			t.Errorf("the fast path does not take %q", in)
		}
	}
	t.Logf("the fast path took %v", took)
}

// FuzzFastPath: the fast path never reads a message otherwise than
// encoding/json.
func FuzzFastPath(f *testing.F) {
	for _, s := range fastSeeds() {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var d decoder
		if !d.fast(data) {
			return
		}
		var want serverMessage
		if err := parseServerMessage(data, &want); err != nil {
			t.Fatalf("%q: the fast path took a message encoding/json refuses (%v)", data, err)
		}
		if !reflect.DeepEqual(d.m, want) {
			t.Fatalf("%q: fast path %+v, encoding/json %+v", data, d.m, want)
		}
	})
}
