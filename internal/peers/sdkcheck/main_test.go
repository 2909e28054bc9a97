package sdkcheck_test

import (
	"flag"
	"os"
	"runtime"
	"strconv"
	"testing"
)

// defaultParallel is how many of the package's tests run at once when the
// command line does not say (-parallel's own default is GOMAXPROCS, 2 on
// the 2-core machines this suite is measured on): the two browser tests
// and one Node script. The tests spend most of their time waiting on
// audio in real time, not on CPU, and with two of them at a time the
// package held a go test slot for the sum of the five tests' times split
// two ways (LayerCode 21 s, ElevenLabs 17 s, Realtime 9 s, the OpenAI SDK
// 4 s, TextOnly 2 s on a quiet machine); with three, about as long as the
// longest. Both browsers already ran at once at -parallel 2 (whenever the
// scheduler started them together); all five at once (-parallel 5) made
// the browsers' real-time audio come garbled more often under load
// (BENCHMARKS.md, suite-sdk); three is measured there too (suite-ext).
const defaultParallel = 3

func TestMain(m *testing.M) {
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set && runtime.GOMAXPROCS(0) < defaultParallel {
		if err := flag.Set("test.parallel", strconv.Itoa(defaultParallel)); err != nil {
			panic(err)
		}
	}
	os.Exit(m.Run())
}
